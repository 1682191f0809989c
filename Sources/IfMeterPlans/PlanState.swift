/// What the store keeps of one plan's watch, so a restart never fires a threshold again: the
/// period being watched and the thresholds already fired in it (docs/PLANS.md).
public struct PlanState: Hashable, Sendable {
    /// ``Plan/fingerprint`` of the plan it was watched as: another one starts afresh.
    public var fingerprint: String
    public var periodStart: Int64
    /// Bytes of each threshold fired this period (``Plan/bytes(at:)``): a new limit or new
    /// shares fire what they have not fired yet, never what they already did.
    public var fired: [UInt64]

    public init(fingerprint: String, periodStart: Int64, fired: [UInt64] = []) {
        self.fingerprint = fingerprint
        self.periodStart = periodStart
        self.fired = fired
    }

    /// The fired thresholds as stored: `800,1000` (comma-separated bytes).
    public var firedText: String { fired.map(String.init).joined(separator: ",") }

    /// Reads ``firedText``; nil if it is not a list of byte counts.
    public static func fired(parsing text: String) -> [UInt64]? {
        if text.isEmpty { return [] }
        var values: [UInt64] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let value = UInt64(part) else { return nil }
            values.append(value)
        }
        return values
    }
}
