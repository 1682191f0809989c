import IfMeterCore
import IfMeterHistory

/// Every link the kernel announced and its class, and the names with history that no link has
/// now: what the service knows of links, kept as the kernel says they come, change and go.
struct LinkTable: Sendable {
    /// Every link the kernel announced, by ifindex, as of its last message (names are never
    /// re-read per sample), without its counters: the meter holds the last it applied, and a
    /// link's own were 64 bytes nobody read (``kept(_:)``).
    private(set) var links = SlotTable<Link>()
    /// Each present link's class, decided when it was announced.
    private(set) var verdicts = SlotTable<Classification>()
    /// Names with history that no link has now, as of the last save or note. A present link's
    /// record is its link, so it is not kept twice; a link that goes is remembered here.
    private(set) var history: [String: StoredInterface]
    /// Every distinct class reason, once (``classify(_:by:)``).
    private var reasons = Set<String>()
    /// The names (present or with history) of each namespace metered from inside, by its
    /// subjects' prefix (`netns:vpn/`): read from the history when first needed.
    private var insideNames: [String: Set<String>] = [:]
    /// The prefixes of namespaces that reached their names limit, said once each.
    private var pastLimit: Set<String> = []
    /// What classifying said, for the next ingest to say.
    private(set) var notices: [String] = []

    init(history: [StoredInterface]) {
        self.history = Dictionary(history.map { ($0.name, $0) }) { _, last in last }
    }

    /// A link new or changed: classified, and its old name, if it was renamed, remembered as
    /// absent. True when its name is new to the table (a new link, or renamed).
    mutating func announce(_ link: Link, at time: Double, by configuration: ServiceConfiguration,
                           firstSeen: DenseTable<String, Double>, noting writes: inout PendingWrites) -> Bool {
        let old = links[link.key]
        if let old, old.name != link.name {
            // Renamed: the old name is absent now, with its history.
            remember(old, at: time, firstSeen: firstSeen, noting: &writes)
        }
        history[link.name] = nil
        links[link.key] = Self.kept(link)
        verdicts[link.key] = classify(link, by: configuration)
        return old?.name != link.name
    }

    /// A link deleted: its name is absent from now on.
    mutating func delete(_ link: Link, at time: Double, firstSeen: DenseTable<String, Double>,
                         noting writes: inout PendingWrites) {
        if let present = links[link.key] { remember(present, at: time, firstSeen: firstSeen, noting: &writes) }
        links[link.key] = nil
        verdicts[link.key] = nil
    }

    /// A full dump replaces the table; links missing from it were last seen now.
    mutating func replace(with dump: [Link], at time: Double, by configuration: ServiceConfiguration,
                          firstSeen: DenseTable<String, Double>, noting writes: inout PendingWrites) {
        let present = Set(dump.map(\.key))
        for link in links.values where !present.contains(link.key) {
            remember(link, at: time, firstSeen: firstSeen, noting: &writes)
        }
        links = SlotTable(adopting: dump.map(Self.kept), key: \.key)
        // A new dictionary, not removals: one loaded with every name would keep its capacity.
        let names = Set(dump.map(\.name))
        history = history.filter { !names.contains($0.key) }
        classifyAll(by: configuration)
    }

    /// The links of one namespace, from a resync dump of it; the others' stay as they are.
    mutating func replace(of namespace: NamespaceID, with dump: [Link], at time: Double, by configuration: ServiceConfiguration,
                          firstSeen: DenseTable<String, Double>, noting writes: inout PendingWrites) {
        guard links.keys.contains(where: { $0.namespace != namespace }) else {
            return replace(with: dump, at: time, by: configuration, firstSeen: firstSeen, noting: &writes)
        }
        let present = Set(dump.map(\.key))
        for link in links.values where link.namespace == namespace && !present.contains(link.key) {
            remember(link, at: time, firstSeen: firstSeen, noting: &writes)
            links[link.key] = nil
        }
        for link in dump {
            links[link.key] = Self.kept(link)
            history[link.name] = nil
        }
        classifyAll(by: configuration)
    }

    /// Every present link classified again (a reload, or a dump).
    mutating func classifyAll(by configuration: ServiceConfiguration) {
        reasons = []
        insideNames = [:]
        var verdicts = SlotTable<Classification>()
        for (key, link) in links { verdicts[key] = classify(link, by: configuration) }
        self.verdicts = verdicts
    }

    /// Takes what classifying said since it was last taken.
    mutating func takeNotices() -> [String] {
        defer { notices = [] }
        return notices
    }

    /// Takes the records of absent names again after something wrote history beside the
    /// service (an import).
    mutating func rememberAgain(_ records: [StoredInterface]) {
        let present = Set(links.values.map(\.name))
        for record in records where !present.contains(record.name) { history[record.name] = record }
    }

    /// Forgets `name`'s history once the store deleted it.
    mutating func forget(_ name: String) {
        history[name] = nil
        insideNames = [:]
    }

    /// Links a config rule ignores: their traffic and events are dropped where they enter.
    func ignoredLinks(by configuration: ServiceConfiguration) -> Set<LinkKey> {
        // Without an ignore rule nothing is ignored: no pass over every link each sample.
        guard configuration.classifier.rules.contains(where: { $0.action == .ignore }) || !pastLimit.isEmpty else { return [] }
        // By position: the table's (key, value) iteration is generic (5 % of a sample at 10,000).
        var ignored = Set<LinkKey>()
        for case (let position, .ignored) in verdicts.values.enumerated() { ignored.insert(verdicts.keys[position]) }
        return ignored
    }

    /// A link as the table keeps it: without counters.
    private static func kept(_ link: Link) -> Link {
        var kept = link
        kept.counters = nil
        return kept
    }

    /// Notes that `link` was present until `time` and is going: for the database and for the
    /// absent name's figures. (A present link's figures come from the table; its record is
    /// written by each save, ``SaveBatch/presentRecords``.)
    private mutating func remember(_ link: Link, at time: Double, firstSeen: DenseTable<String, Double>,
                                   noting writes: inout PendingWrites) {
        guard let verdict = verdicts[link.key], let record = InterfaceRecord(link, verdict, at: time) else { return }
        writes.note(record)
        history[link.name] = StoredInterface(
            name: link.name, interfaceClass: verdict.label, kind: link.kind,
            firstSeen: firstSeen[link.name] ?? history[link.name]?.firstSeen ?? time, lastSeen: time)
    }

    /// `link`'s class, its reason shared with every link classified for the same reason (a
    /// reason is text; thousands of veths would each hold a copy of "netlink kind veth").
    private mutating func classify(_ link: Link, by configuration: ServiceConfiguration) -> Classification {
        if link.namespace != .own, let refused = admit(link, limit: configuration.insideNamesLimit) { return refused }
        return switch configuration.classifier.classify(link) {
        case .classified(let interfaceClass, let reason):
            .classified(interfaceClass, reason: reasons.insert(reason).memberAfterInsert)
        case .ignored(let reason):
            .ignored(reason: reasons.insert(reason).memberAfterInsert)
        }
    }

    /// Nil when a link of a namespace metered from inside may be a subject: its name is one the
    /// namespace has already, or the namespace has fewer than `limit`
    /// (``ServiceConfiguration/insideNamesLimit``). Past it the link is ignored (root inside can
    /// make links without end, and each name would be a history for good), and that is said once.
    private mutating func admit(_ link: Link, limit: Int) -> Classification? {
        guard let slash = link.name.utf8.firstIndex(of: UInt8(ascii: "/")) else { return nil }
        let prefix = String(link.name[...slash])
        var names = insideNames.removeValue(forKey: prefix) ?? Set(history.keys.filter { $0.hasPrefix(prefix) })
        defer { insideNames[prefix] = names }
        if names.contains(link.name) || names.count < limit {
            names.insert(link.name)
            return nil
        }
        let reason = "\(prefix.dropLast()) has \(limit) link names already (meter_inside_names)"
        if pastLimit.insert(prefix).inserted {
            notices.append("\(reason): \(link.name) and any other new name there are not metered")
        }
        return .ignored(reason: reasons.insert(reason).memberAfterInsert)
    }
}
