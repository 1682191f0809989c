import IfMeterCore
import IfMeterHistory


/// What is counted now, for every reader of current figures: socket answers, `/metrics`, the
/// CLI's views. A value: taking it costs one pass over the interfaces, reading it costs nothing.
public struct MeterSnapshot: Sendable {
    public var summary: MeterSummary
    /// Present interfaces by ifindex, then names with history that are absent, by name.
    public var interfaces: [InterfaceFigures]
    /// Every network counted on (docs/NETWORKS.md), by name, then `network:unknown` if it has
    /// traffic.
    public var networks: [NetworkFigures]
    /// Every application's, service's and link's remainder's figures (docs/APPS.md), by subject.
    public var apps: [InterfaceFigures] = []
}

/// The part of a snapshot that does not grow with the interfaces, for readers that need no
/// figures (`status`, `sample`, the systemd status line): taking it costs nothing.
public struct MeterSummary: Hashable, Sendable {
    /// When counters were last read; nil before the first dump.
    public var sampledAt: MeterInstant?
    /// How many links the kernel announced and have not gone.
    public var presentLinks: Int
    public var lastSaveAt: Double?
    /// Why the last save failed; nil once one succeeds.
    public var saveError: SaveFailure?
    /// When link events were lost (the `events-lost` events), and whose figures each concerns.
    public var lostEvents: LostEvents
    /// Whether traffic or events are counted and not yet saved.
    public var hasUnsavedTraffic: Bool

    /// How many `events-lost` events there have been.
    public var eventsLost: Int { lostEvents.total }
}

/// One name's figures: its continuous total since its history began, and what it is now.
public struct InterfaceFigures: Hashable, Sendable {
    /// What only a present interface has.
    public struct Present: Hashable, Sendable {
        /// The epoch being counted and the counters last applied to it: what readers need of
        /// the meter's tracked link, in half its size (a snapshot holds one per link while
        /// `/metrics` renders).
        public struct Counted: Hashable, Sendable {
            public var epoch: Epoch
            public var last: Traffic
        }

        public var ifindex: Int32
        public var operState: OperState
        /// Nil until the kernel gave counters.
        public var counted: Counted?
        /// Rates once a full interval has been measured.
        public var rate: Rate?
        /// Who owns the namespace it leads into, when it is counted as theirs.
        public var owner: LinkOwner? = nil
    }

    public var name: String
    /// The class label (`wifi`, `tunnel`, …, `ignored`), or `unknown` for a name never classified.
    public var interfaceClass: String
    public var classReason: String
    public var kind: String
    /// Saved and not yet saved traffic since the name's history began.
    public var total: BucketTally
    /// When counting began for this name.
    public var since: Double?
    /// `events-lost` events since then that concern it.
    public var eventsLost: Int
    public var present: Present?
    /// When it was last seen present; nil while present.
    public var lastSeen: Double?
    /// Its alias (``InterfaceAliases``), if it has one.
    public var alias: String? = nil

    /// Whether its figures are tunnel traffic, counted again on the link beneath.
    public var isTunnel: Bool { interfaceClass == InterfaceClass.tunnel.rawValue }

    /// The labels of its total: the one place an interface's labels are decided.
    public var labels: [EstimateLabel] { total.labels(tunnel: isTunnel, eventsLost: eventsLost, subject: name) }
}

extension MeterService {
    /// Every name's figures as of now.
    public func snapshot() -> MeterSnapshot {
        // Sorted by key, then looked up: sorting the Link values would copy each of them.
        let present = table.links.keys.sorted().map { figures(of: table.links[$0]!) }
        let presentNames = Set(present.map(\.name))
        let absent = table.history.values.filter { !presentNames.contains($0.name) }.sorted { $0.name < $1.name }.map {
            figures(ofAbsent: $0)
        }
        return MeterSnapshot(summary: summary, interfaces: present + absent, networks: networkFigures(), apps: appFigures())
    }

    public var summary: MeterSummary {
        MeterSummary(sampledAt: lastSample, presentLinks: table.links.count, lastSaveAt: saves.lastSaveAt,
                     saveError: saves.saveError, lostEvents: lostEvents, hasUnsavedTraffic: saves.hasUnsavedTraffic)
    }

    /// Containers' and namespaces' subjects absent since before `cutoff` (`retention_owners`),
    /// at most `limit` of them, oldest first: what the daemon forgets at its next save.
    public func absentOwners(lastSeenBefore cutoff: Double, limit: Int) -> [String] {
        table.history.values.filter { $0.lastSeen < cutoff && SubjectName.owner(of: $0.name) != nil }
            .sorted { ($0.lastSeen, $0.name) < ($1.lastSeen, $1.name) }.prefix(limit).map(\.name)
    }

    /// What is counted and not yet in the database, for an answer from the store to add:
    /// `names`' traffic (every name's when nil) and all unsaved events.
    public func unsaved(of names: [String]?) -> UnsavedTraffic {
        saves.unsaved(of: names)
    }

    /// The figures of those of `names` ifmeter knows, in the order given, without building
    /// every name's (a view of one interface among thousands).
    public func figures(named names: [String]) -> [InterfaceFigures] {
        let wanted = Set(names)
        // By position, reading only each link's name: copying every Link out of the table
        // would make a one-interface question cost as much as all of them.
        var present: [String: LinkKey] = [:]
        // A few names are compared (equal small strings compare as two words); hashing each of
        // thousands of names to look it up in a set cost more than the rest of the answer.
        let isWanted: (String) -> Bool = names.count <= 8 ? { names.contains($0) } : { wanted.contains($0) }
        table.links.values.withUnsafeBufferPointer { buffer in
            for position in buffer.indices where isWanted(buffer[position].name) {
                present[buffer[position].name] = table.links.keys[position]
            }
        }
        return names.compactMap { name in
            if let key = present[name], let link = table.links[key] { return figures(of: link) }
            if NetworkSubject.isNetwork(name) { return networkFigures(of: name)?.asInterfaceFigures }
            if let figures = appFigures(of: name) { return figures }
            if let since = scopes.subjects[name] { return scopeFigures(of: name, since: since) }
            return table.history[name].map { figures(ofAbsent: $0) }
        }
    }

    /// Every network's figures: those NetworkManager named, by their id then UUID, then
    /// `network:unknown` once it has traffic.
    public func networkFigures() -> [NetworkFigures] {
        let named = networks.records.values.sorted { ($0.network.id, $0.network.uuid) < ($1.network.id, $1.network.uuid) }
            .compactMap { networkFigures(of: $0.network.subject) }
        return named + (networkFigures(of: NetworkSubject.unknown).map { [$0] } ?? [])
    }

    /// One network's figures; nil for a subject that is not a network ifmeter knows.
    func networkFigures(of subject: String) -> NetworkFigures? {
        let record: NetworkRecord?
        if subject == NetworkSubject.unknown {
            guard saves.hasTotal(of: subject) else { return nil }
            record = nil
        } else {
            guard NetworkSubject.isNetwork(subject),
                  let known = networks.records[String(subject.dropFirst(NetworkSubject.prefix.count))] else { return nil }
            record = known
        }
        return NetworkFigures(
            record: record, subject: subject, total: total(of: subject),
            eventsLost: lostEvents.count(from: record?.firstSeen ?? 0, to: .infinity, for: subject),
            interface: record.flatMap { networks.interface(of: $0.network.uuid) })
    }

    private func figures(of link: Link) -> InterfaceFigures {
        let verdict = table.verdicts[link.key] ?? configuration.classifier.classify(link)
        let since = meter.firstSeen[link.name]
        return InterfaceFigures(
            name: link.name, interfaceClass: verdict.label, classReason: verdict.reason, kind: link.kind,
            total: total(of: link.name), since: since,
            eventsLost: lostEvents.count(from: since ?? 0, to: .infinity, for: link.name),
            present: InterfaceFigures.Present(
                ifindex: link.ifindex, operState: link.operState, counted: meter.tracked[link.key].map { .init(epoch: $0.epoch, last: $0.last) },
                rate: meter.rates[link.key].flatMap { $0.isMeasured ? $0 : nil }, owner: link.owner),
            lastSeen: nil, alias: aliases.alias(of: link.name))
    }

    private func figures(ofAbsent record: StoredInterface) -> InterfaceFigures {
        InterfaceFigures(
            name: record.name, interfaceClass: record.interfaceClass ?? "unknown",
            classReason: "last classified when present", kind: record.kind,
            total: total(of: record.name), since: record.firstSeen,
            eventsLost: lostEvents.count(from: record.firstSeen, to: .infinity, for: record.name), present: nil,
            lastSeen: record.lastSeen, alias: aliases.alias(of: record.name))
    }

    /// A scope subject's figures (`scope:internet/eth0`, docs/SCOPES.md): its total since it
    /// was first counted.
    private func scopeFigures(of name: String, since: Double) -> InterfaceFigures {
        InterfaceFigures(name: name, interfaceClass: "scope", classReason: "split by the far end's address",
                         kind: ScopeKind().noun, total: total(of: name), since: since, eventsLost: 0, present: nil, lastSeen: nil)
    }

    /// A name's total since its history began: saved, plus counted and not yet saved (pending,
    /// carried from failed saves, and in saves not finished).
    func total(of name: String) -> BucketTally {
        saves.total(of: name)
    }

    /// Whether ifmeter has ever seen `name`.
    public func isKnown(_ name: String) -> Bool {
        meter.firstSeen[name] != nil || saves.savedTotals[name] != nil || table.history[name] != nil
            || (NetworkSubject.isNetwork(name) && networkFigures(of: name) != nil) || apps.subjects[name] != nil
            || scopes.subjects[name] != nil
    }

    /// Present interfaces' rates, once a full interval has been measured.
    public func rates() -> [(name: String, rate: Rate)] {
        table.links.values.sorted { $0.key < $1.key }.compactMap { link in
            meter.rates[link.key].flatMap { $0.isMeasured ? (link.name, $0) : nil }
        }
    }
}

