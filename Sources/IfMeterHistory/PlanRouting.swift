import IfMeterCore
import IfMeterPlans

/// Which data plans a name's traffic counts toward, and each plan's current period: what lets
/// pending writes keep every plan's unsaved traffic summed as deltas arrive, so evaluating a
/// plan costs nothing per interface. A new one (another ``generation``) comes with new plans,
/// members or periods; sums made under another generation are worked out again from the spans.
public struct PlanRouting: Sendable {
    public let generation: Int
    /// Each name's slot: a plan's index when it is in one plan (the usual case: no list to
    /// read), `-2 - k` for the k-th of ``shared`` when in several. A name's pending entry keeps
    /// it, so a delta needs no lookup.
    let slotOf: [String: Int32]
    /// The plan indices of names in several plans.
    let shared: [[Int32]]
    /// Each plan's period, by index.
    public let bounds: [PlanBounds]

    /// `plansOf`: plan indices by name.
    public init(generation: Int, plansOf: [String: [Int32]], bounds: [PlanBounds]) {
        self.generation = generation
        var slotOf: [String: Int32] = [:]
        var shared: [[Int32]] = []
        var sharedSlot: [[Int32]: Int32] = [:]
        for (name, plans) in plansOf where !plans.isEmpty {
            if plans.count == 1 {
                slotOf[name] = plans[0]
                continue
            }
            slotOf[name] = sharedSlot[plans] ?? {
                shared.append(plans)
                let slot = -1 - Int32(shared.count)
                sharedSlot[plans] = slot
                return slot
            }()
        }
        self.slotOf = slotOf
        self.shared = shared
        self.bounds = bounds
    }

    /// `name`'s slot, -1 when it is in no plan.
    func slot(of name: String) -> Int32 { slotOf[name] ?? -1 }
}

/// A plan's traffic in writes, as summed under one ``PlanRouting``.
public struct PlanTallies: Sendable {
    /// The routing they were summed under; -1: none (not kept).
    public private(set) var generation = -1
    /// By plan index: its traffic in its period.
    public private(set) var byPlan: [BucketTally] = []

    public init() {}

    /// Empty sums for `routing`.
    init(for routing: PlanRouting) {
        generation = routing.generation
        byPlan = Array(repeating: BucketTally(), count: routing.bounds.count)
    }

    /// The sums for `routing`, if they were made under it.
    public func sums(for routing: PlanRouting) -> [BucketTally]? {
        generation == routing.generation ? byPlan : nil
    }

    /// A delta at `time` of a name in `slot`, counted toward its plans whose period holds it.
    mutating func add(_ tally: BucketTally, slot: Int32, at time: Int64, routing: PlanRouting) {
        guard slot != -1, generation == routing.generation else { return }
        if slot >= 0 {
            if routing.bounds[Int(slot)].contains(time) { byPlan[Int(slot)] += tally }
            return
        }
        for plan in routing.shared[Int(-2 - slot)] where routing.bounds[Int(plan)].contains(time) { byPlan[Int(plan)] += tally }
    }

    /// Adds `other`'s sums when both were made under the same routing; otherwise none are kept.
    mutating func merge(_ other: PlanTallies) {
        guard generation == other.generation, byPlan.count == other.byPlan.count else {
            self = PlanTallies()
            return
        }
        for index in byPlan.indices { byPlan[index] += other.byPlan[index] }
    }
}
