#if canImport(Glibc)
import Glibc
#endif

/// Live rates of one interface from counted traffic and boot time (`MeterInstant`).
///
/// `rx`/`tx` are the bytes per second over the last interval of at least `minimumInterval`;
/// the smoothed values are an exponential moving average with time constant `smoothingSeconds`,
/// so an irregular sampling interval weighs each interval by its length.
public struct Rate: Hashable, Sendable {
    public private(set) var rxBytesPerSecond: Double = 0
    public private(set) var txBytesPerSecond: Double = 0
    public private(set) var smoothedRxBytesPerSecond: Double = 0
    public private(set) var smoothedTxBytesPerSecond: Double = 0
    /// False until one full interval has been measured.
    public private(set) var isMeasured = false

    private var intervalStart: MeterInstant
    private var accumulated = Traffic.zero
    let smoothingSeconds: Double

    /// Intervals shorter than this (an event right after a sample) are folded into the next.
    public static let minimumInterval = 0.5

    public init(startingAt instant: MeterInstant, smoothingSeconds: Double) {
        intervalStart = instant
        self.smoothingSeconds = smoothingSeconds
    }

    /// Adds counted traffic to the current interval.
    public mutating func add(_ traffic: Traffic) {
        accumulated += traffic
    }

    /// Adds `traffic`, then closes the interval at `instant`: one sample's step.
    public mutating func close(adding traffic: Traffic, at instant: MeterInstant) {
        add(traffic)
        close(at: instant)
    }

    /// Closes the interval at `instant` if it is long enough, updating the rates.
    public mutating func close(at instant: MeterInstant) {
        let elapsed = instant.seconds(since: intervalStart)
        guard elapsed >= Self.minimumInterval else { return }
        rxBytesPerSecond = Double(accumulated.rxBytes) / elapsed
        txBytesPerSecond = Double(accumulated.txBytes) / elapsed
        if isMeasured {
            let weight = 1 - exp(-elapsed / smoothingSeconds)
            smoothedRxBytesPerSecond += weight * (rxBytesPerSecond - smoothedRxBytesPerSecond)
            smoothedTxBytesPerSecond += weight * (txBytesPerSecond - smoothedTxBytesPerSecond)
        } else {
            smoothedRxBytesPerSecond = rxBytesPerSecond
            smoothedTxBytesPerSecond = txBytesPerSecond
            isMeasured = true
        }
        accumulated = .zero
        intervalStart = instant
    }
}
