import IfMeterCore
import IfMeterJSON

/// Which names a `query` is about when it does not list them: `shown` is the default views'
/// choice (no loopback or ignored links, idle virtual ones left out, physical links first),
/// `all` adds the idle virtual ones, `every` is every name ifmeter knows, in name order.
public enum QuerySelection: String, Hashable, Sendable, CaseIterable {
    case shown, all, every
    /// Every subject of the kinds in ``SubjectSection/owners`` (`container:NAME`, `pod:…`,
    /// `vm:NAME`, `netns:NAME`), present first (docs/NAMESPACES.md).
    case owners
    /// Every subject of the kinds in ``SubjectSection/networks`` (`network:UUID`, then
    /// `network:unknown`), by name (docs/NETWORKS.md).
    case networks
    /// Every subject of the kinds in ``SubjectSection/apps`` (`service:NAME`, `app:UID/NAME`,
    /// `remainder:IFACE`), by name (docs/APPS.md).
    case apps
    /// Every subject of the kind in ``SubjectSection/scopes`` (`scope:SCOPE/SUBJECT`), by its
    /// subject, then local, internet, unknown (docs/SCOPES.md); with `interfaces`, those of the
    /// subjects named only.
    case scopes
}

/// What a `query` answer may carry besides its usage tables.
public enum QueryPart: String, Hashable, Sendable, CaseIterable {
    /// The `status` answer, so a view needs no round trip of its own for it.
    case status
    /// Each subject's `interfaces` entry.
    case interfaces
    /// Every data plan's figures (`plans`), so the summary shows a plan's line in one round trip.
    case plans
    /// Each network subject's `networks` entry: what NetworkManager said of it, and its total.
    case networks
}

/// A name, a class or a merge of names a `query` answered for, with its class.
public struct QuerySubject: Hashable, Sendable, JSONWritable, JSONReadable {
    /// Nil for a class summed as one subject; `a+b` for a merge.
    public var name: String?
    /// Its members' classes when they share one, `mixed` when they do not, for a merge.
    public var `class`: String
    /// Its alias, if it has one; a merge's members' aliases (or names) joined by `+`.
    public var alias: String?
    /// A merge's names, in the order asked; nil for any other subject.
    public var members: [String]?

    public init(name: String?, class: String, alias: String? = nil, members: [String]? = nil) {
        (self.name, self.class, self.alias, self.members) = (name, `class`, alias, members)
    }

    /// The merge of `members`, whose classes and aliases (nil for none) are these.
    public init(merging members: [String], classes: [String], aliases: [String?]) {
        let alias = aliases.contains { $0 != nil }
            ? UsageSubject.mergedName(zip(members, aliases).map { $1 ?? $0 }) : nil
        self.init(name: UsageSubject.mergedName(members), class: Set(classes).count == 1 ? classes[0] : "mixed",
                  alias: alias, members: members)
    }

    /// How a view names it: `alias (name)` when it has an alias, else its name.
    public var shownName: String? {
        guard let name else { return nil }
        return alias.map { "\($0) (\(name))" } ?? name
    }

    public func write(to w: inout JSONWriter) {
        w.beginObject()
        if let alias { w.key("alias"); w.string(alias) }
        w.key("class"); w.string(self.class)
        if let members { w.key("members"); w.strings(members) }
        if let name { w.key("name"); w.string(name) }
        w.endObject()
    }

    public init(reading r: inout JSONReader) throws {
        self.init(name: nil, class: "")
        try r.readObject { r, key in
            switch key {
            case "name": name = try r.readNull() ? nil : try r.readString()
            case "class": self.class = try r.readString()
            case "alias": alias = try r.readNull() ? nil : try r.readString()
            case "members":
                var read: [String] = []
                try r.readArray { read.append(try $0.readString()) }
                members = read
            default: try r.skipValue()
            }
        }
    }
}

/// The `query` answer: the subjects in order, and for each subject one table per asked
/// period in the order asked (`usage[subject × periods + period]`).
public struct QueryResult: Hashable, Sendable, JSONWritable, JSONReadable {
    public var status: StatusResult?
    public var subjects: [QuerySubject]
    public var interfaces: [InterfaceResult]?
    public var usage: [UsageResult]
    public var plans: [PlanResult]?
    public var networks: [NetworkResult]?
    /// How many subjects were chosen in all, when `offset` or `limit` answered some of them.
    public var subjectsTotal: Int?
    public var footnote: String

    public init(status: StatusResult?, subjects: [QuerySubject], interfaces: [InterfaceResult]?, usage: [UsageResult],
                footnote: String, plans: [PlanResult]? = nil, networks: [NetworkResult]? = nil) {
        self.plans = plans
        self.networks = networks
        self.status = status
        self.subjects = subjects
        self.interfaces = interfaces
        self.usage = usage
        self.footnote = footnote
    }

    public func write(to w: inout JSONWriter) {
        write(to: &w) { w in
            for table in usage { table.write(to: &w) }
        }
    }

    /// The result with the tables `writeUsage` writes in place of ``usage`` (the last member:
    /// an answer's tables can be written, and sent, while the rest of them is read).
    public func write(to w: inout JSONWriter, usage writeUsage: (inout JSONWriter) throws -> Void) rethrows {
        w.beginObject()
        w.key("footnote"); w.string(footnote)
        if let interfaces {
            w.key("interfaces")
            w.beginArray()
            for interface in interfaces { interface.write(to: &w) }
            w.endArray()
        }
        if let networks {
            w.key("networks")
            w.beginArray()
            for network in networks { network.write(to: &w) }
            w.endArray()
        }
        if let plans {
            w.key("plans")
            w.beginArray()
            for plan in plans { plan.write(to: &w) }
            w.endArray()
        }
        if let status { w.key("status"); status.write(to: &w) }
        w.key("subjects")
        w.beginArray()
        for subject in subjects { subject.write(to: &w) }
        w.endArray()
        if let subjectsTotal { w.key("subjects_total"); w.number(subjectsTotal) }
        w.key("usage")
        w.beginArray()
        try writeUsage(&w)
        w.endArray()
        w.endObject()
    }

    public init(reading r: inout JSONReader) throws {
        self = try Self.read(&r) { result, table in result.usage.append(table) }
    }

    /// The answer read as it arrives, each table handed to `table` with what came before it
    /// instead of kept (`usage` is the last member: the subjects, status and plans are read by
    /// then): a view of thousands of interfaces shows the first while the rest is read.
    public static func read(_ r: inout JSONReader, table: (inout QueryResult, UsageResult) throws -> Void) throws -> QueryResult {
        var result = QueryResult(status: nil, subjects: [], interfaces: nil, usage: [], footnote: "")
        try result.readMembers(&r, table: table)
        return result
    }

    private mutating func readMembers(_ r: inout JSONReader, table: (inout QueryResult, UsageResult) throws -> Void) throws {
        try r.readObject { r, key in
            switch key {
            case "status": status = try r.readNull() ? nil : try StatusResult(reading: &r)
            case "subjects": try r.readArray { subjects.append(try QuerySubject(reading: &$0)) }
            case "subjects_total": subjectsTotal = try r.readNull() ? nil : try r.readInt()
            case "interfaces":
                var read: [InterfaceResult] = []
                try r.readArray { read.append(try InterfaceResult(reading: &$0)) }
                interfaces = read
            case "usage": try r.readArray { try table(&self, try UsageResult(reading: &$0)) }
            case "networks":
                var read: [NetworkResult] = []
                try r.readArray { read.append(try NetworkResult(reading: &$0)) }
                networks = read
            case "plans":
                var read: [PlanResult] = []
                try r.readArray { read.append(try PlanResult(reading: &$0)) }
                plans = read
            case "footnote": footnote = try r.readString()
            default: try r.skipValue()
            }
        }
    }
}

/// What a selection looks at in an interface: its class, state and whether it carried traffic.
public protocol SelectableInterface {
    var selectionName: String { get }
    var selectionClass: String { get }
    var isUp: Bool { get }
    var isAbsent: Bool { get }
    var carriedTraffic: Bool { get }
}

extension InterfaceResult: SelectableInterface where Fields == InterfaceFields {
    public var selectionName: String { fields.name }
    public var selectionClass: String { fields.class }
    public var isUp: Bool { fields.operstate == OperState.up.rawValue }
    public var isAbsent: Bool { fields.operstate == "absent" }
    public var carriedTraffic: Bool { traffic.rxBytes != 0 || traffic.txBytes != 0 }
}

extension QuerySelection {
    /// The names this selection takes from `interfaces` (every name ifmeter knows, in the
    /// daemon's order): for `shown` and `all` physical, Wi-Fi and cellular links first, then
    /// other, tunnel and virtual ones, present before absent, never loopback or ignored ones;
    /// `shown` leaves out virtual links that are down and never carried a byte (an idle `ifb0`
    /// is not news); `owners` takes the owners' subjects only, present before absent.
    public func pick<Interface: SelectableInterface>(_ interfaces: [Interface]) -> [Interface] {
        guard self != .every else { return interfaces }
        if let section {
            let listed = interfaces.filter { SubjectKinds.kind(of: $0.selectionName)?.kind.section == section }
            return section == .owners ? listed.filter { !$0.isAbsent } + listed.filter(\.isAbsent) : listed
        }
        // Ranked once each, positions kept in their order within a rank, and each chosen one
        // copied once: a sort ranked both sides of every comparison (a class name hashed each
        // time) and moved the entries, a third of a summary's wait at 10,000 links.
        var ranked = [[Int]](repeating: [], count: 2 * (Self.lastGroup + 1))
        for (position, interface) in interfaces.enumerated() {
            guard interface.selectionClass != InterfaceClass.loopback.rawValue && interface.selectionClass != "ignored"
                    && (self == .all || !Self.isIdleVirtual(interface)) else { continue }
            let (group, absent) = Self.rank(interface)
            ranked[2 * group + absent].append(position)
        }
        var chosen: [Interface] = []
        chosen.reserveCapacity(ranked.reduce(0) { $0 + $1.count })
        for positions in ranked {
            for position in positions { chosen.append(interfaces[position]) }
        }
        return chosen
    }

    /// The section of subject kinds it lists (``SubjectKinds/kinds(in:)``), if it lists one.
    public var section: SubjectSection? {
        switch self {
        case .owners: .owners
        case .networks: .networks
        case .apps: .apps
        case .scopes: .scopes
        case .shown, .all, .every: nil
        }
    }

    static func isIdleVirtual(_ interface: some SelectableInterface) -> Bool {
        interface.selectionClass == InterfaceClass.virtual.rawValue && !interface.isUp && !interface.carriedTraffic
    }

    private static let order: [String: Int] = [
        InterfaceClass.ethernet.rawValue: 0, InterfaceClass.wifi.rawValue: 0, InterfaceClass.cellular.rawValue: 0,
        InterfaceClass.other.rawValue: 1, InterfaceClass.tunnel.rawValue: 2, InterfaceClass.virtual.rawValue: 3,
    ]

    /// The group of classes the views list last (and of a class they do not know).
    private static let lastGroup = 4

    /// Where the views list it: by class group, then present before absent.
    static func rank(_ interface: some SelectableInterface) -> (Int, Int) {
        (order[interface.selectionClass] ?? lastGroup, interface.isAbsent ? 1 : 0)
    }
}
