import Foundation
import IfMeterMetrics
import IfMeterTestSupport
import Testing

@Suite("Grafana dashboard", .ownThread, .timeLimit(.minutes(3)))
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

/// The dashboard against Grafana's dashboard model (its "Dashboard kind" schema, schemaVersion
/// 36 and later): Grafana itself is not packaged for Debian, so what it would refuse or
/// misplace is checked here, and every query is run by the real Prometheus in
/// EndToEndTests/PrometheusTests.
@Suite("Grafana dashboard model", .ownThread, .timeLimit(.minutes(3)))
struct DashboardModelTests {
    static let panelTypes: Set<String> = ["timeseries", "stat", "table", "bargauge", "gauge", "barchart", "piechart", "text", "row"]

    func document() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: DashboardTests.path))) as? [String: Any])
    }

    @Test("top level: the properties the model requires, of their types and values")
    func topLevel() throws {
        let dashboard = try document()
        #expect((dashboard["schemaVersion"] as? Int ?? 0) >= 36)
        #expect(dashboard["editable"] is Bool && dashboard["title"] is String && dashboard["uid"] is String)
        #expect(((dashboard["uid"] as? String) ?? "").count <= 40)
        #expect([0, 1, 2].contains(dashboard["graphTooltip"] as? Int ?? 0))
        let time = try #require(dashboard["time"] as? [String: String])
        #expect(time["from"] != nil && time["to"] != nil)
        #expect((dashboard["annotations"] as? [String: Any])?["list"] is [Any])
        #expect((dashboard["templating"] as? [String: Any])?["list"] is [Any])
    }

    @Test("panels: unique ids, known types, on the 24-column grid without overlapping; queries with unique refIds on the chosen data source")
    func panels() throws {
        let dashboard = try document()
        let panels = try #require(dashboard["panels"] as? [[String: Any]])
        var ids = Set<Int>()
        var cells = Set<[Int]>()
        for panel in panels {
            let title = panel["title"] as? String ?? "?"
            let id = try #require(panel["id"] as? Int, "\(title): no id")
            #expect(ids.insert(id).inserted, "\(title): id \(id) twice")
            #expect(Self.panelTypes.contains(panel["type"] as? String ?? ""), "\(title): type \(panel["type"] ?? "none")")
            let grid = try #require(panel["gridPos"] as? [String: Int], "\(title): no gridPos")
            let (x, y, w, h) = (grid["x"] ?? -1, grid["y"] ?? -1, grid["w"] ?? 0, grid["h"] ?? 0)
            #expect(x >= 0 && y >= 0 && w > 0 && h > 0 && x + w <= 24, "\(title): gridPos \(grid)")
            for column in x..<max(x, x + w) {
                for row in y..<max(y, y + h) {
                    #expect(cells.insert([column, row]).inserted, "\(title) overlaps another panel at \(column),\(row)")
                }
            }
            let targets = try #require(panel["targets"] as? [[String: Any]], "\(title): no queries")
            let refIds = targets.compactMap { $0["refId"] as? String }
            #expect(refIds.count == targets.count && Set(refIds).count == refIds.count, "\(title): refIds \(refIds)")
            for target in targets {
                #expect(!(target["expr"] as? String ?? "").isEmpty, "\(title): an empty query")
                #expect((target["datasource"] as? [String: String])?["uid"] == "${datasource}", "\(title): another data source")
            }
        }
    }

    @Test("every variable a query uses is defined, or is one of Grafana's own")
    func variables() throws {
        let dashboard = try document()
        let defined = Set(((dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String })
        let builtIn: Set<String> = ["__rate_interval", "__range", "__interval"]
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: DashboardTests.path)), as: UTF8.self)
        var used = Set<String>()
        var rest = Substring(text)
        while let dollar = rest.firstIndex(of: "$") {
            rest = rest[rest.index(after: dollar)...]
            let name = rest.drop { $0 == "{" }.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            if !name.isEmpty { used.insert(String(name)) }
        }
        #expect(used.subtracting(defined).subtracting(builtIn).isEmpty, "undefined: \(used.subtracting(defined).subtracting(builtIn))")
        #expect(used.contains("instance"), "queries are per host")
    }
}
