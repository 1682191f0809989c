import Foundation
import IfMeterMetrics
import Testing

@Suite("Grafana dashboard", .timeLimit(.minutes(3)))
struct DashboardTests {
    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../docs/examples/grafana-dashboard.json").standardized.path

    /// Every `expr` anywhere in the document.
    func expressions(in value: Any) -> [String] {
        if let object = value as? [String: Any] {
            return object.flatMap { key, value in key == "expr" ? [value as? String ?? ""] : expressions(in: value) }
        }
        if let array = value as? [Any] { return array.flatMap(expressions(in:)) }
        return []
    }

    @Test("valid JSON, and every metric its queries and annotations name is one ifmeterd exposes")
    func metricNames() throws {
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: Self.path)))
        let queries = expressions(in: document)
        #expect(queries.count >= 8)
        var histogram = Histogram(bounds: Histogram.sampleBounds)
        histogram.observe(0.01)
        let exposition = String(decoding: MetricsExposition.render(MetricsInput(
            snapshot: nil, now: 0, keepAbsentSeconds: 0, sampleDurations: histogram, saveDurations: histogram,
            version: "0", process: nil), format: .prometheus), as: UTF8.self)
        // Family names from the HELP lines cover the per-interface ones a loading daemon omits.
        var exposed = Set(exposition.split(separator: "\n").filter { !$0.hasPrefix("#") }
            .map { String($0.prefix { $0 != "{" && $0 != " " }) })
        exposed.formUnion(MetricsExposition.familyNames)
        let used = Set(queries.flatMap { query in
            query.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") })
                .filter { $0.hasPrefix("ifmeter_") || $0.hasPrefix("process_") }.map(String.init)
        })
        #expect(!used.isEmpty)
        #expect(used.subtracting(exposed).isEmpty, "unknown metrics: \(used.subtracting(exposed).sorted())")
    }
}
