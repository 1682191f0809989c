import IfMeterCore

/// `usage`: one subject, one table.
public struct UsageRequest: CommandRequestType {
    public static let command = Command.usage
    public static let policy = CommandPolicy(largeAnswer: true, offLoop: true)
    public static let fields: [RequestField<Self>] = [
        .string("interface", { $0.interface }, { $0.interface = $1 }),
        .string("class", { $0.class }, { $0.class = $1 }),
        .string("period", { $0.period }, { $0.period = $1 }),
        .time("from", { $0.from }, { $0.from = $1 }),
        .time("to", { $0.to }, { $0.to = $1 }),
        .bool("projection", { $0.projection }, { $0.projection = $1 }),
    ]

    /// The subject and table asked for, checked.
    public struct Checked: Hashable, Sendable {
        public var subject: UsageSubject
        public var table: UsageTable
    }

    public var interface: String?
    /// An ``InterfaceClass``'s name, whose members are summed.
    public var `class`: String?
    /// A ``UsagePeriod``'s name.
    public var period: String?
    public var from: TimeArgument?
    public var to: TimeArgument?
    public var projection: Bool?

    public init() {}

    public init(interface: String, period: UsagePeriod, from: TimeArgument? = nil, to: TimeArgument? = nil, projection: Bool? = nil) {
        (self.interface, self.period, self.from, self.to, self.projection) = (interface, period.rawValue, from, to, projection)
    }

    /// Exactly one of `interface` and `class`, then the table.
    public func checked() throws(WireError) -> Checked {
        let subject: UsageSubject
        switch (interface, self.class) {
        case (let name?, nil): subject = .interface(name)
        case (nil, let className?): subject = .interfaceClass(try known(className, InterfaceClass.self, "class"))
        default: throw WireError(.badRequest, "give exactly one of \"interface\" and \"class\"")
        }
        return Checked(subject: subject, table: try UsageTable(period: period, from: from, to: to, projection: projection))
    }
}

/// `query`: the subjects, the tables for each, and what else to answer.
public struct QueryRequest: CommandRequestType {
    public static let command = Command.query
    public static let policy = CommandPolicy(largeAnswer: true, offLoop: true)
    public static let fields: [RequestField<Self>] = [
        .strings("interfaces", { $0.interfaces }, { $0.interfaces = $1 }, form: .repeated("interface")),
        .string("class", { $0.class }, { $0.class = $1 }),
        .string("select", { $0.select }, { $0.select = $1 }),
        .bool("sum", { $0.sum }, { $0.sum = $1 }),
        .strings("include", { $0.include }, { $0.include = $1 }, form: .commaSeparated),
        .objects("usage", { $0.usage }, { $0.usage = $1 }, form: .objects("period")),
        .integer("offset", { $0.offset }, { $0.offset = $1 }, range: 0...RequestLine.maximumOffset),
        .integer("limit", { $0.limit }, { $0.limit = $1 }, range: RequestLine.acceptedLimit),
        .string("network", { $0.network }, { $0.network = $1 }),
    ]

    /// The query asked for, checked.
    public struct Checked: Hashable, Sendable {
        public enum Subjects: Hashable, Sendable {
            /// These names, in this order.
            case names([String])
            /// These names (`sum`) summed bucket by bucket as one subject, `a+b`.
            case merged([String])
            /// A class's members, or (`sum`) the class as one subject.
            case interfaceClass(InterfaceClass, sum: Bool)
            case selection(QuerySelection)
            /// `select: apps` with `network`: the applications on that network (`UUID` or
            /// `unknown`), as `netapp:NETWORK/SUBJECT` (docs/APPS.md, "By network").
            case appsOnNetwork(String)
            /// `select: scopes` with `interfaces`: the scope subjects of those names
            /// (`scope:SCOPE/NAME`), those that have figures; a name without is no error, it is
            /// not split (docs/SCOPES.md, "Views").
            case scopesOf([String])
        }

        public var subjects: Subjects
        public var tables: [UsageTable]
        public var parts: Set<QueryPart>
        /// `offset` and `limit`: which of the chosen subjects are answered; nil for all of them.
        public var window: SubjectWindow?

        public init(subjects: Subjects, tables: [UsageTable], parts: Set<QueryPart> = [], window: SubjectWindow? = nil) {
            (self.subjects, self.tables, self.parts, self.window) = (subjects, tables, parts, window)
        }
    }

    /// These names, in this order.
    public var interfaces: [String]?
    /// An ``InterfaceClass``'s name: its members, or with `sum` the class as one subject.
    public var `class`: String?
    /// A ``QuerySelection``'s name, when neither names nor a class are given (`shown` if absent);
    /// `scopes` with `interfaces` too: those names' scope subjects.
    public var select: String?
    /// With `class`, the class as one subject; with `interfaces`, the names as one subject.
    public var sum: Bool?
    /// ``QueryPart``s' names: what to answer besides the tables.
    public var include: [String]?
    /// The tables, each subject's in this order.
    public var usage: [UsageSpec]?
    /// How many of the chosen subjects to pass over before the first answered.
    public var offset: Int?
    /// At most this many of the chosen subjects.
    public var limit: Int?
    /// With `select: apps`: a network's UUID, or `unknown`.
    public var network: String?

    public init() {}

    public init(interfaces: [String]? = nil, class: InterfaceClass? = nil, select: QuerySelection? = nil, sum: Bool? = nil,
                usage: [UsageSpec], include: [QueryPart]? = nil, offset: Int? = nil, limit: Int? = nil) {
        (self.interfaces, self.class, self.select, self.sum) = (interfaces, `class`?.rawValue, select?.rawValue, sum)
        (self.usage, self.include, self.offset, self.limit) = (usage, include?.map { $0.rawValue }, offset, limit)
    }

    /// In the order the protocol has always checked them: the parts, the window, each table,
    /// then the subjects.
    public func checked() throws(WireError) -> Checked {
        var parts = Set<QueryPart>()
        for name in include ?? [] {
            parts.insert(try known(name, QueryPart.self, "part", in: "include"))
        }
        var window: SubjectWindow?
        if offset != nil || limit != nil {
            // Checked again here: a request built in-process (the page's) never passed the reader.
            if let problem = RequestMembers.rangeProblem(RequestLine(self).members) { throw WireError(.badRequest, problem) }
            window = SubjectWindow(offset: offset ?? 0, limit: limit ?? RequestLine.acceptedLimit.upperBound)
        }
        let tables = try (usage ?? []).map { spec throws(WireError) in try spec.checked() }
        let subjects: Checked.Subjects
        switch (interfaces, self.class) {
        case (let names?, nil) where select == QuerySelection.scopes.rawValue:
            guard sum != true else { throw WireError(.badRequest, "\"select\": \"scopes\" with \"interfaces\" takes no \"sum\"") }
            subjects = .scopesOf(names)
        case (let names?, nil) where sum == true:
            guard !names.isEmpty else { throw WireError(.badRequest, "\"interfaces\" with \"sum\" names no interface") }
            if let twice = Self.repeated(names) {
                throw WireError(.badRequest, "\"interfaces\" with \"sum\" names \"\(twice)\" twice; a merge counts each once")
            }
            subjects = .merged(names)
        case (let names?, nil): subjects = .names(names)
        case (nil, let className?): subjects = .interfaceClass(try known(className, InterfaceClass.self, "class"), sum: sum == true)
        case (nil, nil): subjects = .selection(try select.map { name throws(WireError) in try known(name, QuerySelection.self, "selection") } ?? .shown)
        default: throw WireError(.badRequest, "give at most one of \"interfaces\" and \"class\"")
        }
        if let network {
            guard case .selection(.apps) = subjects else {
                throw WireError(.badRequest, "\"network\" goes with \"select\": \"apps\" alone")
            }
            guard network == "unknown" || Network.isUUID(network) else {
                throw WireError(.badRequest, "network: expected a network's UUID or unknown")
            }
            return Checked(subjects: .appsOnNetwork(network), tables: tables, parts: parts, window: window)
        }
        return Checked(subjects: subjects, tables: tables, parts: parts, window: window)
    }
}

extension QueryRequest {
    /// The first name given twice in `names`, if one is.
    static func repeated(_ names: [String]) -> String? {
        var seen = Set<String>()
        return names.first { !seen.insert($0).inserted }
    }
}

/// One table a `query` asks for: a period, optionally a range of bucket starts, optionally the
/// projection of the current day or month (docs/PROTOCOL.md).
public struct UsageSpec: RequestFields {
    public static let fields: [RequestField<Self>] = [
        .string("period", { $0.period }, { $0.period = $1 }),
        .time("from", { $0.from }, { $0.from = $1 }),
        .time("to", { $0.to }, { $0.to = $1 }),
        .bool("projection", { $0.projection }, { $0.projection = $1 }),
        .integer("last", { $0.last }, { $0.last = $1 }, range: RequestLine.acceptedLimit),
        .integer("top", { $0.top }, { $0.top = $1 }, range: RequestLine.acceptedLimit),
    ]

    /// A ``UsagePeriod``'s name.
    public var period: String?
    public var from: TimeArgument?
    public var to: TimeArgument?
    public var projection: Bool?
    /// Only each subject's most recent `last` rows.
    public var last: Int?
    /// Only each subject's `top` rows with the most traffic (rx + tx), busiest first.
    public var top: Int?

    public init() {}

    public init(_ period: UsagePeriod, from: TimeArgument? = nil, to: TimeArgument? = nil, projection: Bool? = nil,
                last: Int? = nil, top: Int? = nil) {
        (self.period, self.from, self.to, self.projection, self.last, self.top) = (period.rawValue, from, to, projection, last, top)
    }

    func checked() throws(WireError) -> UsageTable {
        try UsageTable(period: period, from: from, to: to, projection: projection, last: last, top: top)
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
        let period = try known(required(name, "period"), UsagePeriod.self, "period")
        guard last == nil || top == nil else { throw WireError(.badRequest, "give at most one of \"last\" and \"top\"") }
        self.init(period: period, from: from?.floorSeconds, to: to?.ceilingSeconds, projection: projection ?? false,
                  last: last, top: top)
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
