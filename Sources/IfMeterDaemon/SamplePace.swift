import IfMeterPlatform

/// When a requested `sample` is taken: at once when an admin asks; otherwise no sooner than
/// ``spacing`` after the last requested one, so a non-admin's pipelined flood costs one dump a
/// second and the periodic schedule is untouched. Requests arriving before it is taken share it.
/// Times are `CLOCK_MONOTONIC` microseconds, as ``EventLoop/now``.
struct SamplePace: Equatable {
    /// Most samples non-admin peers can cause: one a second, whoever asks how often.
    static let spacing = EventLoop.microseconds(.seconds(1))

    /// When the sample that answers the waiting requests is to be taken, if any wait.
    private(set) var pending: UInt64?
    /// When a requested sample was last taken.
    private(set) var lastTaken: UInt64?

    /// A request at `now`: returns when the sample answering it is taken, which is also the
    /// new ``pending`` (an admin's request brings a pending one forward; no one's delays it).
    mutating func request(now: UInt64, isAdmin: Bool) -> UInt64 {
        let earliest = isAdmin ? now : max(now, lastTaken.map { $0 + Self.spacing } ?? now)
        let at = min(pending ?? .max, earliest)
        pending = at
        return at
    }

    /// The pending sample was taken at `now`.
    mutating func taken(at now: UInt64) {
        pending = nil
        lastTaken = now
    }

    /// The pending sample could not be scheduled; its requests were answered with the error.
    mutating func abandon() { pending = nil }
}
