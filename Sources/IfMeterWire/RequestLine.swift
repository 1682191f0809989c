import IfMeterCore
import IfMeterJSON

/// The protocol version this build speaks.
public let protocolVersion = 1

/// A request's `id`, echoed in its response: a number or a string, as the client chose.
public enum RequestID: Hashable, Sendable {
    case number(Int64)
    case string(String)
}

/// A point in time in a request: RFC 3339 text or Unix seconds.
public struct TimeArgument: Hashable, Sendable {
    public var seconds: Double

    /// The times a request may name: 1970-01-01 to 9999-12-31 in Unix seconds. Anything else
    /// (1e30, -1, NaN from a hand-built parser) is refused where it enters, so no conversion
    /// further in can trap on it.
    public static let acceptedSeconds: ClosedRange<Double> = 0...253_402_300_799

    /// The whole seconds at or below this time; in range by construction once validated.
    public var floorSeconds: Int64 { Int64(seconds.rounded(.down)) }
    /// The whole seconds at or above this time.
    public var ceilingSeconds: Int64 { Int64(seconds.rounded(.up)) }

    public init(seconds: Double) { self.seconds = seconds }
}

/// One request line, as read or as a client writes it: the envelope every command shares, and
/// every other member as its type. Its command may be unknown or missing and its values not
/// yet checked for what they mean, so that a request with a bad member can still be answered
/// under its own `id`; the command's request type (``CommandRequestType/init(_:)``) takes it on.
public struct RequestLine: Hashable, Sendable {
    public var v: Int?
    public var id: RequestID?
    public var cmd: String?
    /// Every other member read, by its place in ``RequestMembers/table``.
    var members: [MemberValue?]

    public init(v: Int? = protocolVersion, id: RequestID? = nil, cmd: String?) {
        (self.v, self.id, self.cmd) = (v, id, cmd)
        members = Array(repeating: nil, count: RequestMembers.table.members.count)
    }

    /// The line a client sends for `request`.
    public init(_ request: some CommandRequestType, id: RequestID? = nil) {
        self.init(id: id, cmd: type(of: request).command.rawValue)
        let places = RequestMembers.places(of: type(of: request).command)
        for (place, value) in zip(places, request.memberValues) { members[place] = value }
    }

    /// The command it names, if it names one this build knows.
    public var command: Command? { cmd.flatMap(Command.init(rawValue:)) }

    /// Parses one line. A line that is not a JSON object, or whose members have the wrong
    /// types, is a ``WireError`` carrying whatever `id` could be read; a member out of its
    /// range is `bad_request` under the request's own `id`.
    public static func parse(_ line: some Collection<UInt8>) -> Result<RequestLine, WireError> {
        RequestReader.read(line).flatMap { request in
            if let problem = RequestMembers.rangeProblem(request.members) {
                return .failure(WireError(.badRequest, problem, id: request.id))
            }
            return .success(request)
        }
    }

    /// How many events one `events` request may ask for, and rows per subject a `query` table.
    public static let acceptedLimit: ClosedRange<Int> = 1...100_000
    /// The largest `offset`: past any number of subjects a daemon holds.
    public static let maximumOffset = 100_000_000
}

extension RequestID: JSONWritable, JSONReadable {
    public func write(to w: inout JSONWriter) {
        switch self {
        case .number(let number): w.number(number)
        case .string(let string): w.string(string)
        }
    }

    public init(reading r: inout JSONReader) throws {
        self = try r.peek() == UInt8(ascii: "\"") ? .string(try r.readString()) : .number(try r.readInt64())
    }
}

/// A request line as a client writes it, keys in sorted order, without `Codable`.
extension RequestLine: JSONWritable {
    public func write(to w: inout JSONWriter) {
        let table = RequestMembers.table
        Self.write(cmd: cmd, id: id, v: v, to: &w,
                   members: table.sorted.lazy.compactMap { place in members[place].map { (table.members[place], $0) } })
    }

    /// The envelope and `members` (in key order) as one object, keys in sorted order.
    static func write(cmd: String?, id: RequestID?, v: Int?, to w: inout JSONWriter,
                      members: some Sequence<(member: Member, value: MemberValue)>) {
        // The envelope's keys sort among the members' (`class` < `cmd` < `dry_run`; `utc` < `v`).
        var envelope: [(key: String, write: (inout JSONWriter) -> Void)] = []
        if let cmd { envelope.append(("cmd", { $0.string(cmd) })) }
        if let id { envelope.append(("id", { id.write(to: &$0) })) }
        if let v { envelope.append(("v", { $0.number(v) })) }
        var next = 0
        w.beginObject()
        for (member, value) in members {
            while next < envelope.count && envelope[next].key < member.key {
                w.key(text: envelope[next].key)
                envelope[next].write(&w)
                next += 1
            }
            w.key(text: member.key)
            value.write(to: &w, as: member.kind)
        }
        for (key, write) in envelope[next...] {
            w.key(text: key)
            write(&w)
        }
        w.endObject()
    }
}

extension CommandRequestType {
    /// The line a client sends for this request: the bytes of `RequestLine(self, id:)`, from
    /// this command's members alone. The table of every command's members is not made: the
    /// generic metadata of twelve request types is a quarter of a millisecond of each start.
    public func lineBytes(id: RequestID?) -> [UInt8] {
        let (members, values) = (Self.members, memberValues)
        var w = JSONWriter()
        RequestLine.write(cmd: Self.command.rawValue, id: id, v: protocolVersion, to: &w,
                          members: members.indices.sorted { members[$0].key < members[$1].key }.lazy
                            .compactMap { place in values[place].map { (members[place], $0) } })
        return w.bytes
    }
}

extension MemberValue {
    func write(to w: inout JSONWriter, as kind: MemberKind) {
        switch self {
        case .string(let value): w.string(value)
        case .bool(let value): w.bool(value)
        case .time(let value): w.number(value.seconds)
        case .integer(let value): w.number(value)
        case .strings(let values): w.strings(values)
        case .objects(let entries):
            guard case .objects(let table) = kind else { preconditionFailure("objects for a \(kind) member") }
            w.beginArray()
            for entry in entries {
                w.beginObject()
                for place in table.sorted {
                    guard let value = entry[place] else { continue }
                    w.key(text: table.members[place].key)
                    value.write(to: &w, as: table.members[place].kind)
                }
                w.endObject()
            }
            w.endArray()
        }
    }
}
