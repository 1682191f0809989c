import IfMeterCore

/// A request as the daemon dispatches it: one case per command, each with its own type's
/// members, so every place that answers commands is one exhaustive switch.
public enum CommandRequest: Hashable, Sendable {
    case status(StatusRequest)
    case interfaces(InterfacesRequest)
    case usage(UsageRequest)
    case events(EventsRequest)
    case sample(SampleRequest)
    case watch(WatchRequest)
    case query(QueryRequest)
    case plans(PlansRequest)
    case percentile(PercentileRequest)
    case metrics(MetricsRequest)
    case reload(ReloadRequest)
    case forget(ForgetRequest)
    case importHistory(ImportRequest)
    case alias(AliasRequest)

    /// The command a request names, checked before anything else: the protocol version, then
    /// the command.
    public static func command(of line: RequestLine) throws(WireError) -> Command {
        guard let version = line.v else {
            throw WireError(.badRequest, "field \"v\" is missing (this ifmeterd speaks protocol \(protocolVersion))")
        }
        guard version == protocolVersion else {
            throw WireError(.unsupportedVersion, "protocol version \(version) is not supported; this ifmeterd speaks \(protocolVersion)")
        }
        guard let name = line.cmd else { throw WireError(.badRequest, "field \"cmd\" is missing") }
        guard let command = Command(rawValue: name) else {
            throw WireError(.unknownCommand, "unknown command \"\(name)\"; known: \(known(Command.allCases))")
        }
        return command
    }

    /// `line` taken as `command`'s request.
    public init(_ command: Command, _ line: RequestLine) {
        switch command {
        case .status: self = .status(StatusRequest(line))
        case .interfaces: self = .interfaces(InterfacesRequest(line))
        case .usage: self = .usage(UsageRequest(line))
        case .events: self = .events(EventsRequest(line))
        case .sample: self = .sample(SampleRequest(line))
        case .watch: self = .watch(WatchRequest(line))
        case .query: self = .query(QueryRequest(line))
        case .plans: self = .plans(PlansRequest(line))
        case .percentile: self = .percentile(PercentileRequest(line))
        case .metrics: self = .metrics(MetricsRequest(line))
        case .reload: self = .reload(ReloadRequest(line))
        case .forget: self = .forget(ForgetRequest(line))
        case .importHistory: self = .importHistory(ImportRequest(line))
        case .alias: self = .alias(AliasRequest(line))
        }
    }
}

/// `status`: the daemon's own facts and the service's summary.
public struct StatusRequest: CommandRequestType {
    public static let command = Command.status
    public static let policy = CommandPolicy()
    public static let fields: [RequestField<Self>] = []
    public init() {}
}

/// `interfaces`: every name's figures, built off the loop.
public struct InterfacesRequest: CommandRequestType {
    public static let command = Command.interfaces
    public static let policy = CommandPolicy(largeAnswer: true, offLoop: true)
    public static let fields: [RequestField<Self>] = []
    public init() {}
}

/// `sample`: answered after a fresh sample.
public struct SampleRequest: CommandRequestType {
    public static let command = Command.sample
    public static let policy = CommandPolicy()
    public static let fields: [RequestField<Self>] = []
    public init() {}
}

/// `watch`: a stream of rates and events on this connection.
public struct WatchRequest: CommandRequestType {
    public static let command = Command.watch
    public static let policy = CommandPolicy()
    public static let fields: [RequestField<Self>] = []
    public init() {}
}

/// `plans`: every data plan's figures now.
public struct PlansRequest: CommandRequestType {
    public static let command = Command.plans
    public static let policy = CommandPolicy(largeAnswer: true)
    public static let fields: [RequestField<Self>] = []
    public init() {}
}

/// `reload`: the configuration read again (admin).
public struct ReloadRequest: CommandRequestType {
    public static let command = Command.reload
    public static let policy = CommandPolicy(adminOnly: true)
    public static let fields: [RequestField<Self>] = []
    public init() {}
}

/// `events`: a range, optionally one kind or one interface, at most `limit`.
public struct EventsRequest: CommandRequestType {
    public static let command = Command.events
    public static let policy = CommandPolicy(largeAnswer: true, offLoop: true)
    public static let fields: [RequestField<Self>] = [
        .time("from", { $0.from }, { $0.from = $1 }),
        .time("to", { $0.to }, { $0.to = $1 }),
        .string("kind", { $0.kind }, { $0.kind = $1 }),
        .string("interface", { $0.interface }, { $0.interface = $1 }),
        .integer("limit", { $0.limit }, { $0.limit = $1 }, range: RequestLine.acceptedLimit),
    ]

    public var from: TimeArgument?
    public var to: TimeArgument?
    /// A ``CounterEvent/Kind``'s name.
    public var kind: String?
    public var interface: String?
    /// At most this many, ``defaultLimit`` when absent.
    public var limit: Int?

    public static let defaultLimit = 1000

    public init() {}

    public init(interface: String? = nil, from: TimeArgument? = nil, to: TimeArgument? = nil, kind: CounterEvent.Kind? = nil,
                limit: Int? = nil) {
        (self.interface, self.from, self.to, self.kind, self.limit) = (interface, from, to, kind?.rawValue, limit)
    }

    /// The kind asked for, if one was, or what is wrong with it.
    public func checkedKind() throws(WireError) -> CounterEvent.Kind? {
        try kind.map { name throws(WireError) in try known(name, CounterEvent.Kind.self, "event kind") }
    }
}

/// `metrics`: which exposition format, and whether with the daemon's `process_*` metrics.
public struct MetricsRequest: CommandRequestType {
    public static let command = Command.metrics
    public static let policy = CommandPolicy(largeAnswer: true)
    public static let fields: [RequestField<Self>] = [
        .string("format", { $0.format }, { $0.format = $1 }),
        .bool("process", { $0.process }, { $0.process = $1 }),
    ]

    public enum Format: String, Hashable, Sendable, CaseIterable {
        /// Text 0.0.4, the default.
        case prometheus
        case openmetrics
    }

    /// The exposition asked for, checked.
    public struct Checked: Hashable, Sendable {
        public var format: Format
        public var process: Bool

        public init(format: Format = .prometheus, process: Bool = true) {
            (self.format, self.process) = (format, process)
        }
    }

    /// A ``Format``'s name; `prometheus` when absent.
    public var format: String?
    /// Whether with the `process_*` metrics; true when absent.
    public var process: Bool?

    public init() {}

    public init(format: Format?, process: Bool?) {
        (self.format, self.process) = (format?.rawValue, process)
    }

    public func checked() throws(WireError) -> Checked {
        Checked(format: try format.map { name throws(WireError) in try known(name, Format.self, "format") } ?? .prometheus,
                process: process ?? true)
    }
}

/// `import`: another meter's database, by absolute path (admin).
public struct ImportRequest: CommandRequestType {
    public static let command = Command.importHistory
    public static let policy = CommandPolicy(adminOnly: true, largeAnswer: true, offLoop: true)
    public static let fields: [RequestField<Self>] = [
        .string("source", { $0.source }, { $0.source = $1 }),
        .string("path", { $0.path }, { $0.path = $1 }),
        .bool("dry_run", { $0.dryRun }, { $0.dryRun = $1 }),
        .bool("utc", { $0.utc }, { $0.utc = $1 }),
    ]

    /// The import asked for, checked: the only source there is, a vnStat 2.x database.
    public struct Checked: Hashable, Sendable {
        public var path: String
        /// vnStat ran with `UseUTC 1`.
        public var utc: Bool
        public var dryRun: Bool
    }

    /// `vnstat`.
    public var source: String?
    /// The database file (absolute).
    public var path: String?
    /// Report what would be imported, change nothing.
    public var dryRun: Bool?
    /// vnStat ran with `UseUTC 1` (its dates are UTC, not local time).
    public var utc: Bool?

    public init() {}

    /// A vnStat database's import.
    public init(vnStatPath path: String, dryRun: Bool, utc: Bool) {
        (source, self.path, self.dryRun, self.utc) = ("vnstat", path, dryRun, utc)
    }

    public func checked() throws(WireError) -> Checked {
        guard source == "vnstat" else { throw WireError(.badRequest, "unknown source \"\(source ?? "")\"; known: vnstat") }
        let path = try required(path, "path")
        guard path.hasPrefix("/") else { throw WireError(.badRequest, "field \"path\" must be absolute, got \"\(path)\"") }
        return Checked(path: path, utc: utc ?? false, dryRun: dryRun ?? false)
    }
}

/// `forget`: a name's history deleted (admin).
public struct ForgetRequest: CommandRequestType {
    public static let command = Command.forget
    public static let policy = CommandPolicy(adminOnly: true, offLoop: true)
    public static let fields: [RequestField<Self>] = [
        .string("interface", { $0.interface }, { $0.interface = $1 }),
    ]

    public var interface: String?

    public init() {}

    public init(interface: String) { self.interface = interface }

    /// The name whose history goes, or that none was given.
    public func checkedName() throws(WireError) -> String { try required(interface, "interface") }
}

/// `alias`: an interface's alias set, or with no `alias` (or an empty one) removed (admin).
public struct AliasRequest: CommandRequestType {
    public static let command = Command.alias
    public static let policy = CommandPolicy(adminOnly: true, offLoop: true)
    public static let fields: [RequestField<Self>] = [
        .string("interface", { $0.interface }, { $0.interface = $1 }),
        .string("alias", { $0.alias }, { $0.alias = $1 }),
    ]

    /// The name (or its alias now).
    public var interface: String?
    /// The new alias; absent or empty: none.
    public var alias: String?

    public init() {}

    public init(interface: String, alias: String?) { (self.interface, self.alias) = (interface, alias) }

    /// The name, and the alias checked as the config's are (``InterfaceAlias``); nil to remove it.
    public func checked() throws(WireError) -> (interface: String, alias: String?) {
        let name = try required(interface, "interface")
        guard let alias, !alias.isEmpty else { return (name, nil) }
        if let problem = InterfaceAlias.problem(alias) { throw WireError(.badRequest, "alias: \(problem)") }
        return (name, alias)
    }
}

/// The one "unknown X; known: …" list.
func known<Name: RawRepresentable>(_ names: some Sequence<Name>) -> String where Name.RawValue == String {
    names.map(\.rawValue).joined(separator: ", ")
}

/// `name` as one of `Name`'s values, or `unknown NOUN "name" [in "MEMBER"]; known: …`.
func known<Name: RawRepresentable & CaseIterable>(_ name: String, _ type: Name.Type, _ noun: String,
                                                  in member: String? = nil) throws(WireError) -> Name where Name.RawValue == String {
    guard let value = Name(rawValue: name) else {
        let place = member.map { " in \"\($0)\"" } ?? ""
        throw WireError(.badRequest, "unknown \(noun) \"\(name)\"\(place); known: \(known(Name.allCases))")
    }
    return value
}

func required(_ value: String?, _ field: String) throws(WireError) -> String {
    guard let value, !value.isEmpty else { throw WireError(.badRequest, "field \"\(field)\" is missing") }
    return value
}
