import IfMeterApps
import IfMeterCore
import IfMeterHistory
@testable import IfMeterMetrics
import IfMeterService
import IfMeterTestSupport
import Testing

/// Applications in `/metrics` (docs/METRICS.md, docs/APPS.md): their own families, a capped
/// number of series, and how many were left out.
@Suite("Metrics exposition: applications", .ownThread, .timeLimit(.minutes(3)))
struct AppExpositionTests {
    let origin = 1_800_000_000.0

    func instant(_ seconds: Double) -> MeterInstant {
        MeterInstant(wall: origin + seconds, sinceBootNanoseconds: UInt64(seconds * 1e9))
    }

    /// A service that counted `apps` applications on eth0: the first a system service, the
    /// rest users' applications, application n sending n × 100 bytes.
    func snapshot(apps: Int) -> MeterSnapshot {
        var service = MeterService(bootID: "b", configuration: ServiceConfiguration(), history: ServiceHistory(), at: origin)
        let eth = Link(ifindex: 2, name: "eth0", kind: "", arpType: ARPHRD.ether, operState: .up,
                       counters: LinkCounters(rxBytes: 0, txBytes: 0, rxPackets: 0, txPackets: 0),
                       sysfs: SysfsFacts(tunFlags: nil, hasDevice: true))
        _ = service.start(links: [eth], unparseable: 0, at: instant(0))
        // The first read is the baseline.
        _ = service.ingest(linkEvents: [], readings: [CounterReading(ifindex: 2, counters: LinkCounters(rxBytes: 0, txBytes: 0, rxPackets: 0, txPackets: 0))],
                           apps: AppRead(counts: AppCounts(mapID: 1, counters: [AppCounterKey: Traffic]())), at: instant(10))
        var counters: [AppCounterKey: Traffic] = [:]
        var names: [UInt64: String] = [:]
        for n in 1...apps {
            counters[AppCounterKey(cgroupID: UInt64(n), ifindex: 2)] = Traffic(txBytes: UInt64(n) * 100, txPackets: 1)
            names[UInt64(n)] = n == 1 ? "service:nginx.service" : "app:1000/app\(n)"
        }
        let total = (1...apps).reduce(UInt64(0)) { $0 + UInt64($1) * 100 + 14 }
        _ = service.ingest(linkEvents: [], readings: [CounterReading(ifindex: 2, counters: LinkCounters(
            rxBytes: 0, txBytes: total + 1000, rxPackets: 0, txPackets: UInt64(apps) + 10))],
                           apps: AppRead(counts: AppCounts(mapID: 1, counters: counters), names: names), at: instant(30))
        return service.snapshot()
    }

    func text(_ snapshot: MeterSnapshot) -> String {
        let input = MetricsInput(snapshot: snapshot, now: origin + 60, keepAbsentSeconds: 86400,
                                 sampleDurations: Histogram(bounds: Histogram.sampleBounds),
                                 saveDurations: Histogram(bounds: Histogram.saveBounds), version: "9.9.9", process: nil)
        return String(decoding: MetricsExposition.render(input, format: .prometheus), as: UTF8.self)
    }

    @Test("a service, a user's application and a link's remainder each have their series, labelled as their kinds say")
    func series() {
        let exposition = text(snapshot(apps: 2))
        let lines = exposition.split(separator: "\n").filter { $0.hasPrefix("ifmeter_app_transmit_bytes_total{") }
        #expect(lines == [
            #"ifmeter_app_transmit_bytes_total{subject="app:1000/app2",kind="application",app="app2",uid="1000"} 214"#,
            #"ifmeter_app_transmit_bytes_total{subject="remainder:eth0",kind="link's remainder",remainder_of="eth0"} 1000"#,
            #"ifmeter_app_transmit_bytes_total{subject="service:nginx.service",kind="service",service="nginx.service"} 114"#,
        ])
        #expect(exposition.contains("ifmeter_apps_not_exposed 0\n"))
        #expect(exposition.contains("# HELP ifmeter_app_receive_bytes_total"))
    }

    @Test("past the cap the least busy are left out, and the gauge says how many")
    func capped() {
        let count = MetricsExposition.maximumApps + 100
        let exposition = text(snapshot(apps: count))
        let lines = exposition.split(separator: "\n").filter { $0.hasPrefix("ifmeter_app_transmit_bytes_total{") }
        #expect(lines.count == MetricsExposition.maximumApps)
        // The applications sending least are the ones left out.
        #expect(!exposition.contains(#"subject="app:1000/app2""#))
        #expect(exposition.contains(#"subject="app:1000/app\#(count)""#))
        #expect(exposition.contains("ifmeter_apps_not_exposed 101\n"))
    }
}
