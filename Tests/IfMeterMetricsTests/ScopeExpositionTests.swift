import Foundation
import IfMeterApps
import IfMeterCore
import IfMeterHistory
@testable import IfMeterMetrics
@testable import IfMeterService
import IfMeterTestSupport
import Testing

/// A scope subject's figures (`scope:SCOPE/SUBJECT`) as the service would give them: built here,
/// since what counts them is not the exposition's business.
func scopeFigures(_ subject: String, _ scope: TrafficScope, rx: UInt64, tx: UInt64) -> InterfaceFigures {
    InterfaceFigures(name: ScopeKind.subject(subject, scope: scope), interfaceClass: "application", classReason: "counted by scope",
                     kind: "scope of a subject", total: BucketTally(traffic: Traffic(rxBytes: rx, txBytes: tx)), since: nil,
                     eventsLost: 0, present: nil, lastSeen: nil)
}

/// The scope families in `/metrics` (docs/METRICS.md, docs/SCOPES.md): an interface's, a
/// network's and an application's bytes by `scope`, beside the families without one, which
/// keep every byte they had.
@Suite("Metrics exposition: traffic scopes", .ownThread, .timeLimit(.minutes(3)))
struct ScopeExpositionTests {
    let origin = 1_800_000_000.0
    let uuid = "6f1c1a38-0000-4000-8000-00000000000b"

    func instant(_ seconds: Double) -> MeterInstant {
        MeterInstant(wall: origin + seconds, sinceBootNanoseconds: UInt64(seconds * 1e9))
    }

    /// eth0 on a network, with a service that sent 100 bytes on it.
    func snapshot() -> MeterSnapshot {
        var service = MeterService(bootID: "b", configuration: ServiceConfiguration(), history: ServiceHistory(), at: origin)
        let eth = Link(ifindex: 2, name: "eth0", kind: "", arpType: ARPHRD.ether, operState: .up,
                       counters: LinkCounters(rxBytes: 0, txBytes: 0, rxPackets: 0, txPackets: 0),
                       sysfs: SysfsFacts(tunFlags: nil, hasDevice: true))
        _ = service.start(links: [eth], unparseable: 0, at: instant(0))
        service.reportNetworks([DeviceNetwork(interface: "eth0", network: Network(uuid: uuid, id: "home", type: "ethernet"))],
                               at: origin)
        _ = service.ingest(linkEvents: [], readings: [CounterReading(ifindex: 2, counters: LinkCounters(rxBytes: 0, txBytes: 0, rxPackets: 0, txPackets: 0))],
                           apps: AppRead(counts: AppCounts(mapID: 1, counters: [AppCounterKey: Traffic]())), at: instant(10))
        _ = service.ingest(linkEvents: [], readings: [CounterReading(ifindex: 2, counters: LinkCounters(
            rxBytes: 1000, txBytes: 500, rxPackets: 10, txPackets: 5))],
                           apps: AppRead(counts: AppCounts(mapID: 1, counters: [AppCounterKey(cgroupID: 9, ifindex: 2): Traffic(txBytes: 100, txPackets: 1)]),
                                        names: [9: "service:nginx.service"]), at: instant(30))
        return service.snapshot()
    }

    var scopes: [InterfaceFigures] {
        [
            scopeFigures("eth0", .local, rx: 600, tx: 100), scopeFigures("eth0", .internet, rx: 400, tx: 350),
            scopeFigures("eth0", .unknown, rx: 0, tx: 50),
            scopeFigures("network:" + uuid, .internet, rx: 400, tx: 350),
            scopeFigures("service:nginx.service", .internet, rx: 0, tx: 114),
            // A subject with no series of its own has none by scope either.
            scopeFigures("gone0", .local, rx: 1, tx: 1),
        ]
    }

    func text(_ snapshot: MeterSnapshot, scopes: [InterfaceFigures]) -> String {
        var input = MetricsInput(snapshot: snapshot, now: origin + 60, keepAbsentSeconds: 86400,
                                 sampleDurations: Histogram(bounds: Histogram.sampleBounds),
                                 saveDurations: Histogram(bounds: Histogram.saveBounds), version: "9.9.9", process: nil)
        input.scopes = scopes
        return String(decoding: MetricsExposition.render(input, format: .prometheus), as: UTF8.self)
    }

    @Test("each scope is a series labelled as its subject's, and scope; a subject not exposed has none")
    func series() {
        let exposition = text(snapshot(), scopes: scopes)
        let lines = exposition.split(separator: "\n").filter { $0.contains("_scope_") && !$0.hasPrefix("#") }
        #expect(lines == [
            #"ifmeter_interface_scope_receive_bytes_total{interface="eth0",class="ethernet",scope="local"} 600"#,
            #"ifmeter_interface_scope_receive_bytes_total{interface="eth0",class="ethernet",scope="internet"} 400"#,
            #"ifmeter_interface_scope_receive_bytes_total{interface="eth0",class="ethernet",scope="unknown"} 0"#,
            #"ifmeter_interface_scope_transmit_bytes_total{interface="eth0",class="ethernet",scope="local"} 100"#,
            #"ifmeter_interface_scope_transmit_bytes_total{interface="eth0",class="ethernet",scope="internet"} 350"#,
            #"ifmeter_interface_scope_transmit_bytes_total{interface="eth0",class="ethernet",scope="unknown"} 50"#,
            #"ifmeter_network_scope_receive_bytes_total{network="home",uuid="\#(uuid)",type="ethernet",metered="unknown",scope="internet"} 400"#,
            #"ifmeter_network_scope_transmit_bytes_total{network="home",uuid="\#(uuid)",type="ethernet",metered="unknown",scope="internet"} 350"#,
            #"ifmeter_app_scope_receive_bytes_total{subject="service:nginx.service",kind="service",service="nginx.service",scope="internet"} 0"#,
            #"ifmeter_app_scope_transmit_bytes_total{subject="service:nginx.service",kind="service",service="nginx.service",scope="internet"} 114"#,
        ])
        #expect(!exposition.contains("gone0"))
    }

    @Test("the families without a scope are byte for byte what they were; none without scope figures")
    func unchanged() {
        let snapshot = snapshot()
        let without = text(snapshot, scopes: [])
        let with = text(snapshot, scopes: scopes)
        #expect(!without.contains("_scope_"))
        #expect(with.split(separator: "\n").filter { !$0.contains("_scope_") } == without.split(separator: "\n"))
    }

    @Test("a scope subject the service lists among its names is in the scope families alone")
    func notAnInterface() {
        var snapshot = snapshot()
        var listed = scopeFigures("eth0", .local, rx: 600, tx: 100)
        listed.interfaceClass = "ethernet"
        snapshot.interfaces.append(listed)
        let exposition = text(snapshot, scopes: [listed])
        #expect(!exposition.contains("interface=\"scope:"))
        #expect(exposition.contains(#"ifmeter_interface_scope_receive_bytes_total{interface="eth0",class="ethernet",scope="local"} 600"#))
    }

    @Test("docs/METRICS.md names every scope family and each value of scope")
    func documented() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/METRICS.md").standardized.path
        let doc = try String(contentsOfFile: path, encoding: .utf8)
        for counter in MetricFamily.scopeCounters {
            #expect(doc.contains(counter.family.name) || doc.contains(counter.family.name.replacingOccurrences(of: "receive", with: "{receive,transmit}")),
                    "\(counter.family.name)")
        }
        for scope in TrafficScope.allCases { #expect(doc.contains("`\(scope.name)`")) }
    }

    @Test("promtool check metrics passes the scope families", .enabled(if: Promtool.available, Promtool.skipReason))
    func promtool() throws {
        let result = try Command.run(["promtool", "check", "metrics"], stdin: text(snapshot(), scopes: scopes))
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    }
}
