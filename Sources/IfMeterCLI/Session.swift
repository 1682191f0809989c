import IfMeterPresentation
import IfMeterCore
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// Where `ifmeter` looks for the daemon's socket and estimate log: the given path, else
/// `IFMETER_SOCKET`, else where ifmeterd itself would put it for this user
/// (``Paths/resolve(config:socket:stateDirectory:logDirectory:environment:uid:)``), else the
/// system daemon's `/run/ifmeter` and `/var/log/ifmeter`. The first that exists wins.
public struct Locations: Sendable {
    public var environment: [String: String]
    public var uid: uid_t

    public init(environment: [String: String], uid: uid_t) {
        self.environment = environment
        self.uid = uid
    }

    private var system: Paths { Paths.resolve(environment: [:], uid: 0) }
    private var own: Paths { Paths.resolve(environment: environment, uid: uid) }

    public func socketCandidates(flag: String?) -> [String] {
        if let flag { return [flag] }
        if let variable = environment["IFMETER_SOCKET"], !variable.isEmpty { return [variable] }
        return unique([own.socket, system.socket])
    }

    /// Where `notify` remembers the events it handled: its state directory's `notify.state`.
    /// Root's own state directory is the daemon's; root's notify keeps to one of its own, the
    /// one the example unit's `StateDirectory=` names.
    public var notifyState: String {
        uid == 0 && environment["STATE_DIRECTORY"] == nil ? Self.rootNotifyState : own.stateDirectory + "/notify.state"
    }

    /// Root's notify state outside a systemd unit.
    public static let rootNotifyState = "/var/lib/ifmeter-notify/notify.state"

    public func logDirectoryCandidates(flag: String?) -> [String] {
        if let flag { return [flag] }
        return unique([own.logDirectory, system.logDirectory])
    }

    private func unique(_ paths: [String]) -> [String] {
        var seen = Set<String>()
        return paths.filter { seen.insert($0).inserted }
    }
}

func exists(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0
}

/// A connection to a ready daemon, with what every view needs from its `status`: the zone its
/// buckets are cut in, and now.
public final class Session {
    public let client: DaemonClient
    public let status: StatusResult
    public let time: TimeText
    public let now: Double

    /// Connects and checks that the daemon speaks our protocol and is ready.
    public convenience init(socketCandidates candidates: [String]) throws(CLIError) {
        let client = try Self.connect(candidates)
        try self.init(client: client, status: try client.call(StatusRequest(), reading: StatusResult.self))
    }

    private init(client: DaemonClient, status: StatusResult) throws(CLIError) {
        guard status.ready else {
            throw CLIError(.starting, "ifmeterd (pid \(status.pid)) is starting: loading its database and taking its first sample; try again in a moment")
        }
        self.client = client
        self.status = status
        time = TimeText(utc: status.timeZone == "utc")
        now = Self.wallClock()
    }

    /// Connects and asks `query` with the daemon's status in the same answer: a whole view in
    /// one round trip.
    static func query(socketCandidates candidates: [String], _ query: QueryRequest) throws(CLIError) -> (Session, QueryResult) {
        var session: Session?
        let result = try self.query(socketCandidates: candidates, query, session: &session) { _, result, table in
            result.usage.append(table)
        }
        return (session!, result)
    }

    /// ``query(socketCandidates:_:)`` with each table handed to `table` as it is read, with the
    /// session (made from the answer's status, which comes before the tables) and what was read
    /// before it; the tables are not kept.
    static func query(socketCandidates candidates: [String], _ query: QueryRequest, session: inout Session?,
                      table: (Session, inout QueryResult, UsageResult) throws(CLIError) -> Void) throws(CLIError) -> QueryResult {
        let client = try connect(candidates)
        var request = query
        request.include = (request.include ?? []) + [QueryPart.status.rawValue]
        var made: Session?
        func ready(_ result: QueryResult) throws(CLIError) -> Session {
            if let made { return made }
            guard let status = result.status else {
                throw CLIError(.protocolMismatch, "ifmeterd answered a query without its status; are ifmeter and ifmeterd the same version?")
            }
            let new = try Session(client: client, status: status)
            made = new
            return new
        }
        let result = try client.call(request) { reader in
            try QueryResult.read(&reader) { result, read in try table(try ready(result), &result, read) }
        }
        session = try ready(result)
        return result
    }

    private static func connect(_ candidates: [String]) throws(CLIError) -> DaemonClient {
        guard let path = candidates.first(where: exists) else {
            throw CLIError(.unavailable, DaemonClient.notRunning(candidates.joined(separator: " or ")))
        }
        return try DaemonClient(path: path)
    }

    static func wallClock() -> Double {
        var wall = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        return Double(wall.tv_sec) + Double(wall.tv_nsec) / 1e9
    }

    /// `--from`/`--to` for a request, read in the daemon's zone.
    func timeArgument(_ text: String?, option: String) throws(CLIError) -> TimeArgument? {
        try time.argument(text, option: option).map(TimeArgument.init(seconds:))
    }

    /// Every interface ifmeter knows, present ones first.
    func interfaces() throws(CLIError) -> InterfacesResult {
        try client.call(InterfacesRequest(), reading: InterfacesResult.self)
    }

    /// The names a view is about: those given with `-i`, the members of `--class`, or by
    /// default every interface but loopback — physical, Wi-Fi and cellular links first, then
    /// other, tunnel and virtual ones, present before absent — leaving out, unless `--all`,
    /// virtual links that are down and never carried a byte (an idle `ifb0` is not news).
    func subjects(_ subjects: Subjects) throws(CLIError) -> [InterfaceResult] {
        if !subjects.interfaces.isEmpty {
            // The daemon takes each as a name or an alias (the one place aliases are resolved);
            // a merge's members are listed each.
            let answer = try client.call(QueryRequest(interfaces: subjects.interfaces, usage: [], include: [.interfaces]),
                                         reading: QueryResult.self)
            return answer.interfaces ?? []
        }
        let all = try interfaces().interfaces
        if let interfaceClass = subjects.interfaceClass {
            return all.filter { $0.class == interfaceClass }
        }
        return (subjects.all ? QuerySelection.all : .shown).pick(all)
    }
}

extension QueryRequest {
    /// A `query` about what a view's `-i`, `--class` and `-a` choose: the names given, the
    /// class's members (or, with `sum`, the class as one subject), or the views' default choice.
    static func query(for subjects: Subjects, sum: Bool = false, usage: [UsageSpec], include: [QueryPart] = []) -> QueryRequest {
        var request = QueryRequest()
        if !subjects.interfaces.isEmpty {
            request.interfaces = subjects.interfaces
            request.sum = subjects.merged ? true : nil
        } else if let interfaceClass = subjects.interfaceClass {
            request.class = interfaceClass
            request.sum = sum ? true : nil
        } else {
            request.select = (subjects.all ? QuerySelection.all : .shown).rawValue
        }
        request.usage = usage
        request.include = include.isEmpty ? nil : include.map(\.rawValue)
        return request
    }
}
