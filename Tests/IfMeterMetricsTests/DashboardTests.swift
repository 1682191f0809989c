import Foundation
import IfMeterCore
import IfMeterHistory
import IfMeterMetrics
import IfMeterService
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

/// The pods' panels (#49), held as the containers' are by the real Prometheus in FleetTests, but
/// without a cluster: Prometheus's own evaluator (`promtool test rules`) runs their queries over
/// the series ifmeterd exposes for pods, label sets taken from a render of pods' subjects, and
/// must find each pod's and each namespace's traffic and nothing of a container or a link.
@Suite("Grafana dashboard: the pods' panels", .ownThread, .timeLimit(.minutes(3)))
struct DashboardPodTests {
    /// The pods a node counted, and a container and an interface beside them.
    static let pods = ["team-a/web-0", "team-a/web-1", "team-b/api-0"]

    /// The `{…}` label set of each interface counter family's series, by interface name, from a
    /// render of a service that counted the pods, a Podman container and eth0.
    static func labelSets() -> [String: [String: String]] {
        func link(_ name: String, _ ifindex: Int32, owner: LinkOwner? = nil) -> Link {
            var link = Link(ifindex: ifindex, name: name, kind: owner == nil ? "" : "veth", arpType: 1, operState: .up,
                            counters: LinkCounters(rxBytes: 0, txBytes: 0, rxPackets: 0, txPackets: 0),
                            sysfs: SysfsFacts(hasDevice: owner == nil))
            link.owner = owner
            return link
        }
        let origin = 1_800_000_000.0
        let kubernetes = LinkOwner.Kind("kubernetes", prefix: .pod)
        var links = [link("eth0", 2),
                     link("container:web", 3, owner: LinkOwner(kind: LinkOwner.Kind("podman", prefix: .container), name: "web",
                                                              id: String(repeating: "a", count: 64), alias: "veth0"))]
        for (index, pod) in pods.enumerated() {
            links.append(link("pod:" + pod, Int32(4 + index), owner: LinkOwner(
                kind: kubernetes, name: pod, id: "6f1c1a38-0000-4000-8000-00000000000\(index)", alias: "veth\(index)")))
        }
        var service = MeterService(bootID: "b", configuration: ServiceConfiguration(), history: ServiceHistory(), at: origin)
        _ = service.start(links: links, unparseable: 0, at: MeterInstant(wall: origin, sinceBootNanoseconds: 0))
        let exposition = String(decoding: MetricsExposition.render(MetricsInput(
            snapshot: service.snapshot(), now: origin, keepAbsentSeconds: 86400, sampleDurations: Histogram(bounds: Histogram.sampleBounds),
            saveDurations: Histogram(bounds: Histogram.saveBounds), version: "0", process: nil), format: .prometheus), as: UTF8.self)
        var sets: [String: [String: String]] = [:]
        for line in exposition.split(separator: "\n") {
            for family in ["ifmeter_interface_receive_bytes_total", "ifmeter_interface_transmit_bytes_total"] where line.hasPrefix(family + "{") {
                let labels = String(line.dropFirst(family.count).prefix { $0 != " " })
                guard let interface = labels.firstRange(of: #"interface=""#).map({ labels[$0.upperBound...].prefix { $0 != "\"" } })
                else { continue }
                sets[String(interface), default: [:]][family] = labels
            }
        }
        return sets
    }

    @Test("each pod's traffic, summed over the nodes it ran on, and each namespace's; nothing of a container or an interface",
          .enabled(if: Promtool.available, Promtool.skipReason))
    func podPanels() throws {
        let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: DashboardTests.path))) as? [String: Any])
        let panels = try #require(document["panels"] as? [[String: Any]])
        func query(_ titlePrefix: String) throws -> String {
            let panel = try #require(panels.first { ($0["title"] as? String ?? "").hasPrefix(titlePrefix) }, "no panel \(titlePrefix)…")
            let expr = try #require(((panel["targets"] as? [[String: Any]])?.first)?["expr"] as? String)
            return expr.replacingOccurrences(of: "$__range", with: "1h").replacingOccurrences(of: "$instance", with: ".+")
        }
        let sets = Self.labelSets()
        for name in ["eth0", "container:web"] + Self.pods.map({ "pod:" + $0 }) {
            #expect(sets[name]?.count == 2, "no receive and transmit series for \(name) in the exposition: \(sets.keys.sorted())")
        }
        // Per minute received and sent on node-1; web-0 also ran on node-2 (a StatefulSet's pod
        // moved), at a tenth of that. The container and eth0 carry more than any pod.
        let rates: [String: (rx: Int, tx: Int)] = ["pod:team-a/web-0": (60, 30), "pod:team-a/web-1": (120, 0),
                                                   "pod:team-b/api-0": (600, 300), "container:web": (9000, 9000), "eth0": (90000, 90000)]
        var series: [[String: String]] = []
        for (name, rate) in rates.sorted(by: { $0.key < $1.key }) {
            let nodes = name == "pod:team-a/web-0" ? [("node-1", 10), ("node-2", 1)] : [("node-1", 10)]
            for (node, tenths) in nodes {
                for (family, perMinute) in [("ifmeter_interface_receive_bytes_total", rate.rx), ("ifmeter_interface_transmit_bytes_total", rate.tx)] {
                    let labels = try #require(sets[name]?[family])
                    series.append(["series": family + "{instance=\"\(node)\"," + labels.dropFirst(),
                                   "values": "0+\(perMinute * tenths / 10)x120"])
                }
            }
        }
        // Over the last hour of two, an hour's worth: 60 × (rx + tx) a minute.
        let podSamples: [[String: Any]] = [
            ["labels": #"{namespace="team-a",pod="web-0"}"#, "value": 60 * (90 + 9)],
            ["labels": #"{namespace="team-a",pod="web-1"}"#, "value": 60 * 120],
            ["labels": #"{namespace="team-b",pod="api-0"}"#, "value": 60 * 900],
        ]
        let namespaceSamples: [[String: Any]] = [
            ["labels": #"{namespace="team-a"}"#, "value": 60 * (99 + 120)],
            ["labels": #"{namespace="team-b"}"#, "value": 60 * 900],
        ]
        let test: [String: Any] = [
            "rule_files": [String](),
            "evaluation_interval": "1m",
            "tests": [[
                "interval": "1m",
                "input_series": series,
                "promql_expr_test": [
                    ["expr": try query("Pods:"), "eval_time": "2h", "exp_samples": podSamples],
                    ["expr": try query("Namespaces:"), "eval_time": "2h", "exp_samples": namespaceSamples],
                ],
            ]],
        ]
        let directory = try TemporaryDirectory()
        // JSON is YAML (but for JSON's escaped slash): promtool reads it as it is.
        let file = directory.path + "/pods.test.yml"
        try JSONSerialization.data(withJSONObject: test, options: [.sortedKeys, .withoutEscapingSlashes]).write(to: URL(fileURLWithPath: file))
        let result = try Command.run(["promtool", "test", "rules", file])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    }
}
