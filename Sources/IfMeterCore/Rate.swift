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
    // Kept in 64 bytes, where whole instants, traffic and a Double took 96: a rate is held for
    // every present link (docs/BENCHMARKS.md). Only boot time and bytes enter a rate.
    private var intervalStartNanoseconds: UInt64
    private var accumulatedRx: UInt64 = 0
    private var accumulatedTx: UInt64 = 0
    private let smoothing: Float
    /// False until one full interval has been measured.
    public private(set) var isMeasured = false

    var smoothingSeconds: Double { Double(smoothing) }

    /// Intervals shorter than this (an event right after a sample) are folded into the next.
    public static let minimumInterval = 0.5

    public init(startingAt instant: MeterInstant, smoothingSeconds: Double) {
        intervalStartNanoseconds = instant.sinceBootNanoseconds
        smoothing = Float(smoothingSeconds)
    }

    /// Adds counted traffic to the current interval.
    public mutating func add(_ traffic: Traffic) {
        // Saturating, as Traffic's own sum.
        let rx = accumulatedRx.addingReportingOverflow(traffic.rxBytes)
        let tx = accumulatedTx.addingReportingOverflow(traffic.txBytes)
        accumulatedRx = rx.overflow ? .max : rx.partialValue
        accumulatedTx = tx.overflow ? .max : tx.partialValue
    }

    /// Adds `traffic`, then closes the interval at `instant`: one sample's step.
    public mutating func close(adding traffic: Traffic, at instant: MeterInstant) {
        add(traffic)
        close(at: instant)
    }

    /// Closes the interval at `instant` if it is long enough, updating the rates.
    public mutating func close(at instant: MeterInstant) {
        let elapsed = instant.seconds(since: MeterInstant(wall: 0, sinceBootNanoseconds: intervalStartNanoseconds))
        guard elapsed >= Self.minimumInterval else { return }
        rxBytesPerSecond = Double(accumulatedRx) / elapsed
        txBytesPerSecond = Double(accumulatedTx) / elapsed
        if isMeasured {
            let weight = 1 - exp(-elapsed / smoothingSeconds)
            smoothedRxBytesPerSecond += weight * (rxBytesPerSecond - smoothedRxBytesPerSecond)
            smoothedTxBytesPerSecond += weight * (txBytesPerSecond - smoothedTxBytesPerSecond)
        } else {
            smoothedRxBytesPerSecond = rxBytesPerSecond
            smoothedTxBytesPerSecond = txBytesPerSecond
            isMeasured = true
        }
        (accumulatedRx, accumulatedTx) = (0, 0)
        intervalStartNanoseconds = instant.sinceBootNanoseconds
    }
}
