import IfMeterCore

/// A request as its command takes it: every member checked and typed once, where it enters,
/// so no handler reads a string a peer sent (docs/PROTOCOL.md lists the members).
public enum CommandRequest: Hashable, Sendable {
    case status, interfaces, sample, watch, reload, plans
    case usage(UsageRequest)
    case query(QueryRequest)
    case events(EventsRequest)
    case metrics(MetricsRequest)
    case importHistory(ImportRequest)
    /// `forget`: the name whose history goes.
    case forget(String)

    /// The command a request names, checked before anything else: the protocol version, then
    /// the command.
    public static func command(of request: Request) throws(WireError) -> Command {
        guard let version = request.v else {
            throw WireError(.badRequest, "field \"v\" is missing (this ifmeterd speaks protocol \(protocolVersion))")
        }
        guard version == protocolVersion else {
            throw WireError(.unsupportedVersion, "protocol version \(version) is not supported; this ifmeterd speaks \(protocolVersion)")
        }
        guard let name = request.cmd else { throw WireError(.badRequest, "field \"cmd\" is missing") }
        guard let command = Command(rawValue: name) else {
            throw WireError(.unknownCommand, "unknown command \"\(name)\"; known: \(known(Command.allCases))")
        }
        return command
    }

    /// `request`'s members as `command` takes them; the first that is wrong is the error.
    public init(_ command: Command, _ request: Request) throws(WireError) {
        switch command {
        case .status: self = .status
        case .interfaces: self = .interfaces
        case .sample: self = .sample
        case .watch: self = .watch
        case .reload: self = .reload
        case .plans: self = .plans
        case .usage: self = .usage(try UsageRequest(request))
        case .query: self = .query(try QueryRequest(request))
        case .events: self = .events(try EventsRequest(request))
        case .metrics: self = .metrics(try MetricsRequest(request))
        case .importHistory: self = .importHistory(try ImportRequest(request))
        case .forget: self = .forget(try required(request.interface, "interface"))
        }
    }
}

/// One table asked for, checked: a period, a range of bucket starts, a projection or not.
public struct UsageTable: Hashable, Sendable {
    public var period: UsagePeriod
    public var from: Int64?
    public var to: Int64?
    public var projection: Bool
    /// Each subject's most recent rows only, or its busiest (rx + tx) first.
    public var last: Int?
    public var top: Int?

    public init(period: UsagePeriod, from: Int64? = nil, to: Int64? = nil, projection: Bool = false, last: Int? = nil,
                top: Int? = nil) {
        (self.period, self.from, self.to, self.projection, self.last, self.top) = (period, from, to, projection, last, top)
    }

    init(period name: String?, from: TimeArgument?, to: TimeArgument?, projection: Bool?, last: Int? = nil,
         top: Int? = nil) throws(WireError) {
        guard let name, !name.isEmpty else { throw WireError(.badRequest, "field \"period\" is missing") }
        guard let period = UsagePeriod(rawValue: name) else {
            throw WireError(.badRequest, "unknown period \"\(name)\"; known: \(known(UsagePeriod.allCases))")
        }
        guard last == nil || top == nil else { throw WireError(.badRequest, "give at most one of \"last\" and \"top\"") }
        self.init(period: period, from: from?.floorSeconds, to: to?.ceilingSeconds, projection: projection ?? false,
                  last: last, top: top)
    }
}

/// `usage`: one subject, one table.
public struct UsageRequest: Hashable, Sendable {
    public var subject: UsageSubject
    public var table: UsageTable

    init(_ request: Request) throws(WireError) {
        switch (request.interface, request.class) {
        case (let name?, nil): subject = .interface(name)
        case (nil, let className?): subject = .interfaceClass(try interfaceClass(className))
        default: throw WireError(.badRequest, "give exactly one of \"interface\" and \"class\"")
        }
        table = try UsageTable(period: request.period, from: request.from, to: request.to, projection: request.projection)
    }
}

/// `query`: the subjects, the tables for each, and what else to answer.
public struct QueryRequest: Hashable, Sendable {
    public enum Subjects: Hashable, Sendable {
        /// These names, in this order.
        case names([String])
        /// A class's members, or (`sum`) the class as one subject.
        case interfaceClass(InterfaceClass, sum: Bool)
        case selection(QuerySelection)
    }

    public var subjects: Subjects
    public var tables: [UsageTable]
    public var parts: Set<QueryPart>
    /// `offset` and `limit`: which of the chosen subjects are answered; nil for all of them.
    public var window: SubjectWindow?

    init(_ request: Request) throws(WireError) {
        var parts = Set<QueryPart>()
        for name in request.include ?? [] {
            guard let part = QueryPart(rawValue: name) else {
                throw WireError(.badRequest, "unknown part \"\(name)\" in \"include\"; known: \(known(QueryPart.allCases))")
            }
            parts.insert(part)
        }
        self.parts = parts
        if request.offset != nil || request.limit != nil {
            // Checked again here: a request built in-process (the page's) never passed the reader.
            if let problem = request.rangeProblem { throw WireError(.badRequest, problem) }
            window = SubjectWindow(offset: request.offset ?? 0, limit: request.limit ?? Request.acceptedLimit.upperBound)
        }
        tables = try (request.usage ?? []).map { spec throws(WireError) in
            try UsageTable(period: spec.period, from: spec.from, to: spec.to, projection: spec.projection, last: spec.last,
                           top: spec.top)
        }
        switch (request.interfaces, request.class) {
        case (let names?, nil): subjects = .names(names)
        case (nil, let className?): subjects = .interfaceClass(try interfaceClass(className), sum: request.sum == true)
        case (nil, nil):
            guard let name = request.select else {
                subjects = .selection(.shown)
                break
            }
            guard let selection = QuerySelection(rawValue: name) else {
                throw WireError(.badRequest, "unknown selection \"\(name)\"; known: \(known(QuerySelection.allCases))")
            }
            subjects = .selection(selection)
        default: throw WireError(.badRequest, "give at most one of \"interfaces\" and \"class\"")
        }
    }
}

/// A page of a query's subjects: `limit` of them from `offset`, in the order chosen.
public struct SubjectWindow: Hashable, Sendable {
    public var offset: Int
    public var limit: Int

    public init(offset: Int, limit: Int) {
        (self.offset, self.limit) = (offset, limit)
    }

    /// The part of `items` (all the chosen subjects) it answers.
    public func apply<T>(_ items: [T]) -> [T] {
        Array(items.dropFirst(offset).prefix(limit))
    }
}

/// `events`: a range, optionally one kind or one interface, at most `limit`.
public struct EventsRequest: Hashable, Sendable {
    public var from: Double?
    public var to: Double?
    public var kind: CounterEvent.Kind?
    public var interface: String?
    public var limit: Int

    init(_ request: Request) throws(WireError) {
        if let name = request.kind {
            guard let kind = CounterEvent.Kind(rawValue: name) else {
                throw WireError(.badRequest, "unknown event kind \"\(name)\"; known: \(known(CounterEvent.Kind.allCases))")
            }
            self.kind = kind
        }
        (from, to, interface, limit) = (request.from?.seconds, request.to?.seconds, request.interface, request.limit ?? 1000)
    }
}

/// `metrics`: which exposition format, and whether with the daemon's `process_*` metrics.
public struct MetricsRequest: Hashable, Sendable {
    public enum Format: String, Hashable, Sendable, CaseIterable {
        /// Text 0.0.4, the default.
        case prometheus
        case openmetrics
    }

    public var format: Format
    public var process: Bool

    public init(format: Format = .prometheus, process: Bool = true) {
        (self.format, self.process) = (format, process)
    }

    init(_ request: Request) throws(WireError) {
        let format = try request.format.map { name throws(WireError) -> Format in
            guard let format = Format(rawValue: name) else {
                throw WireError(.badRequest, "unknown format \"\(name)\"; known: \(known(Format.allCases))")
            }
            return format
        }
        self.init(format: format ?? .prometheus, process: request.process ?? true)
    }
}

/// `import`: another meter's database, by absolute path.
public struct ImportRequest: Hashable, Sendable {
    /// The only source there is: a vnStat 2.x database.
    public var path: String
    /// vnStat ran with `UseUTC 1`.
    public var utc: Bool
    public var dryRun: Bool

    init(_ request: Request) throws(WireError) {
        guard request.source == "vnstat" else {
            throw WireError(.badRequest, "unknown source \"\(request.source ?? "")\"; known: vnstat")
        }
        let path = try required(request.path, "path")
        guard path.hasPrefix("/") else { throw WireError(.badRequest, "field \"path\" must be absolute, got \"\(path)\"") }
        (self.path, utc, dryRun) = (path, request.utc ?? false, request.dryRun ?? false)
    }
}

/// The one "unknown X; known: …" list.
func known<Name: RawRepresentable>(_ names: some Sequence<Name>) -> String where Name.RawValue == String {
    names.map(\.rawValue).joined(separator: ", ")
}

func required(_ value: String?, _ field: String) throws(WireError) -> String {
    guard let value, !value.isEmpty else { throw WireError(.badRequest, "field \"\(field)\" is missing") }
    return value
}

func interfaceClass(_ name: String) throws(WireError) -> InterfaceClass {
    guard let interfaceClass = InterfaceClass(rawValue: name) else {
        throw WireError(.badRequest, "unknown class \"\(name)\"; known: \(known(InterfaceClass.allCases))")
    }
    return interfaceClass
}
