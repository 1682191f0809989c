import IfMeterApps
import IfMeterCore
import IfMeterHistory
import IfMeterPlans
@testable import IfMeterService
@testable import IfMeterStore
import IfMeterTestSupport
import Testing

@Suite("Applications: counted by cgroup, in their links' terms, with each link's remainder", .ownThread, .timeLimit(.minutes(3)))
struct AppCountingTests {
    let nginx = AppCounterKey(cgroupID: 300, ifindex: 2)
    let firefox = AppCounterKey(cgroupID: 400, ifindex: 2)
    let names: [UInt64: String] = [300: "service:nginx.service", 400: "app:1000/firefox"]

    func stored(_ harness: ServiceHarness, _ name: String) throws -> Traffic { try harness.storedTotal(name) }

    /// The daemon's first read, the baseline (an empty map, as one attached just before it),
    /// with every present link's counters as last applied.
    func baseline(_ harness: ServiceHarness, at instant: MeterInstant = at(1)) {
        let readings = harness.service.snapshot().interfaces.compactMap { figures in
            figures.present.flatMap { present in
                present.counted.map { counted in reading(present.ifindex, counted.last) }
            }
        }
        harness.ingest(readings: readings, apps: read(7, [:]), at: instant)
    }

    func read(_ mapID: UInt32, _ counters: [AppCounterKey: Traffic], names: [UInt64: String] = [:]) -> AppRead {
        AppRead(counts: AppCounts(mapID: mapID, counters: counters), names: names)
    }

    @Test("applications and the remainder add up to the link; loopback's applications are not counted")
    func addsUp() throws {
        let harness = try ServiceHarness()
        let lo = Link(ifindex: 1, name: "lo", kind: "", arpType: ARPHRD.loopback, flags: .loopback,
                      counters: LinkCounters(rxBytes: 0, txBytes: 0, rxPackets: 0, txPackets: 0))
        harness.start([lo, link("eth0", 2, traffic(0, 0))], at: at(0))
        baseline(harness)
        let loopback = AppCounterKey(cgroupID: 300, ifindex: 1)
        harness.ingest(readings: [reading(1, traffic(5000, 5000, 50, 50)),
                                                          reading(2, traffic(10_000, 4000, 20, 10))],
                               apps: read(7, [nginx: traffic(6000, 2000, 10, 5), firefox: traffic(1000, 0, 2, 0),
                                              loopback: traffic(4300, 4300, 50, 50)], names: names), at: at(10))
        harness.save(at: at(10))
        let nginxCounted = traffic(6000 + 140, 2000 + 70, 10, 5)
        let firefoxCounted = traffic(1000 + 28, 0, 2, 0)
        #expect(try stored(harness, "service:nginx.service") == nginxCounted)
        #expect(try stored(harness, "app:1000/firefox") == firefoxCounted)
        let remainder = try stored(harness, "remainder:eth0")
        #expect(remainder + nginxCounted + firefoxCounted == traffic(10_000, 4000, 20, 10))
        #expect(try stored(harness, "remainder:lo") == .zero)
        #expect(try stored(harness, "eth0") == traffic(10_000, 4000, 20, 10))
    }

    @Test("a restart resumes the map from the saved counters and names: what the map counted meanwhile is kept, once")
    func restart() throws {
        let harness = try ServiceHarness()
        harness.start([link("eth0", 2, traffic(0, 0))], at: at(0))
        baseline(harness)
        harness.ingest(readings: [reading(2, traffic(2000, 0, 2, 0))],
                               apps: read(7, [nginx: traffic(1000, 0, 1, 0)], names: names), at: at(10))
        harness.save(at: at(10))
        try harness.restart(at: at(100))
        harness.start([link("eth0", 2, traffic(9000, 0, 9, 0))], at: at(100))
        // The map went on counting while the daemon was down; the reader names nothing new.
        harness.ingest(readings: [reading(2, traffic(9000, 0, 9, 0))],
                               apps: read(7, [nginx: traffic(5000, 0, 5, 0)]), at: at(110))
        harness.save(at: at(110))
        #expect(try stored(harness, "service:nginx.service") == traffic(5000 + 5 * 14, 0, 5, 0))
        // What eth0 carried while the daemon was down is attributed with the first read: the
        // sums still meet.
        #expect(try stored(harness, "service:nginx.service") + (try stored(harness, "remainder:eth0")) == (try stored(harness, "eth0")))
    }

    @Test("a save writes only the entries that moved, and a failed save makes the next write them all")
    func writes() throws {
        let harness = try ServiceHarness()
        harness.start([link("eth0", 2, traffic(0, 0))], at: at(0))
        baseline(harness)
        harness.ingest(readings: [reading(2, traffic(0, 0))],
                               apps: read(7, [nginx: traffic(10, 0, 1, 0), firefox: traffic(10, 0, 1, 0)], names: names),
                               at: at(10))
        var batch = harness.service.beginSave(at: at(10).wall)
        #expect(batch.writes.apps?.replaceAll == true)
        _ = harness.service.finishSave(batch, error: nil)
        harness.ingest(readings: [reading(2, traffic(0, 0))],
                               apps: read(7, [nginx: traffic(20, 0, 2, 0), firefox: traffic(10, 0, 1, 0)]), at: at(20))
        batch = harness.service.beginSave(at: at(20).wall)
        #expect(batch.writes.apps?.replaceAll == false)
        #expect(batch.writes.apps?.counters == [nginx: traffic(20, 0, 2, 0)])
        _ = harness.service.finishSave(batch, error: diskFull)
        batch = harness.service.beginSave(at: at(30).wall)
        #expect(batch.writes.apps?.replaceAll == true)
        #expect(batch.writes.apps?.counters.count == 2)
    }

    @Test("a plan on an application counts its bytes on every link, and fires once per threshold; one on a service likewise")
    func plans() throws {
        let firefoxPlan = Plan(name: "browser", selectors: [.app("firefox")], limit: 2000, period: .day, thresholds: [0.5, 1])
        let nginxPlan = Plan(name: "web", selectors: [.service("nginx*")], limit: 1_000_000, period: .day, thresholds: [0.5])
        let harness = try ServiceHarness(configuration: PlanWatchTests.configuration([firefoxPlan, nginxPlan]))
        harness.start([link("eth0", 2, traffic(0, 0))], at: at(0))
        baseline(harness)
        // The plan's first member appears with its first delta: that delta is counted too.
        harness.ingest(readings: [reading(2, traffic(5000, 5000, 10, 10))],
                       apps: read(7, [firefox: traffic(1000, 0, 1, 0), nginx: traffic(100, 100, 1, 1)], names: names), at: at(10))
        var fired = harness.watch(at: at(10)).compactMap(PlanEvent.init)
        #expect(fired.map(\.facts.plan) == ["browser"])
        harness.ingest(readings: [reading(2, traffic(9000, 5000, 20, 10))],
                       apps: read(7, [firefox: traffic(2000, 0, 2, 0), nginx: traffic(100, 100, 1, 1)]), at: at(20))
        fired = harness.watch(at: at(20)).compactMap(PlanEvent.init)
        #expect(fired.map(\.facts.plan) == ["browser"])
        let figures = harness.service.planFigures(at: at(20).wall)
        #expect(figures.first { $0.plan.name == "browser" }?.tally.traffic == traffic(2000 + 2 * 14, 0, 2, 0))
        #expect(figures.first { $0.plan.name == "web" }?.tally.traffic == traffic(114, 114, 1, 1))
        #expect(harness.watch(at: at(30)).isEmpty)
    }

    @Test("a sample whose maps could not be read leaves the links' deltas to their remainders; a link deleted between samples is attributed at the next")
    func withoutARead() throws {
        let harness = try ServiceHarness()
        harness.start([link("eth0", 2, traffic(0, 0)), link("eth1", 3, traffic(0, 0))], at: at(0))
        baseline(harness)
        harness.ingest(readings: [reading(2, traffic(1000, 0, 1, 0)), reading(3, .zero)],
                       apps: read(7, [nginx: traffic(986, 0, 1, 0)], names: names), at: at(10))
        // The maps went (detached): everything is the remainders'.
        harness.ingest(readings: [reading(2, traffic(3000, 0, 3, 0)), reading(3, .zero)], at: at(20))
        // eth1 carries an application's traffic and is deleted before the next sample.
        let onEth1 = AppCounterKey(cgroupID: 300, ifindex: 3)
        harness.ingest([.event(.deleted(link("eth1", 3, traffic(500, 0, 5, 0))))], at: at(25))
        harness.ingest(readings: [reading(2, traffic(3000, 0, 3, 0))],
                       apps: read(7, [nginx: traffic(986, 0, 1, 0), onEth1: traffic(216, 0, 2, 0)]), at: at(30))
        harness.save(at: at(30))
        #expect(try stored(harness, "remainder:eth0") == traffic(2000, 0, 2, 0))
        #expect(try stored(harness, "service:nginx.service") == traffic(1000 + 244, 0, 3, 0))
        #expect(try stored(harness, "remainder:eth1") == traffic(256, 0, 3, 0))
        #expect(try stored(harness, "eth1") + (try stored(harness, "eth0")) == traffic(3500, 0, 8, 0))
        #expect(harness.service.apps.attribution.debt.isEmpty)
    }

    @Test("an application's bytes on a link go to the network the link was on, split at the same sample as the link's")
    func byNetwork() throws {
        let home = Network(uuid: "0b5ab2a0-0000-4000-8000-000000000001", id: "Home", type: "wifi", ssid: Array("Home".utf8), metered: .no)
        let hotspot = Network(uuid: "0b5ab2a0-0000-4000-8000-000000000002", id: "Pixel", type: "wifi", ssid: Array("Pixel".utf8),
                              metered: .guessYes)
        let harness = try ServiceHarness()
        harness.start([link("wlan0", 2, traffic(0, 0))], at: at(0))
        baseline(harness)
        harness.service.reportNetworks([DeviceNetwork(interface: "wlan0", network: home)], at: at(0).wall)
        harness.ingest(readings: [reading(2, traffic(2000, 0, 2, 0))],
                       apps: read(7, [firefox: traffic(986, 0, 1, 0)], names: names), at: at(10))
        // The switch: the daemon samples first, then reports.
        harness.ingest(readings: [reading(2, traffic(2000, 0, 2, 0))], apps: read(7, [firefox: traffic(986, 0, 1, 0)]), at: at(20))
        harness.service.reportNetworks([DeviceNetwork(interface: "wlan0", network: hotspot)], at: at(20).wall)
        harness.ingest(readings: [reading(2, traffic(5000, 0, 5, 0))], apps: read(7, [firefox: traffic(2958, 0, 3, 0)]), at: at(30))
        let onHotspot = harness.service.appFigures(onNetwork: hotspot.subject)
        #expect(onHotspot.map(\.name) == ["netapp:\(hotspot.uuid)/app:1000/firefox", "netapp:\(hotspot.uuid)/remainder:wlan0"])
        #expect(onHotspot.first?.total.traffic == traffic(1972 + 28, 0, 2, 0))
        #expect(onHotspot.last?.total.traffic == traffic(1000, 0, 1, 0))
        let atHome = harness.service.appFigures(onNetwork: home.subject)
        #expect(atHome.first { $0.name.hasSuffix("/app:1000/firefox") }?.total.traffic == traffic(1000, 0, 1, 0))
        // Not listed with the applications, and labelled as counted per cgroup.
        #expect(harness.service.appFigures().map(\.name) == ["app:1000/firefox", "remainder:wlan0"])
        #expect(onHotspot.first?.labels == [.estimate, .cgroupCounters, .includesOverhead])
    }

    @Test("a plan on an application and metered networks counts its bytes on those networks only")
    func planOnMeteredNetworks() throws {
        let home = Network(uuid: "0b5ab2a0-0000-4000-8000-000000000001", id: "Home", type: "wifi", ssid: Array("Home".utf8), metered: .no)
        let hotspot = Network(uuid: "0b5ab2a0-0000-4000-8000-000000000002", id: "Pixel", type: "wifi", ssid: Array("Pixel".utf8),
                              metered: .guessYes)
        let plan = Plan(name: "hotspot", selectors: [.app("firefox"), .metered(true)], limit: 10_000, period: .day)
        let harness = try ServiceHarness(configuration: PlanWatchTests.configuration([plan]))
        harness.start([link("wlan0", 2, traffic(0, 0))], at: at(0))
        baseline(harness)
        harness.service.reportNetworks([DeviceNetwork(interface: "wlan0", network: home)], at: at(0).wall)
        harness.ingest(readings: [reading(2, traffic(2000, 0, 2, 0))],
                       apps: read(7, [firefox: traffic(986, 0, 1, 0), nginx: traffic(986, 0, 1, 0)], names: names), at: at(10))
        _ = harness.watch(at: at(10))
        harness.service.reportNetworks([DeviceNetwork(interface: "wlan0", network: hotspot)], at: at(10).wall)
        harness.ingest(readings: [reading(2, traffic(6000, 0, 6, 0))],
                       apps: read(7, [firefox: traffic(2958, 0, 3, 0), nginx: traffic(2958, 0, 3, 0)]), at: at(20))
        _ = harness.watch(at: at(20))
        let figures = try #require(harness.service.planFigures(at: at(20).wall).first)
        #expect(figures.members == ["netapp:\(hotspot.uuid)/app:1000/firefox"])
        #expect(figures.tally.traffic == traffic(1972 + 28, 0, 2, 0))
    }

    @Test("a user who names more cgroups than maximumSubjectsPerUser has the rest counted as app:UID/other; other users are unaffected")
    func subjectsPerUser() throws {
        let harness = try ServiceHarness()
        harness.start([link("eth0", 2, traffic(0, 0))], at: at(0))
        baseline(harness)
        let cap = ServiceApps.maximumSubjectsPerUser
        var counters: [AppCounterKey: Traffic] = [:]
        var names: [UInt64: String] = [:]
        for n in 0..<(cap + 5) {
            counters[AppCounterKey(cgroupID: UInt64(1000 + n), ifindex: 2)] = traffic(86, 0, 1, 0)
            names[UInt64(1000 + n)] = "app:1000/s\(n).service"
        }
        counters[AppCounterKey(cgroupID: 9, ifindex: 2)] = traffic(86, 0, 1, 0)
        names[9] = "app:2000/firefox"
        let total = UInt64(cap + 6)
        harness.ingest(readings: [reading(2, traffic(100 * total, 0, total, 0))], apps: read(7, counters, names: names), at: at(10))
        let subjects = harness.service.appFigures().map(\.name)
        let mine = subjects.filter { $0.hasPrefix("app:1000/") }
        #expect(mine.count == cap + 1, "\(mine.count)")
        #expect(mine.contains("app:1000/other"))
        #expect(subjects.contains("app:2000/firefox"))
        // Every byte is still counted, under one name or another.
        let counted = harness.service.appFigures().filter { $0.name.hasPrefix("app:") }.reduce(Traffic.zero) { $0 + $1.total.traffic }
        #expect(counted == traffic(100 * total, 0, total, 0))
    }

    @Test("killed after a save (what it counted since is lost with it), then started: the map and the links are counted again from the save, and the sums meet")
    func killed() throws {
        let harness = try ServiceHarness()
        harness.start([link("eth0", 2, traffic(0, 0))], at: at(0))
        baseline(harness)
        harness.ingest(readings: [reading(2, traffic(2000, 0, 2, 0))], apps: read(7, [nginx: traffic(986, 0, 1, 0)], names: names), at: at(10))
        harness.save(at: at(10))
        harness.ingest(readings: [reading(2, traffic(4000, 0, 4, 0))], apps: read(7, [nginx: traffic(1972, 0, 2, 0)]), at: at(20))
        // SIGKILL: no save. Traffic goes on while it is down.
        try harness.restart(at: at(100))
        harness.start([link("eth0", 2, traffic(5000, 0, 5, 0))], at: at(100))
        harness.ingest(readings: [reading(2, traffic(5000, 0, 5, 0))], apps: read(7, [nginx: traffic(2958, 0, 3, 0)]), at: at(101))
        harness.save(at: at(101))
        let nginxTotal = try stored(harness, "service:nginx.service"), remainder = try stored(harness, "remainder:eth0")
        #expect(nginxTotal == traffic(3000, 0, 3, 0))
        #expect(nginxTotal + remainder == (try stored(harness, "eth0")), "nginx \(nginxTotal), remainder \(remainder)")
    }
}
