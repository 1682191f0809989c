import IfMeterCore
import IfMeterHistory


/// The one owner of what is counted now: the meter, the link table and its classification,
/// the writes not yet saved, every name's total, and the estimate log's open window.
///
/// Pure: no sockets, files or clock of its own. The daemon feeds it what the kernel said
/// (``start(links:unparseable:at:)``, ``ingest(linkEvents:readings:at:)``), hands its writes to
/// the store (``save(at:write:)``), and every reader of current figures — socket answers,
/// `/metrics`, the CLI's views — starts from ``snapshot()``.
///
/// States: before ``start(links:unparseable:at:)`` the meter awaits its first dump and
/// ingests are ignored (there is nothing to compare them to); after it, running.
public struct MeterService: Sendable {
    private(set) var meter: Meter
    /// Every link the kernel announced, by ifindex, as of its last message (names are never
    /// re-read per sample), without its counters: the meter holds the last it applied, and a
    /// link's own were 64 bytes nobody read (``kept(_:)``).
    private(set) var links = SlotTable<Link>()
    /// Each present link's class, decided when it was announced.
    private(set) var verdicts = SlotTable<Classification>()
    /// Every distinct class reason, once (``classify(_:)``).
    private var reasons = Set<String>()
    /// The names (present or with history) of each namespace metered from inside, by its
    /// subjects' prefix (`netns:vpn/`): read from the history when first needed.
    private var insideNames: [String: Set<String>] = [:]
    /// The prefixes of namespaces that reached their names limit, said once each.
    private var pastLimit: Set<String> = []
    /// Said by the next ingest.
    private var notices: [String] = []
    public private(set) var configuration: ServiceConfiguration
    /// Traffic, events and records counted since the last save began, not yet in the database:
    /// also the estimate log's open window.
    var pending = PendingWrites()
    /// What failed saves held, written with the next batch (kept apart from ``pending``, which
    /// is the log's window).
    var carried = PendingWrites()
    private(set) var carriedBatches: [Int] = []  // the failed saves whose writes `carried` holds
    /// Every name's saved all-time total: advanced only by a save that succeeded. Dense: a
    /// dictionary of 4000 names kept 8192 slots of a name and a 48-byte tally.
    private(set) var savedTotals: DenseTable<String, BucketTally>
    /// Names with history that no link has now, as of the last save or note. A present link's
    /// record is its link, so it is not kept twice; a link that goes is remembered here.
    private(set) var history: [String: StoredInterface]
    private(set) var lostEvents: LostEvents
    /// Where the estimate log's window began.
    private var window: LogWindowBuilder
    /// The writes of saves begun and not finished, by batch (the batch's own storage, shared).
    var inFlight: [Int: PendingWrites] = [:]
    private(set) var nextBatch = 0
    /// When counters were last read (the start dump or a sample).
    private(set) var lastSample: MeterInstant?
    private(set) var lastSaveAt: Double?
    /// Why the last save failed; nil once one succeeds.
    private(set) var saveError: SaveFailure?
    /// The data plans' watch.
    var plans: PlanWatch
    /// Each plan's names and their classes, in plan order; nil when links or history changed.
    var planMembers: [PlanMembers]?
    /// Which plans each name's deltas count toward as they arrive; nil until the plans are first watched.
    var planRouting: PlanRouting?
    var planGeneration = 0
    /// Which network each NetworkManager device is on, and every network counted on.
    var networks: NetworkAssignments

    public init(bootID: String, configuration: ServiceConfiguration, history loaded: ServiceHistory, at start: Double) {
        meter = Meter(bootID: bootID, configuration: configuration.meter, restoring: loaded.meterState,
                      knownNames: loaded.knownNames)
        self.configuration = configuration
        savedTotals = DenseTable(loaded.totals)
        history = Dictionary(loaded.interfaces.map { ($0.name, $0) }) { _, last in last }
        lostEvents = LostEvents(loaded.eventsLost)
        window = LogWindowBuilder(start: start)
        plans = PlanWatch(plans: configuration.plans, states: loaded.planStates)
        networks = NetworkAssignments(loaded.networks, enabled: configuration.networks,
                                      hidingNames: configuration.hideNetworkNames)
        // Names kept before network_names = hidden go from the database with the next save.
        for record in networks.records.values where !loaded.networks.contains(record) {
            pending.networks[record.network.uuid] = record
        }
    }

    /// Replaces the configuration (a reload): every present link is classified again.
    public mutating func reconfigure(_ configuration: ServiceConfiguration) {
        self.configuration = configuration
        meter.configuration = configuration.meter
        plans.replacePlans(configuration.plans)
        planRouting = nil
        if configuration.hideNetworkNames {
            for record in networks.hideNames() { pending.networks[record.network.uuid] = record }
        }
        classifyAll()
    }

    // MARK: Observations

    /// The first full dump: resumes, baselines and counts per the meter's rules.
    public mutating func start(links dump: [Link], unparseable: Int, at instant: MeterInstant) -> Ingested {
        replaceLinks(with: dump, at: instant.wall)
        var output = meter.start(links: dump, at: instant)
        if unparseable > 0 {
            output.events.append(CounterEvent(
                kind: .eventsLost, at: instant.wall,
                detail: "\(unparseable) link message(s) of the start dump could not be parsed; "
                    + "those links are not metered until the kernel announces them again"))
        }
        lastSample = instant
        return take(output, ignoring: ignoredLinks)
    }

    /// What the kernel said since the last ingest: link observations in the order it said them,
    /// then — for a sample — the counters. Every link event is applied before the counters, so a
    /// sample never runs ahead of a deletion, re-creation or rename the kernel announced.
    public mutating func ingest(
        linkEvents: [LinkObservation], readings: [CounterReading]? = nil, at instant: MeterInstant
    ) -> Ingested {
        guard meter.phase == .running else { return Ingested() }
        var ingested = Ingested()
        for observation in linkEvents {
            let applied = apply(observation, at: instant)
            ingested.events += applied.events
            ingested.notices += applied.notices
        }
        if let readings {
            ingested.events += take(meter.apply(sample: readings, at: instant), ignoring: ignoredLinks).events
            lastSample = instant
        }
        return ingested
    }

    private mutating func apply(_ observation: LinkObservation, at instant: MeterInstant) -> Ingested {
        // Ignored before or after: a deleted link's verdict is gone after, a new one's only there after.
        var ignoring = ignoredLinks
        switch observation {
        case .event(.newOrChanged(let link)):
            if let old = links[link.key], old.name != link.name {
                // Renamed: the old name is absent now, with its history.
                remember(old, at: instant.wall)
            }
            if links[link.key]?.name != link.name { planMembers = nil }
            history[link.name] = nil
            links[link.key] = Self.kept(link)
            verdicts[link.key] = classify(link)
            ignoring.formUnion(ignoredLinks)
            return take(meter.apply(.newOrChanged(link), at: instant), ignoring: ignoring)
        case .event(.deleted(let link)):
            planMembers = nil
            if let present = links[link.key] { remember(present, at: instant.wall) }
            links[link.key] = nil
            verdicts[link.key] = nil
            return take(meter.apply(.deleted(link), at: instant), ignoring: ignoring)
        case .peer, .hostMark, .namespaceIDDeleted:
            return take(MeterOutput(), ignoring: ignoring)
        case .peerEventsLost(let link):
            return take(MeterOutput(events: [CounterEvent(
                kind: .eventsLost, at: instant.wall, interface: link.name,
                detail: "the socket that hears other namespaces lost messages as \(link.name) went; its end's final "
                    + "counters may be among them, so what it sent since the last sample may not be counted")]),
                ignoring: ignoring)
        case .resync(let dump, let namespace, let unparseable):
            replaceLinks(of: namespace, with: dump, at: instant.wall)
            ignoring.formUnion(ignoredLinks)
            var output = meter.resync(links: dump, of: namespace, at: instant)
            let vanished = output.events.filter { $0.kind == .vanished }.compactMap(\.interface)
            output.events.insert(CounterEvent(
                kind: .eventsLost, at: instant.wall, interface: Self.lossScope(of: namespace, dump: dump),
                detail: "link events were lost (\(unparseable > 0 ? "\(unparseable) unparseable message(s)" : "the event socket overflowed or a read failed")); "
                    + "resynchronised from a full dump; "
                    + (vanished.isEmpty ? "no known link vanished meanwhile" : "vanished meanwhile: \(vanished.joined(separator: ", "))")
                    + "; traffic of links that came and went between the lost events is not counted"), at: 0)
            return take(output, ignoring: ignoring)
        }
    }

    /// A full dump replaces the link table; links missing from it were last seen now.
    /// Every link, from the start dump.
    private mutating func replaceLinks(with dump: [Link], at time: Double) {
        let present = Set(dump.map(\.key))
        for link in links.values where !present.contains(link.key) { remember(link, at: time) }
        links = SlotTable(adopting: dump.map(Self.kept), key: \.key)
        // A new dictionary, not removals: one loaded with every name would keep its capacity.
        let names = Set(dump.map(\.name))
        history = history.filter { !names.contains($0.key) }
        classifyAll()
    }

    /// Whose figures a loss of `namespace`'s link events concerns: everyone's (nil) for the
    /// daemon's own; for a namespace metered from inside, the subjects under its prefix
    /// (`netns:vpn/`), read from the names in its dump (its `lo` at least), or everyone's when
    /// there is none to read it from.
    static func lossScope(of namespace: NamespaceID, dump: [Link]) -> String? {
        guard namespace != .own, let name = dump.first?.name, let slash = name.firstIndex(of: "/") else { return nil }
        return String(name[...slash])
    }

    /// The links of one namespace, from a resync dump of it; the others' stay as they are.
    private mutating func replaceLinks(of namespace: NamespaceID, with dump: [Link], at time: Double) {
        guard links.keys.contains(where: { $0.namespace != namespace }) else {
            return replaceLinks(with: dump, at: time)
        }
        let present = Set(dump.map(\.key))
        for link in links.values where link.namespace == namespace && !present.contains(link.key) {
            remember(link, at: time)
            links[link.key] = nil
        }
        for link in dump {
            links[link.key] = Self.kept(link)
            history[link.name] = nil
        }
        classifyAll()
    }

    /// A link as the table keeps it: without counters.
    private static func kept(_ link: Link) -> Link {
        var kept = link
        kept.counters = nil
        return kept
    }

    /// `link`'s class, its reason shared with every link classified for the same reason (a
    /// reason is text; thousands of veths would each hold a copy of "netlink kind veth").
    private mutating func classify(_ link: Link) -> Classification {
        if link.namespace != .own, let refused = admit(link) { return refused }
        return switch configuration.classifier.classify(link) {
        case .classified(let interfaceClass, let reason):
            .classified(interfaceClass, reason: reasons.insert(reason).memberAfterInsert)
        case .ignored(let reason):
            .ignored(reason: reasons.insert(reason).memberAfterInsert)
        }
    }

    /// Nil when a link of a namespace metered from inside may be a subject: its name is one the
    /// namespace has already, or the namespace has fewer than ``ServiceConfiguration/insideNamesLimit``.
    /// Past it the link is ignored (root inside can make links without end, and each name would
    /// be a history for good), and that is said once.
    private mutating func admit(_ link: Link) -> Classification? {
        guard let slash = link.name.utf8.firstIndex(of: UInt8(ascii: "/")) else { return nil }
        let prefix = String(link.name[...slash])
        var names = insideNames.removeValue(forKey: prefix) ?? Set(history.keys.filter { $0.hasPrefix(prefix) })
        defer { insideNames[prefix] = names }
        let limit = configuration.insideNamesLimit
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

    private mutating func classifyAll() {
        planMembers = nil
        reasons = []
        insideNames = [:]
        var verdicts = SlotTable<Classification>()
        for (key, link) in links { verdicts[key] = classify(link) }
        self.verdicts = verdicts
    }

    /// Links a config rule ignores: their traffic and events are dropped where they enter.
    private var ignoredLinks: Set<LinkKey> {
        // Without an ignore rule nothing is ignored: no pass over every link each sample.
        guard configuration.classifier.rules.contains(where: { $0.action == .ignore }) || !pastLimit.isEmpty else { return [] }
        // By position: the table's (key, value) iteration is generic (5 % of a sample at 10,000).
        var ignored = Set<LinkKey>()
        for case (let position, .ignored) in verdicts.values.enumerated() { ignored.insert(verdicts.keys[position]) }
        return ignored
    }

    /// Routes kept meter output to the pending writes and the log window.
    /// Consumed, so the ignored are removed in place: a sample's deltas are a hundred bytes a
    /// busy link, and a filtered copy doubled them.
    private mutating func take(_ output: consuming MeterOutput, ignoring ignored: Set<LinkKey>) -> Ingested {
        var kept = output
        if !ignored.isEmpty {
            kept.deltas.removeAll { ignored.contains(LinkKey($0.namespace, ifindex: $0.ifindex)) }
            kept.events.removeAll { event in
                event.ifindex.map { ignored.contains(LinkKey(event.namespace, ifindex: $0)) } ?? false
            }
        }
        // A loss that joins a run is in the run's label, not stored as an event of its own: a
        // tenant's flood of link events would otherwise store one every read.
        kept.events.removeAll { $0.kind == .eventsLost && !lostEvents.record($0.at, scope: $0.interface) }
        let store = configuration.store
        pending.add(kept, calendar: store.calendar, monthStartDay: store.monthStartDay(for:), routing: planRouting)
        let onNetworks = networks.networkDeltas(of: kept.deltas)
        if !onNetworks.isEmpty {
            pending.add(MeterOutput(deltas: onNetworks), calendar: store.calendar, monthStartDay: store.monthStartDay(for:),
                        routing: planRouting)
        }
        defer { notices = [] }
        return Ingested(events: kept.events, notices: notices)
    }

    // MARK: Saving

    /// Saves through `write` (the store's save) at once: ``beginSave(at:)`` and
    /// ``finishSave(_:error:)`` in one step, for callers that write on the same thread.
    public mutating func save(
        at now: Double, write: (inout SaveBatch) throws -> Void
    ) -> SaveOutcome {
        var batch = beginSave(at: now)
        do {
            try write(&batch)
            return finishSave(batch, error: nil)
        } catch {
            return finishSave(batch, error: SaveFailure(error))
        }
    }

    /// Hands everything pending to a save, with every present link's record and the meter state
    /// as of `now`, and closes the estimate log's window at `now` (the log and the database are
    /// written together). Until ``finishSave(_:error:)`` the batch's traffic still counts in
    /// every figure; several batches may be out at once, finished in the order they began.
    public mutating func beginSave(at now: Double) -> SaveBatch {
        pending.setMeterState(meter.exportState())
        for record in networks.activeSeen(at: now) { pending.networks[record.network.uuid] = record }
        nextBatch += 1
        let log = window.close(at: now, writes: pending, links: links, verdicts: verdicts, lostEvents: lostEvents)
        var writes = pending
        if !carried.isEmpty {
            writes.restore(older: carried)
            carried = PendingWrites()
        }
        let batch = SaveBatch(
            sequence: nextBatch, carries: carriedBatches, writes: writes, droppedEvents: writes.droppedEvents, at: now,
            log: log, present: links, verdicts: verdicts)
        carriedBatches = []
        inFlight[batch.sequence] = writes
        // Not reserved at the last window's size: while the batch is written both tables would
        // be whole, and the new one fills in a sample at a time.
        pending = PendingWrites()
        if let planRouting { pending.sumPlans(for: planRouting) }
        return batch
    }

    /// Takes a batch's result: written, its totals become saved ones; failed, everything in it
    /// is pending again, under what was counted since, for the next save.
    public mutating func finishSave(_ batch: SaveBatch, error: SaveFailure?) -> SaveOutcome {
        var outcome = SaveOutcome(droppedEvents: batch.droppedEvents, previousError: saveError)
        outcome.log = batch.log
        let writes = inFlight.removeValue(forKey: batch.sequence) ?? batch.writes
        if let error {
            var failed = writes
            failed.restore(older: carried)
            carried = failed
            carriedBatches += batch.writtenBatches
            saveError = error
            outcome.error = error
        } else {
            for (name, entry) in writes.traffic { savedTotals[name, default: BucketTally()] += entry.total }
            plans.saved(writes, batch: batch.sequence, routing: planRouting)
            saveError = nil
            lastSaveAt = batch.at
        }
        return outcome
    }

    /// Notes that `link` was present until `time` and is going: for the database and for the
    /// absent name's figures. (A present link's figures come from the link table; its record
    /// is written by each save, ``SaveBatch/presentRecords``.)
    private mutating func remember(_ link: Link, at time: Double) {
        guard let verdict = verdicts[link.key], let record = InterfaceRecord(link, verdict, at: time) else { return }
        planMembers = nil
        pending.note(record)
        history[link.name] = StoredInterface(
            name: link.name, interfaceClass: verdict.label, kind: link.kind,
            firstSeen: meter.firstSeen[link.name] ?? history[link.name]?.firstSeen ?? time, lastSeen: time)
    }

    /// Takes the store's saved totals and records again after something wrote history beside
    /// the service (an import). Call it only with nothing pending: the save before it ensures so.
    public mutating func replaceSaved(totals: [String: BucketTally], interfaces: [StoredInterface]) {
        savedTotals = DenseTable(totals)
        let present = Set(links.values.map(\.name))
        for record in interfaces where !present.contains(record.name) { history[record.name] = record }
        planMembers = nil
        plans.historyRewritten()
    }

    /// Forgets `name`'s history once the store deleted it (at `wall`); false when it was never
    /// seen. A name no link has is then unknown, as if never seen.
    public mutating func forget(_ name: String, at wall: Double) -> Bool {
        let known = isKnown(name)
        pending.forget(name)
        carried.forget(name)
        savedTotals[name] = nil
        history[name] = nil
        insideNames = [:]
        plans.forget(name)
        networks.forget(name)
        planMembers = nil
        meter.forgetHistory(of: name, at: wall)
        return known
    }
}
