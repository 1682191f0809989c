/// A data plan's event: a new period began, or a threshold was crossed for the first time in
/// one (docs/PLANS.md). What ``PlanWatch`` fires and what `ifmeter notify` and the journal act
/// on. It is kept and sent in the one event stream beside counter events, as a ``CounterEvent``
/// with its ``PlanEventFacts`` (``counterEvent``), and read back from one (``init(_:)``).
public struct PlanEvent: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        case threshold
        case periodStarted
    }

    public var kind: Kind
    public var at: Double
    public var detail: String
    public var facts: PlanEventFacts

    public init(kind: Kind, at: Double, detail: String, facts: PlanEventFacts) {
        (self.kind, self.at, self.detail, self.facts) = (kind, at, detail, facts)
    }

    /// The plan event a stored or streamed event is; nil for any other.
    public init?(_ event: CounterEvent) {
        guard let facts = event.plan else { return nil }
        switch event.kind {
        case .planThreshold: kind = .threshold
        case .planPeriodStarted: kind = .periodStarted
        default: return nil
        }
        (at, detail, self.facts) = (event.at, event.detail, facts)
    }

    /// As the event stream and the events table carry it.
    public var counterEvent: CounterEvent {
        CounterEvent(kind: counterKind, at: at, detail: detail, plan: facts)
    }

    /// Its kind among counter events: `plan-threshold` or `plan-period-started`.
    public var counterKind: CounterEvent.Kind {
        switch kind {
        case .threshold: .planThreshold
        case .periodStarted: .planPeriodStarted
        }
    }

    /// What identifies it: the daemon fires each kind once per plan, period and threshold.
    public var key: String {
        "\(counterKind.rawValue) \(facts.plan) \(facts.periodStart) \(facts.threshold.map { String($0) } ?? "-")"
    }
}

/// What a plan event says, beside its detail text: which plan, the threshold crossed, and the
/// figures when it was. A class, so events of every other kind stay as small as they were.
public final class PlanEventFacts: Hashable, Sendable {
    public let plan: String
    /// `rx`, `tx` or `total`.
    public let direction: String
    /// The share of the limit crossed (0.8 is 80 %); nil for a period's start.
    public let threshold: Double?
    /// Bytes used in the period when it happened.
    public let used: UInt64
    public let limit: UInt64
    public let periodStart: Int64
    public let periodEnd: Int64
    /// Crossed while the daemon was not running: found at its start, not at the sample that crossed it.
    public let whileDown: Bool

    public init(plan: String, direction: String, threshold: Double?, used: UInt64, limit: UInt64,
                periodStart: Int64, periodEnd: Int64, whileDown: Bool = false) {
        (self.plan, self.direction, self.threshold, self.used, self.limit) = (plan, direction, threshold, used, limit)
        (self.periodStart, self.periodEnd, self.whileDown) = (periodStart, periodEnd, whileDown)
    }

    public static func == (a: PlanEventFacts, b: PlanEventFacts) -> Bool {
        (a.plan, a.direction, a.threshold, a.used, a.limit) == (b.plan, b.direction, b.threshold, b.used, b.limit)
            && (a.periodStart, a.periodEnd, a.whileDown) == (b.periodStart, b.periodEnd, b.whileDown)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(plan)
        hasher.combine(periodStart)
        hasher.combine(threshold)
        hasher.combine(used)
    }
}
