import IfMeterPlans
import IfMeterCore
import IfMeterHistory

/// Periods whose saved traffic the store must read before their plans are evaluated.
public struct PlanBaselineRequest: Sendable {
    public var periods: [PlanBounds]
    /// Every save batch begun before the request: the store, answering in order, has written them.
    let throughBatch: Int
}

/// The service's part in keeping watch over data plans (``PlanWatch``): it knows every name, its
/// class and its unsaved traffic.
extension MeterService {
    /// Every plan's figures at `now` whose period's saved traffic has been read.
    public func planFigures(at now: Double) -> [PlanFigures] {
        let members = planMembers ?? currentPlanMembers()
        return plans.figures(at: now, calendar: configuration.store.calendar, members: { members[$0] },
                             sumsCurrent: planMembers != nil, unsavedSum: unsavedSum(ofPlan:in:),
                             unsaved: unsavedTally(of:in:), lostEvents: lostEvents)
    }

    /// The same figures summed name by name from the saved baselines and the unsaved spans,
    /// without the running sums: what those must always equal (the tests compare them).
    func planFiguresRecounted(at now: Double) -> [PlanFigures] {
        let members = currentPlanMembers()
        return plans.figures(at: now, calendar: configuration.store.calendar, members: { members[$0] },
                             sumsCurrent: false, unsavedSum: { _, _ in nil }, unsaved: unsavedTally(of:in:),
                             lostEvents: lostEvents)
    }

    /// Evaluates the plans after an ingest: what fired is pending (with the states that say so)
    /// and returned for watchers and the journal. Nothing before the first dump.
    public mutating func watchPlans(at now: Double) -> Ingested {
        guard meter.phase == .running, !plans.plans.isEmpty else { return Ingested() }
        var reroute = planRouting == nil
        if planMembers == nil {
            planMembers = currentPlanMembers()
            plans.savedChanged()
            reroute = true
        }
        let members = planMembers ?? []
        if plans.prepare(at: now, calendar: configuration.store.calendar, members: { members[$0] }) { reroute = true }
        if reroute { routePlans(members) }
        resumPlans()
        let (fired, changed) = plans.watch(planFigures(at: now), calendar: configuration.store.calendar)
        guard !changed.isEmpty || !fired.isEmpty else { return Ingested() }
        let events = fired.map(\.counterEvent)
        pending.planStates.merge(changed) { _, newer in newer }
        pending.add(MeterOutput(events: events), calendar: configuration.store.calendar,
                    monthStartDay: configuration.store.monthStartDay(for:))
        return Ingested(events: events)
    }

    /// What the store must read for the plans at `now`, if anything; asked once.
    public mutating func planBaselinesNeeded(at now: Double) -> PlanBaselineRequest? {
        let periods = plans.baselinesNeeded(at: now, calendar: configuration.store.calendar)
        return periods.isEmpty ? nil : PlanBaselineRequest(periods: periods, throughBatch: nextBatch)
    }

    /// The store's answer to a ``PlanBaselineRequest``: each period's saved traffic by name.
    public mutating func takePlanBaselines(_ tallies: [PlanBounds: [String: BucketTally]], for request: PlanBaselineRequest) {
        plans.take(tallies, asked: request.periods, throughBatch: request.throughBatch)
    }

    /// A new routing of deltas to plans (plans, members or periods changed): every part not yet
    /// saved sums its plans again from its spans.
    private mutating func routePlans(_ members: [PlanMembers]) {
        var plansOf: [String: [Int32]] = [:]
        for (index, named) in members.enumerated() {
            for name in named.names { plansOf[name, default: []].append(Int32(index)) }
        }
        planGeneration += 1
        let bounds = plans.currentBounds.map { $0 ?? PlanBounds(start: 0, end: 0) }
        planRouting = PlanRouting(generation: planGeneration, plansOf: plansOf, bounds: bounds)
    }

    /// Parts whose plan sums are not for the current routing (new, merged after a failed save,
    /// a name forgotten) sum them again.
    private mutating func resumPlans() {
        guard let routing = planRouting else { return }
        if pending.planTallies.generation != routing.generation { pending.sumPlans(for: routing) }
        if carried.planTallies.generation != routing.generation { carried.sumPlans(for: routing) }
        for (batch, part) in inFlight where part.planTallies.generation != routing.generation {
            inFlight[batch]?.sumPlans(for: routing)
        }
    }

    /// A plan's unsaved traffic in `bounds`, summed as it arrived; nil when some part's sums are
    /// not for this routing (then each member's is added).
    func unsavedSum(ofPlan index: Int, in bounds: PlanBounds) -> BucketTally? {
        guard let routing = planRouting, routing.bounds.indices.contains(index), routing.bounds[index] == bounds,
              var sum = pending.planTallies.sums(for: routing)?[index] else { return nil }
        if !carried.isEmpty {
            guard let more = carried.planTallies.sums(for: routing)?[index] else { return nil }
            sum += more
        }
        for part in inFlight.values {
            guard let more = part.planTallies.sums(for: routing)?[index] else { return nil }
            sum += more
        }
        return sum
    }

    /// `name`'s traffic in `bounds` not yet in the store: pending, carried and in saves not finished.
    func unsavedTally(of name: String, in bounds: PlanBounds) -> BucketTally? {
        var sum = pending.unsavedTally(of: name, in: bounds)
        func add(_ part: PendingWrites) {
            guard let more = part.unsavedTally(of: name, in: bounds) else { return }
            if sum == nil { sum = more } else { sum! += more }
        }
        // Without a failed save or one in flight (nearly always) that is one lookup.
        if !carried.traffic.isEmpty { add(carried) }
        for part in inFlight.values { add(part) }
        return sum
    }

    /// Each plan's names: present links (not ignored) and names with history, with their class.
    func currentPlanMembers() -> [PlanMembers] {
        guard !plans.plans.isEmpty else { return [] }
        var candidates: [(name: String, interfaceClass: String?)] = []
        var presentNames = Set<String>()
        for (key, link) in links {
            guard let verdict = verdicts[key] else { continue }
            if case .ignored = verdict { continue }
            if presentNames.insert(link.name).inserted { candidates.append((link.name, verdict.label)) }
        }
        for record in history.values where !presentNames.contains(record.name) {
            candidates.append((record.name, record.interfaceClass))
        }
        candidates.sort { $0.name < $1.name }
        let networks = self.networks.records.values.sorted { $0.network.uuid < $1.network.uuid }
        return plans.plans.map { plan in
            if plan.countsNetworks {
                let chosen = networks.filter { plan.includes($0.network) }.map(\.network)
                return PlanMembers(names: chosen.map(\.subject), tunnels: chosen.filter(\.isTunnel).map(\.subject))
            }
            let chosen = candidates.filter { plan.includes($0.name, interfaceClass: $0.interfaceClass) }
            return PlanMembers(names: chosen.map(\.name),
                               tunnels: chosen.filter { $0.interfaceClass == InterfaceClass.tunnel.rawValue }.map(\.name))
        }
    }
}
