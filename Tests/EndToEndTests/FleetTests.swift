import Foundation
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A real Prometheus (Debian's 2.42) in a namespace, as a server or in agent mode, with a
/// configuration of the test's; stopped and its data removed when released.
final class PrometheusProcess {
    let namespace: NetworkNamespace
    let address: String
    private let process = Process()
    let directory: String

    /// - Parameters:
    ///   - agent: agent mode (`--enable-feature=agent`): scrapes and remote-writes, stores nothing else.
    ///   - receiver: takes remote writes (`--web.enable-remote-write-receiver`).
    init(in namespace: NetworkNamespace, address: String, config: String, agent: Bool = false, receiver: Bool = false) throws {
        self.namespace = namespace
        self.address = address
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ifmeter-prometheus-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try config.write(toFile: directory + "/prometheus.yml", atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: try Command.resolve("ip"))
        process.arguments = ["netns", "exec", namespace.name, try Command.resolve("prometheus"),
                             "--config.file=\(directory)/prometheus.yml", "--web.listen-address=\(address)"]
            + (agent ? ["--enable-feature=agent", "--storage.agent.path=\(directory)/agent"] : ["--storage.tsdb.path=\(directory)/data"])
            + (receiver ? ["--web.enable-remote-write-receiver"] : [])
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        _ = try eventually("Prometheus at \(address) ready", seconds: 120) {
            try namespace.run(["curl", "-sf", "http://\(address)/-/ready"]).status == 0 ? true : nil
        }
    }

    deinit {
        process.end()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// An instant query at `time` (now when nil): Prometheus's status, and each series' labels
    /// and value.
    func query(_ promql: String, at time: Double? = nil) throws -> (status: String, error: String?, series: [([String: String], Double)]) {
        var arguments = ["curl", "-sS", "--max-time", "10", "http://\(address)/api/v1/query", "--data-urlencode", "query=\(promql)"]
        if let time { arguments += ["--data-urlencode", "time=\(String(format: "%.3f", time))"] }
        let reply = try SocketClient.decode(try namespace.run(arguments).stdout)
        let series = (reply[path: "data.result"] as? [[String: Any]] ?? []).map { sample in
            ((sample["metric"] as? [String: String]) ?? [:], ((sample["value"] as? [Any])?.last as? String).flatMap(Double.init) ?? .nan)
        }
        return (reply["status"] as? String ?? "none", reply["error"] as? String, series)
    }
}

/// A fleet's view (docs/METRICS.md): the Grafana dashboard's every query on a real Prometheus
/// scraping a daemon with a plan and a container; and a host nobody can scrape, whose
/// Prometheus in agent mode remote-writes to a central one across a cut link.
@Suite("A fleet through Prometheus", .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason),
       .enabled(if: Promtool.available, Promtool.skipReason), .ownThread, .timeLimit(.minutes(12)))
final class FleetTests {
    static let dashboard = Daemon.packageRoot + "/docs/examples/grafana-dashboard.json"

    /// Every `expr` of the dashboard with its panel's title, Grafana's variables filled in as it
    /// would for all hosts and interfaces.
    static func queries() throws -> [(panel: String, expr: String)] {
        let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dashboard))) as? [String: Any])
        var found: [(String, String)] = []
        for panel in document["panels"] as? [[String: Any]] ?? [] {
            for target in panel["targets"] as? [[String: Any]] ?? [] {
                found.append((panel["title"] as? String ?? "?", target["expr"] as? String ?? ""))
            }
        }
        for annotation in (document["annotations"] as? [String: Any])?["list"] as? [[String: Any]] ?? [] {
            found.append(("annotation \(annotation["name"] ?? "")", annotation["expr"] as? String ?? ""))
        }
        return found.map { panel, expr in
            (panel, expr.replacingOccurrences(of: "$__rate_interval", with: "1m").replacingOccurrences(of: "$__range", with: "10m")
                .replacingOccurrences(of: "$instance", with: ".+").replacingOccurrences(of: "$interface", with: ".+"))
        }
    }

    @Test("the dashboard's every query runs on the real Prometheus; the containers' and plans' panels show the daemon's figures",
          .enabled(if: Podman.available, Podman.skipReason))
    func dashboardQueries() throws {
        let host = try NetworkNamespace()
        defer { host.delete() }
        let daemon = try DaemonProcess(namespace: host, config: """
            interval = 2
            metrics_listen = 127.0.0.1:\(metricsPort)
            plan[cap] = podman0
            plan[cap].limit = 1G
            plan[cap].period = month
            """)
        defer { _ = try? daemon.stop(SIGKILL) }
        try daemon.startAsTheUnit()
        defer { Podman.remove("fleet") }
        try Podman.run("fleet", in: host)
        try Podman.send(100_000, from: "fleet", in: host, port: 5021)
        let prometheus = try PrometheusProcess(in: host, address: "127.0.0.1:9090", config: """
            global:
              scrape_interval: 4s
              scrape_timeout: 4s
            scrape_configs:
              - job_name: ifmeter
                static_configs:
                  - targets: ['127.0.0.1:\(metricsPort)']
            """)
        let container = "ifmt-\(getpid())-fleet"
        // Enough scrapes for rate() and increase() over a minute.
        // What Prometheus holds, should it never come: its scrapes' health and whose series it has.
        let seen = { () -> String in
            let up = (try? prometheus.query("up").series.map(\.1)) ?? []
            let duration = (try? prometheus.query("scrape_duration_seconds").series.map(\.1)) ?? []
            let labels = (try? prometheus.query("ifmeter_interface_transmit_bytes_total").series.map { $0.0["container"] ?? $0.0["interface"] ?? "?" }) ?? []
            return "up \(up), scrape duration \(duration) s, series of \(labels)"
        }
        _ = try eventually("the container's traffic in Prometheus over a minute", seconds: 180, seen: seen) { () -> Bool? in
            let series = try prometheus.query(#"count_over_time(ifmeter_interface_transmit_bytes_total{container="\#(container)"}[1m])"#).series
            return (series.first?.1 ?? 0) >= 5 ? true : nil
        }
        var results: [String: Int] = [:]
        for (panel, expr) in try Self.queries() {
            let answer = try prometheus.query(expr)
            #expect(answer.status == "success", "\(panel): \(expr): \(answer.error ?? "")")
            results[panel, default: 0] += answer.series.count
        }
        for (panel, count) in results where panel.hasPrefix("Containers") || panel.hasPrefix("Data plans") {
            #expect(count > 0, "\(panel) shows nothing")
        }
        // The containers' panel names the container; the plans' table says what ifmeter plans says.
        let top = try #require(try Self.queries().first { $0.panel.hasPrefix("Containers") }?.expr)
        #expect(try prometheus.query(top).series.contains { $0.0["container"] == container })
        let plans = try host.run([CLIBinary.path, "--socket", daemon.socket, "plans", "--json"])
        let cap = try #require(((try SocketClient.decode(plans.stdout))["plans"] as? [[String: Any]])?.first)
        let limit = try #require(try prometheus.query(#"ifmeter_plan_limit_bytes{plan="cap"}"#).series.first?.1)
        #expect(limit == (cap["limit_bytes"] as? NSNumber)?.doubleValue)
        let days = try #require(try Self.queries().first { $0.expr.hasPrefix("ceil((ifmeter_plan_period_end") }?.expr)
        #expect(try prometheus.query(days).series.first?.1 == (cap["days_left"] as? NSNumber)?.doubleValue)
        #expect(try daemon.stop() == 0)
    }

    /// How long the link to the central Prometheus is cut while traffic flows: some minutes, as a
    /// laptop on a train is, within the agent's write-ahead log.
    static let cut: TimeInterval = 120

    @Test("a host nobody can scrape: Prometheus in agent mode remote-writes across a link cut for minutes; the central increase() is the kernel's bytes, the plan's gauges are ifmeter plans'")
    func agentAcrossACut() throws {
        let pair = try VethPair(leftName: "ea", rightName: "ca", subnet: 98)
        defer { pair.left.delete(); pair.right.delete() }
        let (edge, central) = (pair.left, pair.right)
        let daemon = try DaemonProcess(namespace: edge, config: """
            interval = 2
            metrics_listen = 127.0.0.1:\(metricsPort)
            plan[cap] = tunw
            plan[cap].limit = 10M
            plan[cap].period = month
            """)
        defer { _ = try? daemon.stop(SIGKILL) }
        try daemon.startAsTheUnit()
        let server = try PrometheusProcess(in: central, address: "\(pair.rightAddress):9090", config: "global: {}\n", receiver: true)
        let agent = try PrometheusProcess(in: edge, address: "127.0.0.1:9091", config: """
            global:
              scrape_interval: 2s
            scrape_configs:
              - job_name: ifmeter
                static_configs:
                  - targets: ['127.0.0.1:\(metricsPort)']
            remote_write:
              - url: http://\(pair.rightAddress):9090/api/v1/write
                queue_config:
                  min_backoff: 500ms
                  max_backoff: 5s
            """, agent: true)
        _ = agent

        // A tun made while counting: its series starts at 0, so increase() from there is exact.
        let tun = try edge.inside { try TunDevice(name: "tunw") }
        try edge.ip("address", "add", "10.89.0.1/24", "dev", "tunw")
        try edge.ip("link", "set", "tunw", "up")
        let receiver = try edge.inside { try UDPSocket(bindTo: "10.89.0.1", port: 0) }
        func push(_ count: Int) throws {
            let packet = TunDevice.udpPacket(from: [10, 89, 0, 2], to: [10, 89, 0, 1], port: receiver.port, payload: 972)
            for _ in 0..<count {
                try tun.write(packet)
                try receiver.receive(timeoutMilliseconds: 30_000)
            }
        }
        let series = #"ifmeter_interface_receive_bytes_total{interface="tunw"}"#
        _ = try eventually("tunw at 0 in the central Prometheus", seconds: 120) { () -> Bool? in
            try server.query(series).series.first?.1 == 0 ? true : nil
        }
        try push(100)
        let before = try edge.sysfsCounter("tunw", "rx_bytes")
        _ = try eventually("tunw's first bytes in the central Prometheus", seconds: 120) { () -> Bool? in
            try server.query(series).series.first?.1 == Double(before) ? true : nil
        }

        // The cut: nothing reaches the central Prometheus, while traffic flows and is scraped.
        try edge.ip("route", "add", "blackhole", "\(pair.rightAddress)/32")
        let cutAt = Date()
        var during = 0
        while Date().timeIntervalSince(cutAt) < Self.cut {
            try push(50)
            during += 50
            // The traffic's pace over the cut (not a wait for anything): a burst every 5 s.
            Thread.sleep(forTimeInterval: 5)
        }
        let frozen = try server.query(series).series.first?.1
        #expect(frozen == Double(before), "the central Prometheus heard nothing during the cut: \(frozen ?? -1)")
        try edge.ip("route", "del", "blackhole", "\(pair.rightAddress)/32")
        try push(30)
        let kernel = Double(try edge.sysfsCounter("tunw", "rx_bytes"))
        let sent = Double(try edge.sysfsCounter("tunw", "tx_bytes"))
        #expect(kernel == Double(before) + Double(during + 30) * 1000, "each packet is 1000 bytes on the tun")

        // Everything the agent held arrives: the last sample is the kernel's, and the increase
        // over the whole span, evaluated at that sample, is every byte.
        let last = try eventually("the central Prometheus at the kernel's \(kernel)", seconds: 180) { () -> Double? in
            guard try server.query(series).series.first?.1 == kernel else { return nil }
            return try server.query("timestamp(\(series))").series.first?.1
        }
        let span = Int(Date().timeIntervalSince(cutAt)) + 600
        let increase = try server.query("increase(\(series)[\(span)s])", at: last).series.first?.1
        #expect(increase == kernel, "increase() over \(span) s: \(increase ?? -1), the kernel's \(kernel)")
        let cutSamples = try server.query("count_over_time(\(series)[\(span)s])", at: last).series.first?.1 ?? 0
        #expect(cutSamples >= Self.cut / 2 / 2, "samples scraped during the cut were delivered, not lost: \(cutSamples)")

        let plans = try edge.run([CLIBinary.path, "--socket", daemon.socket, "plans", "--json"])
        let cap = try #require(((try SocketClient.decode(plans.stdout))["plans"] as? [[String: Any]])?.first)
        let used = try eventually("the plan's gauge at ifmeter plans' \(cap["used_bytes"] ?? "")", seconds: 60) { () -> Double? in
            let value = try server.query(#"ifmeter_plan_used_bytes{plan="cap"}"#).series.first?.1
            return value == (cap["used_bytes"] as? NSNumber)?.doubleValue ? value : nil
        }
        #expect(used == kernel + sent, "the plan is tunw's rx + tx")
        let limit = try server.query(#"ifmeter_plan_limit_bytes{plan="cap"}"#).series.first?.1
        #expect(limit == (cap["limit_bytes"] as? NSNumber)?.doubleValue)
        #expect(try daemon.stop() == 0)
    }
}
