/// What happened to one epoch's counters between two readings (docs/METER.md rules 1, 5, 6).
///
/// Pure: the same two readings always give the same step, whatever came before.
public enum CounterStep: Hashable, Sendable {
    /// Rule 1: every counter is at least its previous value; the delta is the difference.
    case advanced(Traffic)
    /// Rule 6 (32-bit sources only): the counters in `wrapped` passed 2³² once; their delta is
    /// `(2³² − previous) + current`, exactly.
    case wrapped(Traffic, wrapped: [String])
    /// Rule 5: a counter went backwards and no wrap explains it: the counters restarted, and
    /// everything they show now is new. The delta is the current values.
    case reset(Traffic)

    public static let names = ["rx_bytes", "tx_bytes", "rx_packets", "tx_packets"]

    /// 2³², where a 32-bit counter wraps.
    public static let wrapModulus: UInt64 = 1 << 32

    /// Classifies the move from `previous` to `current`. On a 32-bit source, a counter that went
    /// backwards is a wrap when the wrapped delta is at most `wrapLimit`; otherwise the whole
    /// set is a reset.
    public init(from previous: Traffic, to current: Traffic, is32Bit: Bool, wrapLimit: UInt64) {
        // The case of nearly every sample, without building arrays.
        if current.isAtLeast(previous) {
            self = .advanced(current.combined(with: previous, -))
            return
        }
        let before = previous.values, now = current.values
        var deltas: [UInt64] = []
        var wrapped: [String] = []
        for index in 0..<4 {
            if now[index] >= before[index] {
                deltas.append(now[index] - before[index])
                continue
            }
            guard is32Bit, before[index] < Self.wrapModulus, now[index] < Self.wrapModulus else {
                self = .reset(current)
                return
            }
            let delta = (Self.wrapModulus - before[index]) + now[index]
            guard delta <= wrapLimit else {
                self = .reset(current)
                return
            }
            deltas.append(delta)
            wrapped.append(Self.names[index])
        }
        let delta = Traffic(values: deltas)
        self = wrapped.isEmpty ? .advanced(delta) : .wrapped(delta, wrapped: wrapped)
    }

    public var delta: Traffic {
        switch self {
        case .advanced(let delta), .wrapped(let delta, _), .reset(let delta): delta
        }
    }
}
