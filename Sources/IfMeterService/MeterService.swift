import IfMeterApps
import IfMeterCore
import IfMeterHistory

/// The one owner of what is counted now. It holds the meter and the parts that each keep one
/// thing (the link table and its classes, ``LinkTable``; the writes not yet saved and the saved
/// totals, ``SaveQueue``; the plans' members and routing, ``ServicePlans``; the networks,
/// ``NetworkAssignments``), and passes each observation and save to the parts it concerns.
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
    public private(set) var configuration: ServiceConfiguration
    /// The links and their classes, and the names with history no link has now.
    private(set) var table: LinkTable
    /// The writes not yet saved, and every name's saved total.
    var saves: SaveQueue
    private(set) var lostEvents: LostEvents
    /// The links' deltas since the last sample, for their remainders (docs/APPS.md, "Exact"):
    /// kept once applications are counted; nil otherwise.
    private var linkDeltas: [MeterDelta]?
    /// The same, for the links' split by scope (docs/SCOPES.md): kept once the scope map is read.
    /// Apart from ``linkDeltas``: each part takes them with its own first read.
    private var scopeLinkDeltas: [MeterDelta]?
    /// Links deleted since the last sample, as their applications are counted: the next sample
    /// attributes their last deltas.
    private var goneLinks: [Int32: AppLink] = [:]
    /// When counters were last read (the start dump or a sample).
    private(set) var lastSample: MeterInstant?
    /// The data plans' watch, their members and routing.
    var plans: ServicePlans
    /// Which network each NetworkManager device is on, and every network counted on.
    var networks: NetworkAssignments
    /// The applications counted by cgroup, and each link's remainder (docs/APPS.md).
    private(set) var apps: ServiceApps
    /// Each counted link's split into local, internet and unknown (docs/SCOPES.md).
    private(set) var scopes: ServiceScopes
    /// The deltas counted since the last journal append or save began (``beginJournal()``).
    var journalDeltas: [MeterDelta] = []
    /// Each epoch's counters as the database or the journal last has them: an append carries
    /// only the epochs that moved since.
    var journalledLast: [JournalKey: Traffic] = [:]
    /// Whether the wall clock may be believed for what cannot be undone (``ClockTrust``): while
    /// it is doubted no plan's period ends and no threshold fires, and the daemon prunes nothing.
    public private(set) var clock: ClockTrust
    /// Every interface's alias: the config's, then those `ifmeter alias` kept.
    public private(set) var aliases: InterfaceAliases

    public init(bootID: String, configuration: ServiceConfiguration, history loaded: ServiceHistory, at start: Double) {
        let restored = loaded.meterState.map { Self.journalled($0, loaded.journal) }
        meter = Meter(bootID: bootID, configuration: configuration.meter, restoring: restored,
                      knownNames: loaded.knownNames)
        self.configuration = configuration
        aliases = InterfaceAliases(configured: configuration.aliases, stored: loaded.aliases)
        // A database from before the anchor was kept: the last sample's instant stands for it.
        clock = ClockTrust(anchor: restored.flatMap { $0.clockAnchor ?? $0.lastInstant },
                           sameBoot: loaded.meterState?.bootID == bootID)
        table = LinkTable(history: loaded.interfaces)
        saves = SaveQueue(savedTotals: loaded.totals, windowStart: start)
        lostEvents = LostEvents(loaded.eventsLost)
        plans = ServicePlans(PlanWatch(plans: configuration.plans, states: loaded.planStates))
        apps = ServiceApps(loaded: loaded.apps, bootID: bootID)
        scopes = ServiceScopes(loaded: loaded.scopes, subjects: loaded.scopeSubjects, bootID: bootID)
        networks = NetworkAssignments(loaded.networks, enabled: configuration.networks,
                                      hidingNames: configuration.hideNetworkNames)
        // Names kept before network_names = hidden go from the database with the next save.
        for record in networks.records.values where !loaded.networks.contains(record) {
            saves.pending.networks[record.network.uuid] = record
        }
        for record in loaded.journal {
            saves.pending.add(MeterOutput(deltas: record.deltas), calendar: configuration.store.calendar,
                              monthStartDay: configuration.store.monthStartDay(for:))
        }
    }

    /// Replaces the configuration (a reload): every present link is classified again.
    public mutating func reconfigure(_ configuration: ServiceConfiguration) {
        self.configuration = configuration
        meter.configuration = configuration.meter
        aliases.replaceConfigured(configuration.aliases)
        plans.replacePlans(configuration.plans)
        if configuration.hideNetworkNames {
            for record in networks.hideNames() { saves.pending.networks[record.network.uuid] = record }
        }
        table.classifyAll(by: configuration)
        plans.membersChanged()
    }

    // MARK: Observations

    /// The clocks as read at `instant` (before its sample is ingested); `synchronised` when a
    /// time source said the wall clock is right. Returns what changed in the clock's trust.
    public mutating func observeClock(_ instant: MeterInstant, synchronised: Bool) -> ClockTrust.Transition? {
        clock.observe(instant, synchronised: synchronised)
    }

    /// The first full dump: resumes, baselines and counts per the meter's rules.
    ///
    /// `apps`, read just after the dump, is the applications' first read: the baseline of a
    /// daemon that never read a map, as the dump is the links' (docs/APPS.md, "Counting"); after
    /// a restart, what the map counted since the last save, against what the links did.
    /// `scopes`, the interface scope program's map read with it, is the same for the links'
    /// split (docs/SCOPES.md).
    public mutating func start(links dump: [Link], unparseable: Int, apps: AppRead? = nil, scopes: ScopeCounts? = nil,
                               at instant: MeterInstant) -> Ingested {
        replaceLinks(with: dump, at: instant.wall)
        var output = meter.start(links: dump, at: instant)
        if unparseable > 0 {
            output.events.append(CounterEvent(
                kind: .eventsLost, at: instant.wall,
                detail: "\(unparseable) link message(s) of the start dump could not be parsed; "
                    + "those links are not metered until the kernel announces them again"))
        }
        lastSample = instant
        // Applications counted before: what the links carried while the daemon was down is
        // attributed with the first read, which counts what the map counted meanwhile.
        if self.apps.meter.mapID != nil || apps != nil { linkDeltas = [] }
        if self.scopes.counting || scopes != nil { scopeLinkDeltas = [] }
        let ingested = take(output, ignoring: ignoredLinks)
        attribute(apps, scopes, at: instant)
        return ingested
    }

    /// What the kernel said since the last ingest: link observations in the order it said them,
    /// then — for a sample — the counters. Every link event is applied before the counters, so a
    /// sample never runs ahead of a deletion, re-creation or rename the kernel announced.
    ///
    /// `apps`, read with a sample just after its counters, is counted against the links'
    /// deltas of the whole ingest (docs/APPS.md, "Exact"); so is `scopes`, the interface scope
    /// program's map, for the links' split (docs/SCOPES.md).
    public mutating func ingest(
        linkEvents: [LinkObservation], readings: [CounterReading]? = nil, apps: AppRead? = nil, scopes: ScopeCounts? = nil,
        at instant: MeterInstant
    ) -> Ingested {
        guard meter.phase == .running else { return Ingested() }
        var ingested = Ingested()
        if apps != nil || self.apps.reading, linkDeltas == nil { linkDeltas = [] }
        if scopes != nil || self.scopes.counting, scopeLinkDeltas == nil { scopeLinkDeltas = [] }
        for observation in linkEvents {
            let applied = apply(observation, at: instant)
            ingested.events += applied.events
            ingested.notices += applied.notices
        }
        if let readings {
            ingested.events += take(meter.apply(sample: readings, at: instant), ignoring: ignoredLinks).events
            lastSample = instant
        }
        if readings != nil { attribute(apps, scopes, at: instant) }
        return ingested
    }

    private mutating func apply(_ observation: LinkObservation, at instant: MeterInstant) -> Ingested {
        // Ignored before or after: a deleted link's verdict is gone after, a new one's only there after.
        var ignoring = ignoredLinks
        switch observation {
        case .event(.newOrChanged(let link)):
            if table.announce(link, at: instant.wall, by: configuration, firstSeen: meter.firstSeen, noting: &saves.pending) {
                plans.membersChanged()
            }
            ignoring.formUnion(ignoredLinks)
            return take(meter.apply(.newOrChanged(link), at: instant), ignoring: ignoring)
        case .event(.deleted(let link)):
            // Its last deltas, and the applications' on it, are attributed at the next sample.
            if linkDeltas != nil || scopeLinkDeltas != nil, link.namespace == .own, let counted = appLink(link.ifindex) {
                goneLinks[link.ifindex] = counted
            }
            table.delete(link, at: instant.wall, firstSeen: meter.firstSeen, noting: &saves.pending)
            plans.membersChanged()
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
            table.replace(of: namespace, with: dump, at: instant.wall, by: configuration, firstSeen: meter.firstSeen,
                          noting: &saves.pending)
            plans.membersChanged()
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
    private mutating func replaceLinks(with dump: [Link], at time: Double) {
        table.replace(with: dump, at: time, by: configuration, firstSeen: meter.firstSeen, noting: &saves.pending)
        plans.membersChanged()
    }

    /// Whose figures a loss of `namespace`'s link events concerns: everyone's (nil) for the
    /// daemon's own; for a namespace metered from inside, the subjects under its prefix
    /// (`netns:vpn/`), read from the names in its dump (its `lo` at least), or everyone's when
    /// there is none to read it from.
    static func lossScope(of namespace: NamespaceID, dump: [Link]) -> String? {
        guard namespace != .own, let name = dump.first?.name, let slash = name.firstIndex(of: "/") else { return nil }
        return String(name[...slash])
    }

    /// A sample attributes the links' deltas since the last: with the applications' read, or,
    /// once they were read, without one (the maps went): then all of it is the remainders'.
    /// And splits them by scope with the scope map's read, or, once it was read, without one:
    /// then all of it is unknown, so the three scopes always add up to the links (after a
    /// restart too: what the links carried since the save is unknown when the start cannot
    /// read the map).
    private mutating func attribute(_ apps: AppRead?, _ scopes: ScopeCounts?, at instant: MeterInstant) {
        let link = { [table, goneLinks] (ifindex: Int32) in Self.appLink(ifindex, in: table) ?? goneLinks[ifindex] }
        var deltas: [MeterDelta] = []
        if let counted = linkDeltas, apps != nil || self.apps.reading {
            deltas = apps.map {
                self.apps.ingest($0, linkDeltas: counted, link: link, networkOf: networkSubject(ofLink:),
                                 bootID: meter.bootID, at: instant.wall)
            } ?? self.apps.remainders(of: counted, link: link, networkOf: networkSubject(ofLink:), bootID: meter.bootID,
                                      at: instant.wall)
            // A subject counted for the first time may be a plan's: the plans' next watch routes
            // anew, and sums what is not saved yet (this delta too) again.
            if self.apps.newSubjectsCounted { plans.membersChanged() }
            linkDeltas = nil
            for ifindex in goneLinks.keys { self.apps.linkGone(ifindex: ifindex) }
        }
        // Applications' scoped copies (`scope:S/app:…`) come with their deltas.
        self.scopes.counted(deltas.lazy.map(\.name), at: instant.wall)
        if let counted = scopeLinkDeltas, scopes != nil || self.scopes.counting {
            deltas += self.scopes.ingest(scopes, linkDeltas: counted, link: link, networkOf: networkSubject(ofLink:),
                                         bootID: meter.bootID, at: instant.wall)
            scopeLinkDeltas = nil
        }
        let store = configuration.store
        if !deltas.isEmpty {
            saves.pending.add(MeterOutput(deltas: deltas), calendar: store.calendar,
                              monthStartDay: store.monthStartDay(for:), routing: plans.routing)
        }
        if linkDeltas == nil, scopeLinkDeltas == nil { goneLinks = [:] }
    }

    /// A counted link of the daemon's namespace, as the applications on it are counted: nil for
    /// loopback (never traffic) and links a rule ignores.
    private func appLink(_ ifindex: Int32) -> AppLink? { Self.appLink(ifindex, in: table) }

    private static func appLink(_ ifindex: Int32, in table: LinkTable) -> AppLink? {
        let key = LinkKey(.own, ifindex: ifindex)
        guard let link = table.links[key], case .classified(let linkClass, _)? = table.verdicts[key],
              linkClass != .loopback else { return nil }
        return AppLink(ifindex: ifindex, name: link.name, headerLength: AppLink.headerLength(arpType: link.arpType),
                       scoped: AppLink.isScoped(linkClass))
    }

    /// The network the daemon's link `ifindex` is on now (`network:UUID`, `network:unknown`);
    /// nil for a link NetworkManager does not manage.
    private func networkSubject(ofLink ifindex: Int32) -> String? {
        guard networks.hasAssignments, let link = table.links[LinkKey(.own, ifindex: ifindex)] else { return nil }
        return networks.subjectOf[link.name]
    }

    /// Links a config rule ignores: their traffic and events are dropped where they enter.
    private var ignoredLinks: Set<LinkKey> { table.ignoredLinks(by: configuration) }

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
        linkDeltas? += kept.deltas
        scopeLinkDeltas? += kept.deltas
        let store = configuration.store
        saves.pending.add(kept, calendar: store.calendar, monthStartDay: store.monthStartDay(for:), routing: plans.routing)
        let onNetworks = networks.networkDeltas(of: kept.deltas)
        journalDeltas += kept.deltas
        journalDeltas += onNetworks
        if !onNetworks.isEmpty {
            saves.pending.add(MeterOutput(deltas: onNetworks), calendar: store.calendar,
                              monthStartDay: store.monthStartDay(for:), routing: plans.routing)
        }
        return Ingested(events: kept.events, notices: table.takeNotices())
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
        journalDeltas = []
        var state = meter.exportState()
        journalledLast = Self.lastCounters(state)
        state.clockAnchor = clock.anchor
        saves.pending.setMeterState(state)
        if let write = apps.beginSave() { saves.pending.apps = write }
        if let state = scopes.beginSave() { saves.pending.scopes = state }
        for record in networks.activeSeen(at: now) { saves.pending.networks[record.network.uuid] = record }
        return saves.begin(at: now, links: table.links, verdicts: table.verdicts, lostEvents: lostEvents,
                           routing: plans.routing)
    }

    /// Takes a batch's result: written, its totals become saved ones; failed, everything in it
    /// is pending again, under what was counted since, for the next save.
    public mutating func finishSave(_ batch: SaveBatch, error: SaveFailure?) -> SaveOutcome {
        let (outcome, written) = saves.finish(batch, error: error)
        if error != nil {
            apps.saveFailed()
            scopes.saveFailed()
        }
        if let written {
            plans.saved(written, batch: batch.sequence)
            apps.saved(written.apps)
        }
        return outcome
    }

    /// Takes the store's saved totals and records again after something wrote history beside
    /// the service (an import). Call it only with nothing pending: the save before it ensures so.
    public mutating func replaceSaved(totals: [String: BucketTally], interfaces: [StoredInterface]) {
        saves.replaceSaved(totals: totals)
        table.rememberAgain(interfaces)
        plans.historyRewritten()
    }

    /// Sets (nil: removes) the alias `ifmeter alias` gave `name`, once the store kept it.
    public mutating func storeAlias(_ alias: String?, for name: String) {
        aliases.store(alias, for: name)
    }

    /// Forgets `name`'s history once the store deleted it (at `wall`); false when it was never
    /// seen. A name no link has is then unknown, as if never seen.
    public mutating func forget(_ name: String, at wall: Double) -> Bool {
        let known = isKnown(name)
        saves.forget(name)
        table.forget(name)
        plans.forget(name)
        networks.forget(name)
        apps.forget(name)
        scopes.forget(name)
        meter.forgetHistory(of: name, at: wall)
        return known
    }
}
