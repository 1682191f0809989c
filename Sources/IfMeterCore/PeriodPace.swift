/// Where an instant falls in a period, and what a figure counted so far in it comes to at the
/// period's end at the same pace: the one linear projection, of usage answers (`projection`)
/// and of data plans (`projected`) alike.
public struct PeriodPace: Hashable, Sendable {
    /// How much of the period has passed, 0…1: 0 at its start and before it (a clock set back),
    /// 1 at its end and after it.
    public let elapsedFraction: Double

    public init(start: Double, end: Double, at now: Double) {
        let fraction = (now - start) / (end - start)
        // NaN: an empty period at its own instant, which is over.
        elapsedFraction = fraction.isNaN ? 1 : min(max(fraction, 0), 1)
    }

    /// `soFar` scaled from the part of the period that passed to all of it, rounded down. Never
    /// less than `soFar`: at the start there is no pace to scale by, and at the end nothing more
    /// comes (nor does a count past 2^53 come back as its nearest float). Early in a period the
    /// pace times the period can pass 2^64 − 1: held there, like every other counter, rather
    /// than trapping.
    public func projected(_ soFar: UInt64) -> UInt64 {
        guard elapsedFraction > 0 && elapsedFraction < 1 else { return soFar }
        let scaled = Double(soFar) / elapsedFraction
        return scaled >= 0x1p64 ? .max : UInt64(scaled)
    }
}
