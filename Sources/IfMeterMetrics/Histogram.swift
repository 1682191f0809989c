/// A latency histogram with fixed buckets, as Prometheus client libraries keep one.
public struct Histogram: Hashable, Sendable {
    /// Upper bounds in seconds, ascending; `+Inf` is implied.
    public let bounds: [Double]
    /// Observations at or below each bound (not cumulative; the exposition sums them).
    public private(set) var counts: [UInt64]
    public private(set) var sum: Double = 0
    public private(set) var count: UInt64 = 0

    public init(bounds: [Double]) {
        self.bounds = bounds
        counts = Array(repeating: 0, count: bounds.count)
    }

    public mutating func observe(_ seconds: Double) {
        if let index = bounds.firstIndex(where: { seconds <= $0 }) { counts[index] &+= 1 }
        sum += seconds
        count &+= 1
    }

    /// Buckets for a sample (one dump of every link): 0.5 ms to 2.5 s.
    public static let sampleBounds = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]
    /// Buckets for a save (one SQLite transaction with `synchronous=FULL`): 1 ms to 10 s.
    public static let saveBounds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
}

extension ExpositionWriter {
    /// A histogram family: cumulative `_bucket`s with `le`, `+Inf`, `_sum` and `_count`.
    public mutating func histogram(_ family: MetricFamily, _ histogram: Histogram) {
        self.family(family)
        let name = family.name
        var cumulative: UInt64 = 0
        for (bound, count) in zip(histogram.bounds, histogram.counts) {
            cumulative &+= count
            sample(name + "_bucket", ["le": Self.bucketBound(bound)], cumulative)
        }
        sample(name + "_bucket", ["le": "+Inf"], histogram.count)
        sample(name + "_sum", [:], histogram.sum)
        sample(name + "_count", [:], histogram.count)
    }

    /// OpenMetrics wants `le` as a float with a fraction ("1.0"); the 0.0.4 text accepts it too.
    static func bucketBound(_ bound: Double) -> String {
        let text = String(bound)
        return text.contains(".") || text.contains("e") ? text : text + ".0"
    }
}
