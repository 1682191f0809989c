import IfMeterPlans
import IfMeterCore
import IfMeterHistory

/// Periods whose saved traffic the store must read before their plans are evaluated.
public struct PlanBaselineRequest: Sendable {
    public var periods: [PlanBounds]
    /// Every save batch begun before the request: the store, answering in order, has written them.
    let throughBatch: Int
}

/// The service's part in keeping watch over data plans (``PlanWatch``): which names each plan
/// counts, and how deltas are routed to plans as they arrive.
struct ServicePlans: Sendable {
    var watch: PlanWatch
    /// Each plan's names and their classes, in plan order; nil when links or history changed.
    private(set) var members: [PlanMembers]?
    /// Which plans each name's deltas count toward as they arrive; nil until the plans are first watched.
    private(set) var routing: PlanRouting?
    private var generation = 0

    init(_ watch: PlanWatch) {
        self.watch = watch
    }

    /// Links, history or networks changed: the members are worked out again when next needed.
    mutating func membersChanged() {
        members = nil
    }

    mutating func replacePlans(_ plans: [Plan]) {
        watch.replacePlans(plans)
        routing = nil
    }

    mutating func historyRewritten() {
        members = nil
        watch.historyRewritten()
    }

    mutating func forget(_ name: String) {
        watch.forget(name)
        members = nil
    }

    /// A save wrote `writes`.
    mutating func saved(_ writes: PendingWrites, batch: Int) {
        watch.saved(writes, batch: batch, routing: routing)
    }

    /// Every plan's figures at `now` whose period's saved traffic has been read.
    func figures(at now: Double, calendar: BucketCalendar, links: LinkTable, networks: NetworkAssignments,
                 apps: [String], saves: SaveQueue, lostEvents: LostEvents) -> [PlanFigures] {
        let members = members ?? self.members(of: links, networks: networks, apps: apps)
        return watch.figures(at: now, calendar: calendar, members: { members[$0] }, sumsCurrent: self.members != nil,
                             unsavedSum: { [routing] in saves.unsavedSum(ofPlan: $0, in: $1, routing: routing) },
                             unsaved: saves.unsavedTally(of:in:), lostEvents: lostEvents)
    }

    /// The same figures summed name by name from the saved baselines and the unsaved spans,
    /// without the running sums: what those must always equal (the tests compare them).
    func figuresRecounted(at now: Double, calendar: BucketCalendar, links: LinkTable, networks: NetworkAssignments,
                          apps: [String], saves: SaveQueue, lostEvents: LostEvents) -> [PlanFigures] {
        let members = members(of: links, networks: networks, apps: apps)
        return watch.figures(at: now, calendar: calendar, members: { members[$0] }, sumsCurrent: false,
                             unsavedSum: { _, _ in nil }, unsaved: saves.unsavedTally(of:in:), lostEvents: lostEvents)
    }

    /// Evaluates the plans at `now`, routing deltas anew when plans, members or periods changed:
    /// the events of thresholds crossed, and the states that changed.
    mutating func watch(at now: Double, calendar: BucketCalendar, links: LinkTable, networks: NetworkAssignments,
                        apps: [String], saves: inout SaveQueue, lostEvents: LostEvents)
        -> (events: [CounterEvent], changed: [String: PlanState]) {
        var reroute = routing == nil
        let members: [PlanMembers]
        if let known = self.members {
            members = known
        } else {
            members = self.members(of: links, networks: networks, apps: apps)
            self.members = members
            watch.savedChanged()
            reroute = true
        }
        if watch.prepare(at: now, calendar: calendar, members: { members[$0] }) { reroute = true }
        if reroute { route(members) }
        if let routing { saves.resumPlans(for: routing) }
        let figures = figures(at: now, calendar: calendar, links: links, networks: networks, apps: apps, saves: saves, lostEvents: lostEvents)
        let (fired, changed) = watch.watch(figures, calendar: calendar)
        return (fired.map(\.counterEvent), changed)
    }

    /// A new routing of deltas to plans (plans, members or periods changed): every part not yet
    /// saved sums its plans again from its spans.
    private mutating func route(_ members: [PlanMembers]) {
        var plansOf: [String: [Int32]] = [:]
        for (index, named) in members.enumerated() {
            for name in named.names { plansOf[name, default: []].append(Int32(index)) }
        }
        generation += 1
        let bounds = watch.currentBounds.map { $0 ?? PlanBounds(start: 0, end: 0) }
        routing = PlanRouting(generation: generation, plansOf: plansOf, bounds: bounds)
    }

    /// Each plan's names: present links (not ignored) and names with history, with their class.
    func members(of table: LinkTable, networks: NetworkAssignments, apps: [String]) -> [PlanMembers] {
        guard !watch.plans.isEmpty else { return [] }
        var candidates: [(name: String, interfaceClass: String?)] = []
        var presentNames = Set<String>()
        for (key, link) in table.links {
            guard let verdict = table.verdicts[key] else { continue }
            if case .ignored = verdict { continue }
            if presentNames.insert(link.name).inserted { candidates.append((link.name, verdict.label)) }
        }
        for record in table.history.values where !presentNames.contains(record.name) {
            candidates.append((record.name, record.interfaceClass))
        }
        candidates.sort { $0.name < $1.name }
        let records = networks.records
        let networks = records.values.sorted { $0.network.uuid < $1.network.uuid }
        return watch.plans.map { plan in
            let members = Self.subjects(of: plan, candidates: candidates, networks: networks, apps: apps, records: records)
            // A plan on the internet counts each subject's internet scope (docs/PLANS.md).
            guard plan.traffic != .all else { return members }
            return PlanMembers(names: members.names.map(plan.counted), tunnels: members.tunnels.map(plan.counted))
        }
    }

    /// The subjects `plan` chooses among present and remembered links (`candidates`), networks and
    /// applications, whatever traffic it counts of them.
    private static func subjects(of plan: Plan, candidates: [(name: String, interfaceClass: String?)],
                                 networks: [NetworkRecord], apps: [String], records: [String: NetworkRecord]) -> PlanMembers {
        if plan.countsApplications {
            return PlanMembers(names: applications(of: plan, among: apps, networks: records), tunnels: [])
        }
        if plan.countsNetworks {
            let chosen = networks.filter { plan.includes($0.network) }.map(\.network)
            return PlanMembers(names: chosen.map(\.subject), tunnels: chosen.filter(\.isTunnel).map(\.subject))
        }
        let chosen = candidates.filter { plan.includes($0.name, interfaceClass: $0.interfaceClass) }
        return PlanMembers(names: chosen.map(\.name),
                           tunnels: chosen.filter { $0.interfaceClass == InterfaceClass.tunnel.rawValue }.map(\.name))
    }
}

extension ServicePlans {
    /// A plan's applications among `apps` (every subject counted by cgroup): with networks
    /// named too, their subjects on those networks (`netapp:UUID/SUBJECT`), else their own.
    static func applications(of plan: Plan, among apps: [String], networks: [String: NetworkRecord]) -> [String] {
        let chosen = plan.selectors.filter(\.isApplication)
        let onNetworks = plan.selectors.filter(\.isNetwork)
        let isChosen = { (subject: String) in chosen.contains { $0.matches(subject, interfaceClass: nil) } }
        guard !onNetworks.isEmpty else { return apps.filter(isChosen) }
        return apps.filter { name in
            guard name.hasPrefix("netapp:"), let (uuid, subject) = NetworkAppKind.split(name.dropFirst("netapp:".count)),
                  isChosen(String(subject)), let record = networks[String(uuid)] else { return false }
            return onNetworks.contains { $0.matches(record.network) }
        }
    }
}

/// What the daemon asks of the plans, through the service that knows every name, its class and
/// its unsaved traffic.
extension MeterService {
    /// Every plan's figures at `now` whose period's saved traffic has been read.
    public func planFigures(at now: Double) -> [PlanFigures] {
        plans.figures(at: now, calendar: configuration.store.calendar, links: table, networks: networks, apps: apps.subjectNames, saves: saves,
                      lostEvents: lostEvents)
    }

    /// The same figures summed name by name, without the running sums (the tests compare them).
    func planFiguresRecounted(at now: Double) -> [PlanFigures] {
        plans.figuresRecounted(at: now, calendar: configuration.store.calendar, links: table, networks: networks, apps: apps.subjectNames,
                               saves: saves, lostEvents: lostEvents)
    }

    /// Evaluates the plans after an ingest: what fired is pending (with the states that say so)
    /// and returned for watchers and the journal. Nothing before the first dump, and nothing
    /// while the wall clock is doubted (``clock``): a period ended or a threshold fired by a
    /// wrong clock cannot be taken back. What was crossed meanwhile fires once it is believed.
    public mutating func watchPlans(at now: Double) -> Ingested {
        guard meter.phase == .running, clock.isTrusted, !plans.watch.plans.isEmpty else { return Ingested() }
        let calendar = configuration.store.calendar
        let (events, changed) = plans.watch(at: now, calendar: calendar, links: table, networks: networks, apps: apps.subjectNames,
                                            saves: &saves, lostEvents: lostEvents)
        guard !changed.isEmpty || !events.isEmpty else { return Ingested() }
        saves.pending.planStates.merge(changed) { _, newer in newer }
        saves.pending.add(MeterOutput(events: events), calendar: calendar,
                          monthStartDay: configuration.store.monthStartDay(for:))
        return Ingested(events: events)
    }

    /// What the store must read for the plans at `now`, if anything; asked once.
    public mutating func planBaselinesNeeded(at now: Double) -> PlanBaselineRequest? {
        let periods = plans.watch.baselinesNeeded(at: now, calendar: configuration.store.calendar)
        return periods.isEmpty ? nil : PlanBaselineRequest(periods: periods, throughBatch: saves.nextBatch)
    }

    /// The store's answer to a ``PlanBaselineRequest``: each period's saved traffic by name.
    public mutating func takePlanBaselines(_ tallies: [PlanBounds: [String: BucketTally]], for request: PlanBaselineRequest) {
        plans.watch.take(tallies, asked: request.periods, throughBatch: request.throughBatch)
    }
}
