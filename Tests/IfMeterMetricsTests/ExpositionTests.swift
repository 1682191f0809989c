import IfMeterPlans
import IfMeterApps
import Foundation
import IfMeterCore
@testable import IfMeterMetrics
import IfMeterHistory
import IfMeterService
import IfMeterTestSupport
import Testing

private let origin = 1_800_000_000.0

private func at(_ seconds: Double) -> MeterInstant {
    MeterInstant(wall: origin + seconds, sinceBootNanoseconds: UInt64(seconds * 1e9))
}

private func link(_ name: String, _ ifindex: Int32, rx: UInt64, tx: UInt64, kind: String = "", tunFlags: UInt32? = nil) -> Link {
    Link(ifindex: ifindex, name: name, kind: kind, arpType: 1, operState: .up,
         counters: LinkCounters(rxBytes: rx, txBytes: tx, rxPackets: rx / 100, txPackets: tx / 100),
         sysfs: SysfsFacts(tunFlags: tunFlags, hasDevice: kind.isEmpty))
}

/// A container's host-side veth, as attribution hands it over.
private let webContainer: Link = {
    var veth = link("container:web", 5, rx: 0, tx: 0, kind: "veth")
    veth.owner = LinkOwner(kind: LinkOwner.Kind("podman", prefix: .container), name: "web", id: String(repeating: "a", count: 64), alias: "veth0")
    return veth
}()

/// A service that counted: eth0 with a reset, a tunnel, a name gone long ago, one gone lately,
/// and a name whose characters need escaping.
/// A connection whose id a neighbour chose: a quote, a backslash, a newline and markup.
private let hostileNetwork = Network(uuid: "6f1c1a38-0000-4000-8000-00000000000a", id: "caf\u{E9} \"<b>\\\n", type: "wifi",
                                     ssid: [0xFF, 0x3C], metered: .guessYes)

private func snapshot() -> MeterSnapshot {
    var service = MeterService(
        bootID: "b", configuration: ServiceConfiguration(),
        history: ServiceHistory(
            knownNames: ["old0": origin - 90 * 86400, "recent0": origin - 3600],
            totals: ["old0": BucketTally(traffic: Traffic(rxBytes: 5, txBytes: 5)),
                     "recent0": BucketTally(traffic: Traffic(rxBytes: 70, txBytes: 7))],
            interfaces: [
                .init(name: "old0", interfaceClass: "ethernet", kind: "", firstSeen: origin - 90 * 86400, lastSeen: origin - 30 * 86400),
                .init(name: "recent0", interfaceClass: "cellular", kind: "", firstSeen: origin - 3600, lastSeen: origin - 600),
            ]),
        at: origin)
    _ = service.start(links: [link("eth0", 2, rx: 1000, tx: 100), link("tun0", 3, rx: 0, tx: 0, kind: "tun", tunFlags: 0x1001),
                              link(#"we"ird\n"#, 4, rx: 0, tx: 0, kind: "veth"), webContainer], unparseable: 0, at: at(0))
    service.reportNetworks([DeviceNetwork(interface: "eth0", network: hostileNetwork)], at: at(0).wall)
    // The applications' first read is their baseline.
    _ = service.ingest(linkEvents: [], readings: [
        CounterReading(ifindex: 2, counters: LinkCounters(rxBytes: 1000, txBytes: 100, rxPackets: 10, txPackets: 1)),
    ], apps: AppRead(counts: AppCounts(mapID: 1, counters: [AppCounterKey: Traffic]())), at: at(10))
    _ = service.ingest(linkEvents: [], readings: [
        CounterReading(ifindex: 2, counters: LinkCounters(rxBytes: 300, txBytes: 30, rxPackets: 3, txPackets: 1)),
        CounterReading(ifindex: 3, counters: LinkCounters(rxBytes: 4096, txBytes: 2048, rxPackets: 4, txPackets: 2)),
        CounterReading(ifindex: 5, counters: LinkCounters(rxBytes: 640, txBytes: 320, rxPackets: 6, txPackets: 3)),
    ], apps: AppRead(counts: AppCounts(mapID: 1, counters: [AppCounterKey(cgroupID: 9, ifindex: 2): Traffic(rxBytes: 100, rxPackets: 1)]),
                     names: [9: "service:sshd.service"]), at: at(30))
    return service.snapshot()
}

private func input(_ snapshot: MeterSnapshot?, process: ProcessFigures? = nil, plans: [PlanFigures] = []) -> MetricsInput {
    var sample = Histogram(bounds: Histogram.sampleBounds)
    sample.observe(0.0007)
    sample.observe(0.3)
    var input = MetricsInput(snapshot: snapshot, now: origin + 60, keepAbsentSeconds: 86400, sampleDurations: sample,
                             saveDurations: Histogram(bounds: Histogram.saveBounds), version: "9.9.9", process: process)
    input.plans = plans
    return input
}

/// A plan a third used, halfway through its period.
private let phonePlan = PlanFigures(
    plan: Plan(name: "phone", selectors: [.name("wwan0")], limit: 3000, period: .day),
    bounds: PlanBounds(start: Int64(origin) - 43200, end: Int64(origin) + 43200), at: origin,
    tally: BucketTally(traffic: Traffic(rxBytes: 800, txBytes: 200, rxPackets: 8, txPackets: 2)), members: ["wwan0"],
    daysLeft: 1)

private func text(_ input: MetricsInput, _ format: ExpositionFormat = .prometheus) -> String {
    String(decoding: MetricsExposition.render(input, format: format), as: UTF8.self)
}

private func lines(_ text: String, _ prefix: String) -> [String] {
    text.split(separator: "\n").map(String.init).filter { $0.hasPrefix(prefix) }
}

@Suite("Metrics exposition", .ownThread, .timeLimit(.minutes(3)))
struct ExpositionTests {
    @Test("continuous totals per interface and class; a reset is counted, not a drop")
    func totals() {
        let exposition = text(input(snapshot()))
        #expect(lines(exposition, "ifmeter_interface_receive_bytes_total{interface=\"eth0\"")
                == [#"ifmeter_interface_receive_bytes_total{interface="eth0",class="ethernet"} 300"#])
        #expect(lines(exposition, "ifmeter_interface_resets_total{interface=\"eth0\"")
                == [#"ifmeter_interface_resets_total{interface="eth0",class="ethernet"} 1"#])
        #expect(lines(exposition, "ifmeter_interface_transmit_bytes_total{interface=\"tun0\"")
                == [#"ifmeter_interface_transmit_bytes_total{interface="tun0",class="tunnel"} 2048"#])
        #expect(exposition.contains(#"ifmeter_interface_info{interface="recent0",class="cellular",kind="",operstate="absent",class_reason="last classified when present"} 1"#))
        #expect(exposition.contains("ifmeter_up 1\n") && exposition.contains(#"ifmeter_build_info{version="9.9.9"} 1"#))
        #expect(exposition.contains("ifmeter_store_healthy 1\n"))
        #expect(exposition.contains("ifmeter_last_sample_timestamp_seconds \(Int64(origin + 30))\n"))
    }

    @Test("a name absent longer than the keep time leaves; one absent lately stays")
    func absentNames() {
        let exposition = text(input(snapshot()))
        #expect(!exposition.contains(#"interface="old0""#))
        #expect(lines(exposition, "ifmeter_interface_receive_bytes_total{interface=\"recent0\"")
                == [#"ifmeter_interface_receive_bytes_total{interface="recent0",class="cellular"} 70"#])
    }

    @Test("label values escape backslash, quote and newline")
    func escaping() {
        let exposition = text(input(snapshot()))
        #expect(exposition.contains(#"ifmeter_interface_receive_bytes_total{interface="we\"ird\\n",class="virtual"} 0"#))
    }

    @Test("while loading: up 0, no figure it does not know")
    func loading() {
        let exposition = text(input(nil))
        #expect(exposition.contains("ifmeter_up 0\n"))
        #expect(!exposition.contains("ifmeter_interface_") && !exposition.contains("ifmeter_store_healthy")
                && !exposition.contains("ifmeter_last_sample_timestamp_seconds"))
    }

    @Test("histograms are cumulative, end in +Inf, and carry sum and count")
    func histogram() {
        let exposition = text(input(nil))
        #expect(lines(exposition, "ifmeter_sample_duration_seconds_bucket").prefix(3) == [
            #"ifmeter_sample_duration_seconds_bucket{le="0.0005"} 0"#,
            #"ifmeter_sample_duration_seconds_bucket{le="0.001"} 1"#,
            #"ifmeter_sample_duration_seconds_bucket{le="0.0025"} 1"#,
        ])
        #expect(lines(exposition, "ifmeter_sample_duration_seconds_bucket{le=\"0.5\"}") == [#"ifmeter_sample_duration_seconds_bucket{le="0.5"} 2"#])
        #expect(lines(exposition, "ifmeter_sample_duration_seconds_bucket{le=\"+Inf\"}") == [#"ifmeter_sample_duration_seconds_bucket{le="+Inf"} 2"#])
        #expect(lines(exposition, "ifmeter_sample_duration_seconds_count") == ["ifmeter_sample_duration_seconds_count 2"])
    }

    @Test("OpenMetrics: families without _total, info types, units, and # EOF last")
    func openMetrics() {
        let exposition = text(input(snapshot(), process: ProcessFigures(
            cpuSeconds: 1.5, residentBytes: 1 << 20, virtualBytes: 1 << 24, startTime: origin, openFDs: 9, maxFDs: 1024)), .openMetrics)
        #expect(exposition.hasSuffix("# EOF\n"))
        #expect(exposition.contains("# TYPE ifmeter_interface_receive_bytes counter\n# UNIT ifmeter_interface_receive_bytes bytes\n"))
        #expect(exposition.contains("# TYPE ifmeter_interface info\n") && exposition.contains("# TYPE ifmeter_build info\n"))
        #expect(exposition.contains("process_cpu_seconds_total 1.5\n"))
        #expect(!exposition.contains("# TYPE ifmeter_interface_receive_bytes_total"))
    }

    @Test("Accept picks OpenMetrics only when named; Accept-Encoding gzip unless q=0")
    func negotiation() {
        let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
        #expect(ExpositionFormat(accept: prometheus) == .openMetrics)
        #expect(ExpositionFormat(accept: "text/plain;version=0.0.4") == .prometheus)
        #expect(ExpositionFormat(accept: nil) == .prometheus)
        #expect(ExpositionFormat(accept: "application/openmetrics-text; q=0") == .prometheus)
        #expect(ContentCoding.acceptsGzip("gzip"))
        #expect(ContentCoding.acceptsGzip("deflate, gzip;q=0.5"))
        #expect(!ContentCoding.acceptsGzip("gzip;q=0"))
        #expect(!ContentCoding.acceptsGzip("identity"))
        #expect(!ContentCoding.acceptsGzip(nil))
    }

    @Test("promtool check metrics finds nothing to complain about", .enabled(if: Promtool.available, Promtool.skipReason))
    func promtool() throws {
        let exposition = text(input(snapshot(), process: ProcessFigures(
            cpuSeconds: 1.5, residentBytes: 1 << 20, virtualBytes: 1 << 24, startTime: origin, openFDs: 9, maxFDs: 1024),
            plans: [phonePlan]))
        let result = try Command.run(["promtool", "check", "metrics"], stdin: exposition)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    }

    @Test("a container's series say whose they are, and who owns it now")
    func containerLabels() {
        let exposition = text(input(snapshot()))
        #expect(exposition.contains("ifmeter_interface_receive_bytes_total{interface=\"container:web\",class=\"virtual\",container=\"web\"} 640\n"))
        #expect(exposition.contains("ifmeter_owner_info{interface=\"container:web\",container=\"web\",kind=\"podman\",id=\"\(String(repeating: "a", count: 64))\",alias=\"veth0\"} 1\n"))
        #expect(exposition.split(separator: "\n").filter { $0.hasPrefix("ifmeter_owner_info{") }.count == 1)
    }

    @Test("an owner's series carry its own name, a pod's its namespace and name, without the #N of a second link or NIC")
    func podLabels() {
        let pods = [("pod:team-a/web-0", [("namespace", "team-a"), ("pod", "web-0")]),
                    ("pod:team-a/web-0#2", [("namespace", "team-a"), ("pod", "web-0")]),
                    ("container:web#3", [("container", "web")]), ("vm:db#2", [("vm", "db")]),
                    ("netns:vpn/tun0", [("netns", "vpn")])]
        for (subject, expected) in pods {
            let owner = SubjectName.owner(of: subject)!
            let labels = owner.kind.metricLabels(owner.name)
            #expect(labels.map(\.key) == expected.map(\.0) && labels.map(\.value) == expected.map(\.1), "\(subject): \(labels)")
        }
    }

    @Test("a network's series: its name as the terminal shows it (a line feed as \\x0a), escaped, its UUID, type and metered state; another view of the interface's bytes")
    func networkSeries() {
        let exposition = text(input(snapshot()))
        #expect(exposition.contains(#"ifmeter_network_receive_bytes_total{network="caf\#u{E9} \"<b>\\\\x0a",uuid="6f1c1a38-0000-4000-8000-00000000000a",type="wifi",metered="guess-yes"} 300"# + "\n"))
        #expect(exposition.contains("ifmeter_networks_not_exposed 0\n"))
    }

    @Test("at most maximumNetworks networks are exposed, the active and most recently seen; the rest are counted")
    func networksCapped() {
        let count = MetricsExposition.maximumNetworks + 3
        var service = MeterService(bootID: "b", configuration: ServiceConfiguration(), history: ServiceHistory(), at: origin)
        _ = service.start(links: [link("wlan0", 2, rx: 0, tx: 0)], unparseable: 0, at: at(0))
        for index in 0..<count {
            let uuid = "6f1c1a38-0000-4000-8000-" + String(String(100_000_000_000 + index).suffix(12))
            service.reportNetworks([DeviceNetwork(interface: "wlan0", network: Network(uuid: uuid, id: "net\(index)", type: "wifi"))],
                                   at: origin + Double(index))
        }
        let exposition = text(input(service.snapshot()))
        let series = exposition.split(separator: "\n").filter { $0.hasPrefix("ifmeter_network_receive_bytes_total{") }
        #expect(series.count == MetricsExposition.maximumNetworks)
        #expect(series.contains { $0.contains("network=\"net\(count - 1)\"") }, "the one active now")
        #expect(!series.contains { $0.contains("network=\"net0\"") }, "the least recently seen")
        #expect(exposition.contains("ifmeter_networks_not_exposed 3\n"))
    }

    @Test("familyNames lists exactly the sample names a full exposition has")
    func familyNames() {
        var full = input(snapshot(), process: ProcessFigures(
            cpuSeconds: 1, residentBytes: 1, virtualBytes: 1, startTime: origin, openFDs: 1, maxFDs: 1), plans: [phonePlan])
        full.percentiles = [PercentileFigures(interface: "eth0", interfaceClass: "ethernet",
                                              figure: BurstablePercentile(buckets: [], from: 1_800_000_000, to: 1_800_000_300))]
        full.scopes = [scopeFigures("eth0", .internet, rx: 1, tx: 1), scopeFigures("network:" + hostileNetwork.uuid, .local, rx: 1, tx: 1),
                       scopeFigures("service:sshd.service", .internet, rx: 1, tx: 1)]
        let exposition = text(full)
        #expect(exposition.contains("ifmeter_plan_used_bytes{plan=\"phone\",direction=\"total\"} 1000\n"))
        #expect(exposition.contains("ifmeter_plan_projected_bytes{plan=\"phone\",direction=\"total\"} 2000\n"))
        let names = Set(exposition.split(separator: "\n").filter { !$0.hasPrefix("#") }
            .map { String($0.prefix { $0 != "{" && $0 != " " }) })
        #expect(names == MetricsExposition.familyNames)
    }

    @Test("a large exposition reaches the sink in chunks, the same bytes as in one piece")
    func chunks() {
        let whole = MetricsExposition.render(input(snapshot()), format: .prometheus)
        var pieces: [[UInt8]] = []
        var writer = ExpositionWriter(format: .prometheus, chunkSize: 256) { pieces.append($0) }
        MetricsExposition.write(input(snapshot()), to: &writer)
        #expect(pieces.count > 4)
        #expect(pieces.flatMap { $0 } == whole)
    }
}
