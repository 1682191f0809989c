import IfMeterApps
import IfMeterCore
import IfMeterHistory
import IfMeterPlans
@testable import IfMeterService
@testable import IfMeterStore
import IfMeterTestSupport
import Testing

private let home = Network(uuid: "0b5ab2a0-0000-4000-8000-000000000001", id: "Home", type: "wifi",
                           ssid: Array("Home".utf8), metered: .no)

@Suite("Scopes: each link's split into local, internet and unknown, its network's and its applications'", .ownThread,
       .timeLimit(.minutes(3)))
struct ScopeCountingTests {
    func scopes(_ entries: [Int32: (local: Traffic, internet: Traffic)], mapID: UInt32 = 7) -> ScopeCounts {
        var counters: [ScopeCounterKey: Traffic] = [:]
        for (ifindex, entry) in entries {
            counters[ScopeCounterKey(ifindex: ifindex, scope: .local)] = entry.local
            counters[ScopeCounterKey(ifindex: ifindex, scope: .internet)] = entry.internet
        }
        return ScopeCounts(mapID: mapID, counters: counters)
    }

    func stored(_ harness: ServiceHarness, _ scope: TrafficScope, _ subject: String) throws -> Traffic {
        try harness.storedTotal(ScopeKind.subject(subject, scope: scope))
    }

    func sum(_ harness: ServiceHarness, _ subject: String) throws -> Traffic {
        try TrafficScope.allCases.reduce(Traffic.zero) { $0 + (try stored(harness, $1, subject)) }
    }

    @Test("a covered link is split in the program's proportions and the three add up to it; one not covered is unknown")
    func split() throws {
        let harness = try ServiceHarness()
        harness.start([link("eth0", 2, traffic(0, 0)), link("eth1", 3, traffic(0, 0)), link("container:web", 4, traffic(0, 0))],
                      at: at(0), scopes: scopes([2: (.zero, .zero)]))
        harness.ingest(readings: [reading(2, traffic(4000, 1000, 40, 10)), reading(3, traffic(700, 70, 7, 1)),
                                  reading(4, traffic(100, 100, 1, 1))],
                       scopes: scopes([2: (traffic(1000, 750, 10, 5), traffic(3000, 250, 30, 5))]), at: at(10))
        harness.save(at: at(10))
        #expect(try stored(harness, .local, "eth0") == traffic(1000, 750, 10, 5))
        #expect(try stored(harness, .internet, "eth0") == traffic(3000, 250, 30, 5))
        #expect(try stored(harness, .unknown, "eth0") == .zero)
        #expect(try stored(harness, .unknown, "eth1") == traffic(700, 70, 7, 1))
        // The views find them by name, saved or not.
        let found = harness.service.figures(named: ["scope:internet/eth0", "scope:local/eth1", "scope:unknown/eth1"])
        #expect(found.map(\.name) == ["scope:internet/eth0", "scope:unknown/eth1"], "a scope never counted is not found")
        #expect(found.first?.total.traffic == traffic(3000, 250, 30, 5))
        #expect(try sum(harness, "eth0") == (try harness.storedTotal("eth0")))
        #expect(try sum(harness, "eth1") == (try harness.storedTotal("eth1")))
        #expect(try harness.storedTotal("container:web") == traffic(100, 100, 1, 1))
        #expect(try harness.storedTotal("scope:unknown/container:web") == .zero, "an owner's link is not an interface: not split")
        // Another view of the same bytes: not an interface, and not in the estimate log.
        #expect(harness.figures("scope:local/eth0") == nil)
        #expect(harness.logged("scope:local/eth0") == .zero)
    }

    @Test("a bridge or a veth is split only while a program covers it; an Ethernet link not covered is unknown")
    func virtualLinks() throws {
        let harness = try ServiceHarness()
        harness.start([link("br0", 2, traffic(0, 0), kind: "bridge"), link("veth1", 3, traffic(0, 0), kind: "veth"),
                       link("eth0", 4, traffic(0, 0))], at: at(0), scopes: scopes([3: (.zero, .zero)]))
        harness.ingest(readings: [reading(2, traffic(900, 90, 9, 1)), reading(3, traffic(600, 60, 6, 1)),
                                  reading(4, traffic(300, 30, 3, 1))],
                       scopes: scopes([3: (traffic(600, 0, 6, 0), traffic(0, 60, 0, 1))]), at: at(10))
        harness.save(at: at(10))
        #expect(try sum(harness, "br0") == .zero, "a bridge no program covers is not split")
        #expect(try stored(harness, .local, "veth1") == traffic(600, 0, 6, 0))
        #expect(try stored(harness, .internet, "veth1") == traffic(0, 60, 0, 1))
        #expect(try stored(harness, .unknown, "eth0") == traffic(300, 30, 3, 1))
    }

    @Test("no map read, no scope subjects: a daemon without the program counts none")
    func withoutProgram() throws {
        let harness = try ServiceHarness()
        harness.start([link("eth0", 2, traffic(0, 0))], at: at(0))
        harness.ingest(readings: [reading(2, traffic(4000, 1000, 40, 10))], at: at(10))
        harness.save(at: at(10))
        #expect(try sum(harness, "eth0") == .zero)
        #expect(harness.service.beginJournal() != nil, "the save journal still serves a daemon without scopes")
    }

    @Test("the split is copied to the link's network; a sample whose map could not be read is unknown")
    func network() throws {
        let harness = try ServiceHarness()
        harness.start([link("wlan0", 3, traffic(0, 0))], at: at(0), scopes: scopes([3: (.zero, .zero)]))
        harness.service.reportNetworks([DeviceNetwork(interface: "wlan0", network: home)], at: at(0).wall)
        harness.ingest(readings: [reading(3, traffic(1000, 100, 10, 1))],
                       scopes: scopes([3: (traffic(500, 0, 5, 0), traffic(500, 100, 5, 1))]), at: at(10))
        harness.ingest(readings: [reading(3, traffic(1200, 100, 12, 1))], at: at(20))
        harness.save(at: at(20))
        #expect(try stored(harness, .local, home.subject) == traffic(500, 0, 5, 0))
        #expect(try stored(harness, .internet, home.subject) == traffic(500, 100, 5, 1))
        #expect(try stored(harness, .unknown, home.subject) == traffic(200, 0, 2, 0))
        #expect(try sum(harness, home.subject) == (try harness.storedTotal(home.subject)))
    }

    @Test("applications are counted by their entries' scopes too; remainders are not")
    func applications() throws {
        let harness = try ServiceHarness()
        harness.start([link("eth0", 2, traffic(0, 0))], at: at(0))
        harness.ingest(readings: [reading(2, traffic(0, 0))], apps: AppRead(counts: AppCounts(mapID: 9, counters: [:])),
                       at: at(1))
        let local = AppCounterKey(cgroupID: 400, ifindex: 2, scope: .local)
        let internet = AppCounterKey(cgroupID: 400, ifindex: 2, scope: .internet)
        harness.ingest(readings: [reading(2, traffic(5000, 5000, 10, 10))],
                       apps: AppRead(counts: AppCounts(mapID: 9, counters: [local: traffic(1000, 0, 1, 0),
                                                                              internet: traffic(0, 2000, 0, 2)]),
                                     names: [400: "app:1000/firefox"]), at: at(10))
        harness.save(at: at(10))
        #expect(try stored(harness, .local, "app:1000/firefox") == traffic(1014, 0, 1, 0))
        #expect(try stored(harness, .internet, "app:1000/firefox") == traffic(0, 2028, 0, 2))
        #expect(try sum(harness, "app:1000/firefox") == (try harness.storedTotal("app:1000/firefox")))
        #expect(try sum(harness, "remainder:eth0") == .zero)
    }

    @Test("a restart resumes the map: what the links carried meanwhile is divided as the map counted it, once")
    func restart() throws {
        let harness = try ServiceHarness()
        harness.start([link("eth0", 2, traffic(0, 0))], at: at(0), scopes: scopes([2: (.zero, .zero)]))
        harness.ingest(readings: [reading(2, traffic(1000, 0, 10, 0))],
                       scopes: scopes([2: (traffic(1000, 0, 10, 0), .zero)]), at: at(10))
        harness.save(at: at(10))
        #expect(harness.service.beginJournal() == nil, "the map's state goes with the buckets: no journal")
        try harness.restart(at: at(100))
        // Down for 90 s: the link carried 4000 bytes more, three quarters of them to the internet.
        harness.start([link("eth0", 2, traffic(5000, 0, 50, 0))], at: at(100),
                      scopes: scopes([2: (traffic(2000, 0, 20, 0), traffic(3000, 0, 30, 0))]))
        harness.save(at: at(100))
        #expect(try stored(harness, .local, "eth0") == traffic(2000, 0, 20, 0))
        #expect(try stored(harness, .internet, "eth0") == traffic(3000, 0, 30, 0))
        #expect(try sum(harness, "eth0") == (try harness.storedTotal("eth0")))
        // A save that failed writes the map's state again with the next.
        harness.ingest(readings: [reading(2, traffic(5000, 0, 50, 0))],
                       scopes: scopes([2: (traffic(2000, 0, 20, 0), traffic(3000, 0, 30, 0))]), at: at(110))
        let unchanged = harness.service.beginSave(at: at(110).wall)
        #expect(unchanged.writes.scopes == nil, "the map did not move")
        _ = harness.service.finishSave(unchanged, error: diskFull)
        #expect(harness.service.beginSave(at: at(120).wall).writes.scopes?.counters.count == 2)
    }

    @Test("a plan on the internet fires on internet bytes only, once per threshold; local bytes never move it")
    func internetPlan() throws {
        let plan = Plan(name: "isp", selectors: [.name("eth0")], limit: 1000, period: .day, thresholds: [0.5, 1],
                        traffic: .internet)
        let harness = try ServiceHarness(configuration: PlanWatchTests.configuration([plan]))
        harness.start([link("eth0", 2, traffic(0, 0))], at: at(0), scopes: scopes([2: (.zero, .zero)]))
        // A backup to the NAS: a gigabyte, all local.
        harness.ingest(readings: [reading(2, traffic(0, 1_000_000_000, 0, 1000))],
                       scopes: scopes([2: (traffic(0, 1_000_000_000, 0, 1000), .zero)]), at: at(10))
        #expect(harness.watch(at: at(10)).isEmpty)
        #expect(harness.service.planFigures(at: at(10).wall).first?.used == 0)
        harness.ingest(readings: [reading(2, traffic(600, 1_000_000_000, 6, 1000))],
                       scopes: scopes([2: (traffic(0, 1_000_000_000, 0, 1000), traffic(600, 0, 6, 0))]), at: at(20))
        #expect(harness.watch(at: at(20)).compactMap(PlanEvent.init).map(\.facts.threshold) == [0.5])
        harness.ingest(readings: [reading(2, traffic(600, 2_000_000_000, 6, 2000))],
                       scopes: scopes([2: (traffic(0, 2_000_000_000, 0, 2000), traffic(600, 0, 6, 0))]), at: at(30))
        #expect(harness.watch(at: at(30)).isEmpty, "local bytes never move it")
        harness.ingest(readings: [reading(2, traffic(1100, 2_000_000_000, 11, 2000))],
                       scopes: scopes([2: (traffic(0, 2_000_000_000, 0, 2000), traffic(1100, 0, 11, 0))]), at: at(40))
        #expect(harness.watch(at: at(40)).compactMap(PlanEvent.init).map(\.facts.threshold) == [1])
        #expect(harness.watch(at: at(50)).isEmpty)
        let figures = try #require(harness.service.planFigures(at: at(50).wall).first)
        #expect(figures.used == 1100)
        #expect(figures.members == ["scope:internet/eth0"])
        #expect(figures.unknownBytes == 0 && !figures.labels.contains(.scopeUnknown))
    }

    @Test("a plan on the internet over a link no program covers reads no internet, and says how much it could not tell")
    func internetPlanUncovered() throws {
        let plan = Plan(name: "isp", selectors: [.name("eth0")], limit: 1000, period: .day, thresholds: [0.5], traffic: .internet)
        let harness = try ServiceHarness(configuration: PlanWatchTests.configuration([plan]))
        harness.start([link("eth0", 2, traffic(0, 0))], at: at(0), scopes: scopes([:]))
        harness.ingest(readings: [reading(2, traffic(100, 5000, 1, 5))], scopes: scopes([:]), at: at(10))
        #expect(harness.watch(at: at(10)).isEmpty)
        harness.save(at: at(10))
        harness.ingest(readings: [reading(2, traffic(100, 7000, 1, 7))], scopes: scopes([:]), at: at(20))
        _ = harness.watch(at: at(20))
        let figures = try #require(harness.service.planFigures(at: at(20).wall).first)
        #expect(figures.used == 0)
        #expect(figures.unknownBytes == 7100, "saved and not, both directions")
        #expect(figures.labels.contains(.scopeUnknown))
    }

    @Test("a start that cannot read the map it read before: the links' deltas are unknown until it comes back, and the sums meet")
    func startWithoutRead() throws {
        let harness = try ServiceHarness()
        harness.start([link("eth0", 2, traffic(0, 0))], at: at(0), scopes: scopes([2: (.zero, .zero)]))
        harness.ingest(readings: [reading(2, traffic(1000, 0, 10, 0))],
                       scopes: scopes([2: (traffic(1000, 0, 10, 0), .zero)]), at: at(10))
        harness.save(at: at(10))
        try harness.restart(at: at(100))
        harness.start([link("eth0", 2, traffic(3000, 0, 30, 0))], at: at(100))
        harness.ingest(readings: [reading(2, traffic(4000, 0, 40, 0))], at: at(110))
        harness.ingest(readings: [reading(2, traffic(6000, 0, 60, 0))],
                       scopes: scopes([2: (traffic(1500, 0, 15, 0), traffic(500, 0, 5, 0))]), at: at(120))
        harness.save(at: at(120))
        #expect(try stored(harness, .unknown, "eth0") == traffic(2000 + 1000 + 1000, 0, 40, 0),
                "the start's 2000, the sample's without a read, and the 1000 beyond what the map counted after it")
        #expect(try stored(harness, .local, "eth0") == traffic(1000 + 500, 0, 15, 0))
        #expect(try stored(harness, .internet, "eth0") == traffic(500, 0, 5, 0))
        #expect(try harness.storedTotal("eth0") == traffic(6000, 0, 60, 0))
        #expect(try sum(harness, "eth0") == (try harness.storedTotal("eth0")))
    }
}
