/// The four metered quantities: bytes and packets in each direction.
///
/// Used both for raw counter values (cumulative, as the kernel reports them) and for deltas.
public struct Traffic: Hashable, Sendable {
    public var rxBytes: UInt64
    public var txBytes: UInt64
    public var rxPackets: UInt64
    public var txPackets: UInt64

    public init(rxBytes: UInt64 = 0, txBytes: UInt64 = 0, rxPackets: UInt64 = 0, txPackets: UInt64 = 0) {
        self.rxBytes = rxBytes
        self.txBytes = txBytes
        self.rxPackets = rxPackets
        self.txPackets = txPackets
    }

    public init(_ counters: LinkCounters) {
        self.init(rxBytes: counters.rxBytes, txBytes: counters.txBytes,
                  rxPackets: counters.rxPackets, txPackets: counters.txPackets)
    }

    public static let zero = Traffic()

    public var isZero: Bool { self == .zero }

    /// The four values in a fixed order, for per-counter rules.
    public var values: [UInt64] { [rxBytes, txBytes, rxPackets, txPackets] }

    public init(values: [UInt64]) {
        precondition(values.count == 4, "Traffic has four counters")
        self.init(rxBytes: values[0], txBytes: values[1], rxPackets: values[2], txPackets: values[3])
    }

    /// Applies `combine` counter by counter.
    public func combined(with other: Traffic, _ combine: (UInt64, UInt64) -> UInt64) -> Traffic {
        Traffic(rxBytes: combine(rxBytes, other.rxBytes), txBytes: combine(txBytes, other.txBytes),
                rxPackets: combine(rxPackets, other.rxPackets),
                txPackets: combine(txPackets, other.txPackets))
    }

    /// Counter by counter, saturating at 2^64 − 1: a sum past it is not a figure ifmeter can
    /// report, and must not trap a daemon. Where the overflow must be recorded (totals), use
    /// ``adding(_:)``.
    public static func + (lhs: Traffic, rhs: Traffic) -> Traffic { lhs.adding(rhs).sum }
    public static func += (lhs: inout Traffic, rhs: Traffic) { lhs = lhs + rhs }

    /// The saturated sum, and whether any counter had to be held at 2^64 − 1.
    public func adding(_ other: Traffic) -> (sum: Traffic, overflowed: Bool) {
        var overflowed = false
        let sum = combined(with: other) { left, right in
            let (value, overflow) = left.addingReportingOverflow(right)
            overflowed = overflowed || overflow
            return overflow ? UInt64.max : value
        }
        return (sum, overflowed)
    }

    /// Whether every counter is at least `other`'s: what a later reading of the same counters is.
    public func isAtLeast(_ other: Traffic) -> Bool {
        rxBytes >= other.rxBytes && txBytes >= other.txBytes
            && rxPackets >= other.rxPackets && txPackets >= other.txPackets
    }

    /// Per-counter maximum: how a deletion's final counters are taken (docs/METER.md rule 4).
    public static func max(_ lhs: Traffic, _ rhs: Traffic) -> Traffic {
        lhs.combined(with: rhs) { Swift.max($0, $1) }
    }
}
