import IfMeterCore

/// One interface's 95th percentile of 5-minute rates this billing month (docs/METRICS.md), as
/// the daemon last worked it out from its buckets.
public struct PercentileFigures: Hashable, Sendable {
    public var interface: String
    public var interfaceClass: String
    public var figure: BurstablePercentile

    public init(interface: String, interfaceClass: String, figure: BurstablePercentile) {
        (self.interface, self.interfaceClass, self.figure) = (interface, interfaceClass, figure)
    }
}

extension MetricFamily {
    static let percentileRate = MetricFamily(
        "ifmeter_interface_95th_percentile_bits_per_second", .gauge, unit: "bits_per_second", labels: ["interface", "class", "direction"],
        help: "The 95th percentile of the interface's 5-minute rates this billing month so far, as burstable transit bills "
            + "it: every ended 5-minute slot counts, one without traffic as zero; direction rx, tx, or max (the larger of the "
            + "two). Worked out every 5 minutes for the Ethernet, Wi-Fi and cellular interfaces (at most "
            + "\(MetricsExposition.maximumPercentiles)); needs retention_5min to cover the month. An estimate.")
    static let percentileCoverage = MetricFamily(
        "ifmeter_interface_95th_percentile_coverage_ratio", .gauge, unit: "ratio", labels: ["interface", "class"],
        help: "The share of the month's ended 5-minute slots that have a bucket (traffic was counted in them); the rest "
            + "count as zero in ifmeter_interface_95th_percentile_bits_per_second: an idle link, a stopped daemon, or "
            + "buckets retention_5min deleted.")
}

extension MetricsExposition {
    /// Interfaces whose percentile the daemon works out and exposes.
    public static let maximumPercentiles = 100

    static func writePercentiles(_ percentiles: [PercentileFigures], to writer: inout ExpositionWriter) {
        guard !percentiles.isEmpty else { return }
        writer.family(.percentileRate)
        for entry in percentiles {
            let figure = entry.figure
            for (direction, bytes) in [("rx", figure.rxBytes), ("tx", figure.txBytes), ("max", figure.maxBytes)] {
                writer.sample(MetricFamily.percentileRate.name,
                              ["interface": entry.interface, "class": entry.interfaceClass, "direction": direction],
                              BurstablePercentile.bitsPerSecond(bytes))
            }
        }
        writer.family(.percentileCoverage)
        for entry in percentiles {
            writer.sample(MetricFamily.percentileCoverage.name, ["interface": entry.interface, "class": entry.interfaceClass],
                          entry.figure.coverage)
        }
    }
}
