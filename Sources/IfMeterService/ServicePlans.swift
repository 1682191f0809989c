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
                             unsaved: unsavedTally(of:in:), lostEvents: lostEvents)
    }

    /// Evaluates the plans after an ingest: what fired is pending (with the states that say so)
    /// and returned for watchers and the journal. Nothing before the first dump.
    public mutating func watchPlans(at now: Double) -> Ingested {
        guard meter.phase == .running, !plans.plans.isEmpty else { return Ingested() }
        if planMembers == nil { planMembers = currentPlanMembers() }
        let (events, changed) = plans.watch(planFigures(at: now), calendar: configuration.store.calendar)
        guard !changed.isEmpty || !events.isEmpty else { return Ingested() }
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

    /// `name`'s traffic in `bounds` not yet in the store: pending, carried and in saves not finished.
    func unsavedTally(of name: String, in bounds: PlanBounds) -> BucketTally? {
        var sum = pending.unsavedTally(of: name, in: bounds)
        func add(_ part: PendingWrites) {
            guard let more = part.unsavedTally(of: name, in: bounds) else { return }
            if sum == nil { sum = more } else { sum! += more }
        }
        add(carried)
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
        return plans.plans.map { plan in
            let chosen = candidates.filter { plan.includes($0.name, interfaceClass: $0.interfaceClass) }
            return PlanMembers(names: chosen.map(\.name),
                               tunnels: chosen.filter { $0.interfaceClass == InterfaceClass.tunnel.rawValue }.map(\.name))
        }
    }
}
