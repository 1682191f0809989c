/// One metric family, declared once: its sample name, type, unit, help and labels. The
/// exposition writes it from here, ``MetricFamily/all`` lists it for the docs and dashboards
/// that name it, and nothing else spells its name.
public struct MetricFamily: Sendable {
    /// Its sample name in the 0.0.4 text: a counter's with `_total`, an info's with `_info`.
    public let name: String
    public let type: MetricType
    /// The unit its name ends in, for OpenMetrics' `# UNIT`.
    public let unit: String?
    public let help: String
    /// The labels every series carries; a subject's kind adds its own
    /// (``IfMeterCore/SubjectKind/metricLabels(_:)``) to the interface families.
    public let labels: [String]

    init(_ name: String, _ type: MetricType, unit: String? = nil, labels: [String] = [], help: String) {
        (self.name, self.type, self.unit, self.labels, self.help) = (name, type, unit, labels, help)
    }

    /// The names its samples have: a histogram's `_bucket`, `_sum` and `_count`.
    public var sampleNames: [String] {
        type == .histogram ? ["_bucket", "_sum", "_count"].map { name + $0 } : [name]
    }
}

extension ExpositionWriter {
    /// Starts `family`.
    public mutating func family(_ family: MetricFamily) {
        self.family(family.name, family.type, unit: family.unit, help: family.help)
    }
}
