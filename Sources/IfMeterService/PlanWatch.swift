import IfMeterCore
import IfMeterHistory

/// The names a plan sums, sorted, and those of them that are tunnels: worked out when links or
/// history change, not at every evaluation.
public struct PlanMembers: Hashable, Sendable {
    public var names: [String]
    public var tunnels: [String]
}

/// A plan's figures now: its members' traffic in the current period, saved and not.
public struct PlanFigures: Hashable, Sendable {
    public var plan: Plan
    public var bounds: PlanBounds
    /// When it was worked out.
    public var at: Double
    /// The members' traffic in the period, summed, with what broke its continuity.
    public var tally: BucketTally
    /// The names it sums, sorted.
    public var members: [String]
    /// Those of them that are tunnels.
    public var tunnels: [String]
    /// `events-lost` events in the period.
    public var eventsLost: Int
    /// Shares of the limit fired this period.
    public var fired: [Double]
    /// Calendar days left in the period, today included.
    public var daysLeft: Int

    public init(plan: Plan, bounds: PlanBounds, at: Double, tally: BucketTally, members: [String], tunnels: [String] = [],
                eventsLost: Int = 0, fired: [Double] = [], daysLeft: Int) {
        (self.plan, self.bounds, self.at, self.tally, self.members) = (plan, bounds, at, tally, members)
        (self.tunnels, self.eventsLost, self.fired, self.daysLeft) = (tunnels, eventsLost, fired, daysLeft)
    }

    public var used: UInt64 { plan.direction.bytes(of: tally.traffic) }
    public var left: UInt64 { plan.limit > used ? plan.limit - used : 0 }
    /// Used over the limit (1 is all of it).
    public var share: Double { Double(used) / Double(plan.limit) }
    /// What the period will have used at its end at this period's pace so far.
    public var projected: UInt64 {
        let elapsed = at - Double(bounds.start)
        guard elapsed > 0 else { return used }
        let scaled = Double(used) * Double(bounds.end - bounds.start) / elapsed
        return scaled >= 1.8e19 ? .max : UInt64(scaled)
    }
    /// What is left per day for the rest of the period, today included.
    public var dailyBudget: UInt64 { left / UInt64(max(daysLeft, 1)) }
    /// A tunnel and other links in one plan: the tunnel's traffic is counted again beneath it.
    public var countsTunnelTwice: Bool { !tunnels.isEmpty && tunnels.count < members.count }
    /// The labels of ``used``: those of what it sums (DESIGN §1).
    public var labels: [EstimateLabel] { tally.labels(tunnel: !tunnels.isEmpty, eventsLost: eventsLost) }
}

/// Keeps watch over the configured plans (docs/PLANS.md): each one's figures from saved plus
/// unsaved traffic in its period, and an event the first time a threshold is crossed in a period
/// and when a period begins. What has fired is a ``PlanState`` the store keeps, so a restart
/// fires nothing again.
///
/// The saved part of a period comes from the store once (a *baseline* per period, by name) and is
/// then advanced by each save that succeeds, like the service's saved totals; until a plan's
/// baseline is there the plan is not evaluated. States: per plan, not watched yet (no state, or
/// one of another fingerprint) → watching a period → the next period.
public struct PlanWatch: Sendable {
    /// One period's saved traffic by name, and the last save batch already in it.
    struct Baseline: Sendable {
        var tallies: [String: BucketTally]
        var throughBatch: Int
    }

    public private(set) var plans: [Plan]
    public private(set) var states: [String: PlanState]
    private(set) var baselines: [PlanBounds: Baseline] = [:]
    /// Periods asked of the store and not answered yet.
    private var requested: Set<PlanBounds> = []
    /// Plans evaluated since the daemon started: what the others find crossed at their first
    /// evaluation was crossed while the daemon was down.
    private var watchedSinceStart: Set<String> = []

    public init(plans: [Plan] = [], states: [String: PlanState] = [:]) {
        self.plans = plans
        self.states = states
    }

    /// A reload: unchanged plans keep their state and baselines; a changed one keeps what its
    /// fingerprint allows (``PlanState/fired`` by bytes).
    public mutating func replacePlans(_ plans: [Plan]) {
        self.plans = plans
    }

    /// Something beside the saves wrote history (an import): every baseline is read again.
    mutating func historyRewritten() {
        baselines = [:]
        requested = []
    }

    /// A save that succeeded: its traffic in each held period joins that period's baseline.
    mutating func saved(_ writes: PendingWrites, batch: Int) {
        for (bounds, baseline) in baselines where baseline.throughBatch < batch {
            var tallies = baseline.tallies
            for (name, _) in writes.traffic {
                if let tally = writes.unsavedTally(of: name, in: bounds) { tallies[name, default: BucketTally()] += tally }
            }
            baselines[bounds] = Baseline(tallies: tallies, throughBatch: batch)
        }
    }

    mutating func forget(_ name: String) {
        for bounds in baselines.keys { baselines[bounds]?.tallies[name] = nil }
    }

    /// The periods whose saved traffic must be read from the store before their plans can be
    /// evaluated at `now`; marked as asked.
    mutating func baselinesNeeded(at now: Double, calendar: BucketCalendar) -> [PlanBounds] {
        var needed: [PlanBounds] = []
        for plan in plans {
            let bounds = plan.period.bounds(containing: Int64(now.rounded(.down)), calendar: calendar)
            if baselines[bounds] != nil || !requested.insert(bounds).inserted { continue }
            needed.append(bounds)
        }
        // Periods no plan is in any more.
        let current = Set(plans.map { $0.period.bounds(containing: Int64(now.rounded(.down)), calendar: calendar) })
        baselines = baselines.filter { current.contains($0.key) }
        return needed
    }

    /// The store's answer to ``baselinesNeeded(at:calendar:)``, which includes every batch up to
    /// `throughBatch` (the store answers in order).
    /// A period missing from `tallies` (the read failed) is asked again at the next evaluation.
    mutating func take(_ tallies: [PlanBounds: [String: BucketTally]], asked periods: [PlanBounds], throughBatch: Int) {
        for bounds in periods where requested.remove(bounds) != nil {
            if let byName = tallies[bounds] { baselines[bounds] = Baseline(tallies: byName, throughBatch: throughBatch) }
        }
    }

    /// Each plan whose baseline is there, at `now`. `members` lists the names of the plan at an
    /// index, with their class; `unsaved` is a name's traffic in a period not yet in the store.
    func figures(at now: Double, calendar: BucketCalendar, members: (Int) -> PlanMembers,
                 unsaved: (String, PlanBounds) -> BucketTally?, lostEvents: LostEventTimes) -> [PlanFigures] {
        plans.indices.compactMap { index in
            let plan = plans[index]
            let bounds = plan.period.bounds(containing: Int64(now.rounded(.down)), calendar: calendar)
            guard let baseline = baselines[bounds] else { return nil }
            var tally = BucketTally()
            let named = members(index)
            for name in named.names {
                if let saved = baseline.tallies[name] { tally += saved }
                if let more = unsaved(name, bounds) { tally += more }
            }
            let state = states[plan.name].flatMap { $0.fingerprint == plan.fingerprint && $0.periodStart == bounds.start ? $0 : nil }
            let daysLeft = calendar.dayNumber(containing: bounds.end - 1) - calendar.dayNumber(containing: Int64(now)) + 1
            return PlanFigures(
                plan: plan, bounds: bounds, at: now, tally: tally, members: named.names, tunnels: named.tunnels,
                eventsLost: lostEvents.count(from: Double(bounds.start), to: Double(bounds.end)),
                fired: plan.thresholds.filter { state?.fired.contains(plan.bytes(at: $0)) ?? false },
                daysLeft: max(daysLeft, 1))
        }
    }

    /// Evaluates every plan whose baseline is there: a new period and each threshold crossed for
    /// the first time in a period are events; the states that changed are returned to be saved.
    mutating func watch(_ figures: [PlanFigures], calendar: BucketCalendar) -> (events: [CounterEvent], changed: [String: PlanState]) {
        var events: [CounterEvent] = []
        var changed: [String: PlanState] = [:]
        for figure in figures {
            let plan = figure.plan
            let firstLook = watchedSinceStart.insert(plan.name).inserted
            var state: PlanState
            if let known = states[plan.name], known.fingerprint == plan.fingerprint {
                state = known
                if state.periodStart != figure.bounds.start {
                    if figure.bounds.start > state.periodStart {
                        events.append(Self.event(.planPeriodStarted, figure, threshold: nil, whileDown: firstLook, calendar: calendar))
                    }
                    state = PlanState(fingerprint: plan.fingerprint, periodStart: figure.bounds.start)
                    changed[plan.name] = state
                }
            } else {
                // Watched for the first time (or as another plan): nothing it crossed before was
                // said, so it is said now, not marked as found at start.
                state = PlanState(fingerprint: plan.fingerprint, periodStart: figure.bounds.start)
                changed[plan.name] = state
            }
            let knownBefore = states[plan.name]?.fingerprint == plan.fingerprint
            for threshold in plan.thresholds {
                let bytes = plan.bytes(at: threshold)
                guard figure.used >= bytes, !state.fired.contains(bytes) else { continue }
                state.fired.append(bytes)
                changed[plan.name] = state
                events.append(Self.event(.planThreshold, figure, threshold: threshold,
                                         whileDown: firstLook && knownBefore, calendar: calendar))
            }
            states[plan.name] = state
        }
        return (events, changed)
    }

    static func event(_ kind: CounterEvent.Kind, _ figure: PlanFigures, threshold: Double?, whileDown: Bool,
                      calendar: BucketCalendar) -> CounterEvent {
        let plan = figure.plan
        let period = "the period from \(PlanPeriod.date(ofDayNumber: calendar.dayNumber(containing: figure.bounds.start))) "
            + "to \(PlanPeriod.date(ofDayNumber: calendar.dayNumber(containing: figure.bounds.end)))"
        let used = "\(figure.used) of \(plan.limit) bytes (\(plan.direction.rawValue))"
        let detail = switch kind {
        case .planThreshold:
            "plan \(plan.name) crossed \(percent(threshold ?? 0)) of its limit: \(used) used in \(period)"
                + (whileDown ? "; crossed while ifmeterd was not running, found at its start" : "")
        default:
            "plan \(plan.name) began \(period); \(used) used in it so far"
        }
        return CounterEvent(
            kind: kind, at: figure.at, detail: detail,
            plan: PlanEventFacts(plan: plan.name, direction: plan.direction.rawValue, threshold: threshold,
                                 used: figure.used, limit: plan.limit, periodStart: figure.bounds.start,
                                 periodEnd: figure.bounds.end, whileDown: whileDown))
    }

    /// `80%`, `12.5%`.
    public static func percent(_ share: Double) -> String {
        let tenths = (share * 1000).rounded()
        return tenths.truncatingRemainder(dividingBy: 10) == 0 ? "\(Int(tenths / 10))%" : "\(tenths / 10)%"
    }
}
