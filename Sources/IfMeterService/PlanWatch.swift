import IfMeterPlans
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
    /// `events-lost` events in the period that concern its members.
    public var eventsLost: Int
    /// Shares of the limit fired this period.
    public var fired: [Double]
    /// Calendar days left in the period, today included.
    public var daysLeft: Int
    /// Where the plan is in the watch's list (-1 for figures made elsewhere).
    var index = -1
    /// A plan by network whose period holds traffic of an interface whose network was not
    /// known (`network:unknown`): some of it may have crossed the plan's networks, and is not in
    /// ``used``.
    public var networkUnknown = false
    /// Where the watch is when it is on a later period than this one: a wall clock set back
    /// (or one ahead that was believed, then set right) never takes it back, so its thresholds
    /// wait until the clock reaches that period, or the plan is changed (docs/PLANS.md).
    public var watchingLater: Int64?
    /// A plan on the internet: what its subjects carried in the period that could not be told
    /// local or internet (`scope:unknown/…`, docs/SCOPES.md), in its direction. Not in ``used``,
    /// and said: a link not covered by the scope programs would otherwise read as no internet.
    public var unknownBytes: UInt64?

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
        PeriodPace(start: Double(bounds.start), end: Double(bounds.end), at: at).projected(used)
    }
    /// What is left per day for the rest of the period, today included.
    public var dailyBudget: UInt64 { left / UInt64(max(daysLeft, 1)) }
    /// A tunnel and other links in one plan: the tunnel's traffic is counted again beneath it.
    public var countsTunnelTwice: Bool { !tunnels.isEmpty && tunnels.count < members.count }
    /// The labels of ``used``: those of what it sums (docs/PLANS.md, "Reading it").
    public var labels: [EstimateLabel] {
        tally.labels(tunnel: !tunnels.isEmpty, eventsLost: eventsLost) + (networkUnknown ? [.networkUnknown] : [])
            + ((unknownBytes ?? 0) > 0 ? [.scopeUnknown] : [])
    }
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

    /// What an evaluation reuses of a plan until its period ends: its bounds, the date its period
    /// ends on, and its members' saved traffic summed (nil when a baseline or the members changed).
    struct Current: Sendable {
        var bounds: PlanBounds
        var lastDay: Int
        var saved: BucketTally?
    }
    /// By plan index; nil until first evaluated.
    private var current: [Current?]
    private var fingerprints: [String]

    public init(plans: [Plan] = [], states: [String: PlanState] = [:]) {
        self.plans = plans
        self.states = states
        current = Array(repeating: nil, count: plans.count)
        fingerprints = plans.map(\.fingerprint)
    }

    /// A reload: unchanged plans keep their state and baselines; a changed one keeps what its
    /// fingerprint allows (``PlanState/fired`` by bytes).
    public mutating func replacePlans(_ plans: [Plan]) {
        self.plans = plans
        current = Array(repeating: nil, count: plans.count)
        fingerprints = plans.map(\.fingerprint)
    }

    /// Something beside the saves wrote history (an import): every baseline is read again.
    mutating func historyRewritten() {
        baselines = [:]
        requested = []
        savedChanged()
    }

    /// The names a plan sums changed, or a baseline did: the sums are worked out again.
    mutating func savedChanged() {
        for index in current.indices { current[index]?.saved = nil }
    }

    /// Each plan's current period, once evaluated (by plan index).
    var currentBounds: [PlanBounds?] { current.map { $0?.bounds } }

    /// Each plan's period at `now`, kept until it ends; a new one drops the baselines no plan is
    /// in. True when a period moved.
    @discardableResult
    private mutating func refresh(at now: Double, calendar: BucketCalendar) -> Bool {
        let time = Int64(now.rounded(.down))
        var moved = false
        for index in plans.indices where !(current[index]?.bounds.contains(time) ?? false) {
            let bounds = plans[index].period.bounds(containing: time, calendar: calendar)
            current[index] = Current(bounds: bounds, lastDay: calendar.dayNumber(containing: bounds.end - 1))
            moved = true
        }
        if moved {
            let held = Set(current.compactMap { $0?.bounds })
            baselines = baselines.filter { held.contains($0.key) }
        }
        return moved
    }

    /// Sums each plan's members' saved traffic in its period where that is not known yet; true
    /// when a period moved.
    @discardableResult
    mutating func prepare(at now: Double, calendar: BucketCalendar, members: (Int) -> PlanMembers) -> Bool {
        let moved = refresh(at: now, calendar: calendar)
        for index in plans.indices where current[index]?.saved == nil {
            guard let bounds = current[index]?.bounds, let baseline = baselines[bounds] else { continue }
            var sum = BucketTally()
            for name in members(index).names { if let saved = baseline.tallies[name] { sum += saved } }
            current[index]?.saved = sum
        }
        return moved
    }

    /// A save that succeeded: its traffic in each held period joins that period's baseline, and
    /// each plan's saved sum takes the batch's sum for it when `routing` made that.
    mutating func saved(_ writes: PendingWrites, batch: Int, routing: PlanRouting?) {
        let sums = routing.flatMap { writes.planTallies.sums(for: $0) }
        for index in current.indices {
            guard let bounds = current[index]?.bounds, let baseline = baselines[bounds], baseline.throughBatch < batch else { continue }
            if let sums, let routing, routing.bounds.indices.contains(index), routing.bounds[index] == bounds,
               current[index]?.saved != nil {
                current[index]?.saved? += sums[index]
            } else {
                current[index]?.saved = nil
            }
        }
        // In place: a copy of a period's tallies would be every name's, at every save.
        for bounds in Array(baselines.keys) where baselines[bounds]!.throughBatch < batch {
            writes.forEachTally(in: bounds) { name, tally in
                baselines[bounds]!.tallies[name, default: BucketTally()] += tally
            }
            baselines[bounds]!.throughBatch = batch
        }
    }

    mutating func forget(_ name: String) {
        for bounds in baselines.keys { baselines[bounds]?.tallies[name] = nil }
        savedChanged()
    }

    /// The periods whose saved traffic must be read from the store before their plans can be
    /// evaluated at `now`; marked as asked.
    mutating func baselinesNeeded(at now: Double, calendar: BucketCalendar) -> [PlanBounds] {
        refresh(at: now, calendar: calendar)
        var needed: [PlanBounds] = []
        for bounds in current.compactMap({ $0?.bounds })
        where baselines[bounds] == nil && requested.insert(bounds).inserted {
            needed.append(bounds)
        }
        return needed
    }

    /// The store's answer to ``baselinesNeeded(at:calendar:)``, which includes every batch up to
    /// `throughBatch` (the store answers in order).
    /// A period missing from `tallies` (the read failed) is asked again at the next evaluation.
    mutating func take(_ tallies: [PlanBounds: [String: BucketTally]], asked periods: [PlanBounds], throughBatch: Int) {
        for bounds in periods where requested.remove(bounds) != nil {
            if let byName = tallies[bounds] { baselines[bounds] = Baseline(tallies: byName, throughBatch: throughBatch) }
        }
        savedChanged()
    }

    /// Each plan whose baseline is there, at `now`. `members` lists the names of the plan at an
    /// index, with their class; `unsaved` is a name's traffic in a period not yet in the store.
    /// With `sumsCurrent`, the saved sums ``prepare(at:calendar:members:)`` left are for these members.
    /// `unsavedSum` is a plan's unsaved traffic in a period, summed as it arrived, when that is
    /// known; else each member's (`unsaved`) is added.
    func figures(at now: Double, calendar: BucketCalendar, members: (Int) -> PlanMembers, sumsCurrent: Bool,
                 unsavedSum: (Int, PlanBounds) -> BucketTally?, unsaved: (String, PlanBounds) -> BucketTally?,
                 lostEvents: LostEvents) -> [PlanFigures] {
        let time = Int64(now.rounded(.down))
        let today = calendar.dayNumber(containing: time)
        return plans.indices.compactMap { index in
            let plan = plans[index]
            let known = current[index].flatMap { $0.bounds.contains(time) ? $0 : nil }
            let bounds = known?.bounds ?? plan.period.bounds(containing: time, calendar: calendar)
            guard let baseline = baselines[bounds] else { return nil }
            let named = members(index)
            var tally: BucketTally
            if sumsCurrent, let saved = known?.saved {
                tally = saved
            } else {
                tally = BucketTally()
                for name in named.names { if let saved = baseline.tallies[name] { tally += saved } }
            }
            if let sum = unsavedSum(index, bounds) {
                tally += sum
            } else {
                for name in named.names { if let more = unsaved(name, bounds) { tally += more } }
            }
            let state = states[plan.name].flatMap { $0.fingerprint == fingerprints[index] && $0.periodStart == bounds.start ? $0 : nil }
            let lastDay = known?.lastDay ?? calendar.dayNumber(containing: bounds.end - 1)
            let daysLeft = lastDay - today + 1
            var figures = PlanFigures(
                plan: plan, bounds: bounds, at: now, tally: tally, members: named.names, tunnels: named.tunnels,
                eventsLost: lostEvents.count(from: Double(bounds.start), to: Double(bounds.end), forAny: named.names),
                fired: plan.thresholds.filter { state?.fired.contains(plan.bytes(at: $0)) ?? false },
                daysLeft: max(daysLeft, 1))
            figures.index = index
            if let watched = states[plan.name], watched.fingerprint == fingerprints[index], watched.periodStart > bounds.start {
                figures.watchingLater = watched.periodStart
            }
            figures.networkUnknown = plan.countsNetworks
                && (baseline.tallies[NetworkSubject.unknown] != nil || unsaved(NetworkSubject.unknown, bounds) != nil)
            if plan.traffic == .internet {
                var unknown = BucketTally()
                for name in named.names {
                    guard let (scope, subject) = ScopeKind.parse(name), scope == .internet else { continue }
                    let other = ScopeKind.subject(subject, scope: .unknown)
                    if let saved = baseline.tallies[other] { unknown += saved }
                    if let more = unsaved(other, bounds) { unknown += more }
                }
                figures.unknownBytes = plan.direction.bytes(of: unknown.traffic)
            }
            return figures
        }
    }

    /// Evaluates every plan whose baseline is there: a new period and each threshold crossed for
    /// the first time in a period are events; the states that changed are returned to be saved.
    mutating func watch(_ figures: [PlanFigures], calendar: BucketCalendar) -> (events: [PlanEvent], changed: [String: PlanState]) {
        var events: [PlanEvent] = []
        var changed: [String: PlanState] = [:]
        for figure in figures {
            let plan = figure.plan
            let fingerprint = fingerprints.indices.contains(figure.index) ? fingerprints[figure.index] : plan.fingerprint
            // A wall clock set back before the period watched never rolls it back: the
            // thresholds it fired stay fired, and the earlier period is not watched again.
            if let known = states[plan.name], known.fingerprint == fingerprint, figure.bounds.start < known.periodStart { continue }
            let firstLook = watchedSinceStart.insert(plan.name).inserted
            var state: PlanState
            if let known = states[plan.name], known.fingerprint == fingerprint {
                state = known
                if state.periodStart != figure.bounds.start {
                    events.append(Self.event(.periodStarted, figure, threshold: nil, whileDown: firstLook, calendar: calendar))
                    state = PlanState(fingerprint: fingerprint, periodStart: figure.bounds.start)
                    changed[plan.name] = state
                }
            } else {
                // Watched for the first time (or as another plan): nothing it crossed before was
                // said, so it is said now, not marked as found at start.
                state = PlanState(fingerprint: fingerprint, periodStart: figure.bounds.start)
                changed[plan.name] = state
            }
            let knownBefore = states[plan.name]?.fingerprint == fingerprint
            for threshold in plan.thresholds {
                let bytes = plan.bytes(at: threshold)
                guard figure.used >= bytes, !state.fired.contains(bytes) else { continue }
                state.fired.append(bytes)
                changed[plan.name] = state
                events.append(Self.event(.threshold, figure, threshold: threshold,
                                         whileDown: firstLook && knownBefore, calendar: calendar))
            }
            states[plan.name] = state
        }
        return (events, changed)
    }

    static func event(_ kind: PlanEvent.Kind, _ figure: PlanFigures, threshold: Double?, whileDown: Bool,
                      calendar: BucketCalendar) -> PlanEvent {
        let plan = figure.plan
        let period = "the period from \(DayNumber.date(calendar.dayNumber(containing: figure.bounds.start))) "
            + "to \(DayNumber.date(calendar.dayNumber(containing: figure.bounds.end)))"
        let used = "\(figure.used) of \(plan.limit) bytes (\(plan.direction.rawValue))"
        let detail = switch kind {
        case .threshold:
            "plan \(plan.name) crossed \(ValueGrammar.percentText(threshold ?? 0)) of its limit: \(used) used in \(period)"
                + (whileDown ? "; crossed while ifmeterd was not running, found at its start" : "")
        case .periodStarted:
            "plan \(plan.name) began \(period); \(used) used in it so far"
        }
        return PlanEvent(
            kind: kind, at: figure.at, detail: detail,
            facts: PlanEventFacts(plan: plan.name, direction: plan.direction.rawValue, threshold: threshold,
                                 used: figure.used, limit: plan.limit, periodStart: figure.bounds.start,
                                 periodEnd: figure.bounds.end, whileDown: whileDown))
    }

}
