/// The two text formats a scraper may ask for.
public enum ExpositionFormat: Hashable, Sendable {
    /// Prometheus text format 0.0.4.
    case prometheus
    /// OpenMetrics 1.0.0: families named without `_total`, `info` types, `# UNIT`, `# EOF`.
    case openMetrics

    public var contentType: String {
        switch self {
        case .prometheus: "text/plain; version=0.0.4; charset=utf-8"
        case .openMetrics: "application/openmetrics-text; version=1.0.0; charset=utf-8"
        }
    }

    /// The format an `Accept` header asks for: OpenMetrics only when it is named (as
    /// Prometheus does when it may use it), the 0.0.4 text otherwise.
    public init(accept: String?) {
        let asked = accept?.lowercased().split(separator: ",").contains { part in
            part.split(separator: ";").first?.trimmingSpaces == "application/openmetrics-text"
                && !part.split(separator: ";").dropFirst().contains { $0.trimmingSpaces == "q=0" }
        } ?? false
        self = asked ? .openMetrics : .prometheus
    }
}

/// A metric family's type.
public enum MetricType: String, Sendable {
    case counter, gauge, histogram, info
}

/// Writes an exposition family by family into a byte buffer, handing full chunks to `sink`
/// so a large exposition (thousands of interfaces) is never held whole when the sink
/// compresses or sends as it goes.
public struct ExpositionWriter {
    public let format: ExpositionFormat
    private var buffer: [UInt8] = []
    private let chunkSize: Int
    private let sink: ([UInt8]) -> Void

    public init(format: ExpositionFormat, chunkSize: Int = 1 << 16, sink: @escaping ([UInt8]) -> Void) {
        self.format = format
        self.chunkSize = chunkSize
        self.sink = sink
        buffer.reserveCapacity(chunkSize + 1024)
    }

    /// Starts a family. `name` is the sample name in the 0.0.4 text (a counter's with
    /// `_total`, an info's with `_info`); OpenMetrics names the family without the suffix.
    /// `unit`, when given, must end the family's name (OpenMetrics checks it).
    public mutating func family(_ name: String, _ type: MetricType, unit: String? = nil, help: String) {
        switch format {
        case .prometheus:
            append("# HELP \(name) \(Self.escapeHelp(help))\n# TYPE \(name) \(type == .info ? "gauge" : type.rawValue)\n")
        case .openMetrics:
            let family = Self.familyName(name, type)
            append("# TYPE \(family) \(type.rawValue)\n")
            if let unit { append("# UNIT \(family) \(unit)\n") }
            append("# HELP \(family) \(Self.escapeHelp(help))\n")
        }
    }

    /// One sample line. Labels are written in the order given.
    public mutating func sample(_ name: String, _ labels: KeyValuePairs<String, String> = [:], _ value: String) {
        sample(name, labels: labels, value)
    }

    /// One sample line with labels made as the sample goes (an owner's, which depend on its kind).
    public mutating func sample(_ name: String, pairs labels: [(key: String, value: String)], _ value: UInt64) {
        sample(name, labels: labels, String(value))
    }

    private mutating func sample(_ name: String, labels: some Collection<(key: String, value: String)>, _ value: String) {
        append(name)
        if !labels.isEmpty {
            append("{")
            var first = true
            for (key, text) in labels {
                if !first { append(",") }
                first = false
                append(key)
                append("=\"")
                appendEscapedLabel(text)
                append("\"")
            }
            append("}")
        }
        append(" ")
        append(value)
        append("\n")
        if buffer.count >= chunkSize { flush() }
    }

    /// The `{key="value",…}` part of a sample line, escaped, for reuse across families: an
    /// interface's labels are the same in each of its counters.
    public static func labelSet(_ labels: KeyValuePairs<String, String>) -> [UInt8] {
        labelSet(of: labels)
    }

    /// ``labelSet(_:)`` of labels made as it goes.
    public static func labelSet(pairs labels: [(key: String, value: String)]) -> [UInt8] {
        labelSet(of: labels)
    }

    private static func labelSet(of labels: some Collection<(key: String, value: String)>) -> [UInt8] {
        var writer = ExpositionWriter(format: .prometheus) { _ in }
        writer.sample("", labels: labels, "")
        return Array(writer.buffer.dropLast(2))  // the " \n" that ends the line
    }

    /// One sample line with labels made by ``labelSet(_:)``.
    public mutating func sample(_ name: String, labelSet: [UInt8], _ value: UInt64) {
        append(name)
        buffer.append(contentsOf: labelSet)
        buffer.append(UInt8(ascii: " "))
        append(String(value))
        buffer.append(UInt8(ascii: "\n"))
        if buffer.count >= chunkSize { flush() }
    }

    public mutating func sample(_ name: String, _ labels: KeyValuePairs<String, String> = [:], _ value: UInt64) {
        sample(name, labels, String(value))
    }

    public mutating func sample(_ name: String, _ labels: KeyValuePairs<String, String> = [:], _ value: Double) {
        sample(name, labels, Self.number(value))
    }

    /// Ends the exposition (`# EOF` in OpenMetrics) and hands the rest to the sink.
    public mutating func finish() {
        if format == .openMetrics { append("# EOF\n") }
        flush()
    }

    private mutating func flush() {
        guard !buffer.isEmpty else { return }
        sink(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    private mutating func append(_ text: String) {
        buffer.append(contentsOf: text.utf8)
    }

    /// Label values escape backslash, double quote and newline (both formats).
    private mutating func appendEscapedLabel(_ text: String) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\""): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\n"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            default: buffer.append(byte)
            }
        }
    }

    /// By Unicode scalar: "\r\n" is one `Character`, which equals no "\n".
    static func escapeHelp(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    static func familyName(_ name: String, _ type: MetricType) -> String {
        let suffix = switch type {
        case .counter: "_total"
        case .info: "_info"
        case .gauge, .histogram: ""
        }
        guard !suffix.isEmpty, name.hasSuffix(suffix) else { return name }
        return String(name.dropLast(suffix.count))
    }

    /// A float as both formats write it: integers without a fraction, infinities as `+Inf`.
    public static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value == .infinity { return "+Inf" }
        if value == -.infinity { return "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}

extension Substring {
    var trimmingSpaces: Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text = text.dropFirst() }
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        return text
    }
}

/// `Accept-Encoding` as far as a scrape needs it.
public enum ContentCoding {
    /// Whether the header lists `gzip` (or `*`) with a weight above zero.
    public static func acceptsGzip(_ header: String?) -> Bool {
        guard let header else { return false }
        return header.lowercased().split(separator: ",").contains { part in
            let fields = part.split(separator: ";")
            guard let coding = fields.first?.trimmingSpaces, coding == "gzip" || coding == "*" else { return false }
            let weight = fields.dropFirst().first { $0.trimmingSpaces.hasPrefix("q=") }
                .flatMap { Double($0.trimmingSpaces.dropFirst(2)) } ?? 1
            return weight > 0
        }
    }
}
