import IfMeterCore
import IfMeterHistory
@testable import IfMeterService
@testable import IfMeterStore
import IfMeterTestSupport
import Testing

@Suite("Meter service coordination", .ownThread, .timeLimit(.minutes(3)))
struct MeterServiceTests {
    @Test("ingest → save → restart from the saved state: exact totals, and a gap for the time between")
    func saveAndRestart() throws {
        let harness = try ServiceHarness()
        harness.start([link("eth0", 2, traffic(500, 50))], at: at(0))
        harness.ingest(readings: [reading(2, traffic(1500, 250, 10, 5))], at: at(30))
        #expect(harness.save(at: at(30)).error == nil)
        harness.ingest(readings: [reading(2, traffic(2000, 300, 14, 6))], at: at(60))
        // Stopped without a save after 60 s: 500 rx counted in memory only are counted again
        // after the restart from the saved counters, attributed to the resume.
        try harness.restart(at: at(90))
        #expect(harness.total("eth0") == traffic(1000, 200, 10, 5))
        harness.start([link("eth0", 2, traffic(2600, 330, 20, 7))], at: at(90))
        #expect(harness.events.suffix(1).map(\.kind) == [.gap])
        #expect(harness.total("eth0") == traffic(2100, 280, 20, 7))
        harness.save(at: at(90))
        #expect(try harness.storedTotal("eth0") == traffic(2100, 280, 20, 7))
        #expect(harness.figures("eth0")?.total.gaps == 1)
        #expect(harness.figures("eth0")?.labels.contains(.gapInPeriod) == true)
    }

    @Test("a failing save keeps everything; the next good one writes it all, once")
    func failingSaveRecovers() throws {
        let harness = try ServiceHarness()
        harness.start([link("eth0", 2, traffic(0, 0))], at: at(0))
        harness.ingest(readings: [reading(2, traffic(100, 10))], at: at(30))
        harness.save(at: at(30))
        harness.failSaves = diskFull
        harness.ingest(readings: [reading(2, traffic(400, 40))], at: at(60))
        let failed = harness.save(at: at(60))
        #expect(failed.error == diskFull)
        #expect(harness.service.summary.saveError == diskFull)
        #expect(try harness.storedTotal("eth0") == traffic(100, 10))
        #expect(harness.total("eth0") == traffic(400, 40))
        harness.ingest(readings: [reading(2, traffic(900, 90))], at: at(90))
        #expect(harness.save(at: at(90)).error == diskFull)
        harness.failSaves = nil
        let recovered = harness.save(at: at(120))
        #expect(recovered.error == nil && recovered.recovered)
        #expect(harness.service.summary.saveError == nil && harness.service.summary.lastSaveAt == at(120).wall)
        #expect(try harness.storedTotal("eth0") == traffic(900, 90))
        #expect(harness.total("eth0") == traffic(900, 90))
        // The log's windows still add up to the truth across the failed saves.
        #expect(harness.logged("eth0") == traffic(900, 90))
        #expect(!harness.service.summary.hasUnsavedTraffic)
    }

    @Test("saves in flight on another thread: figures count them meanwhile; a failed one comes back under newer traffic")
    func savesInFlight() throws {
        let harness = try ServiceHarness()
        harness.start([link("eth0", 2, traffic(0, 0))], at: at(0))
        harness.ingest(readings: [reading(2, traffic(100, 10, 1, 1))], at: at(30))
        var first = harness.service.beginSave(at: at(30).wall)
        #expect(!harness.service.summary.hasUnsavedTraffic)
        #expect(harness.total("eth0") == traffic(100, 10, 1, 1), "a batch in flight still counts")
        harness.ingest(readings: [reading(2, traffic(400, 40, 4, 4))], at: at(60))
        let second = harness.service.beginSave(at: at(60).wall)
        #expect(harness.total("eth0") == traffic(400, 40, 4, 4))
        // The first batch is written; the second fails (disk full) and is pending again.
        let records = first.presentRecords
        try harness.store.writer.save(&first.writes, recording: records)
        #expect(harness.service.finishSave(first, error: nil).error == nil)
        #expect(harness.service.finishSave(second, error: diskFull).error == diskFull)
        #expect(harness.total("eth0") == traffic(400, 40, 4, 4), "nothing counted twice or lost")
        #expect(try harness.storedTotal("eth0") == traffic(100, 10, 1, 1))
        harness.ingest(readings: [reading(2, traffic(1000, 100, 10, 10))], at: at(90))
        #expect(harness.save(at: at(90)).recovered)
        #expect(try harness.storedTotal("eth0") == traffic(1000, 100, 10, 10))
        let days = try harness.store.queries.usageByName(resolution: .day, names: ["eth0"])?["eth0"] ?? []
        #expect(days.map(\.tally.traffic) == [traffic(1000, 100, 10, 10)], "every bucket written once")
        #expect(harness.total("eth0") == traffic(1000, 100, 10, 10))
    }

    @Test("a wall-clock jump is an event; the counted bytes do not change")
    func clockJump() throws {
        let harness = try ServiceHarness()
        harness.start([link("eth0", 2, traffic(0, 0))], at: at(0))
        harness.ingest(readings: [reading(2, traffic(100, 10))], at: at(30))
        harness.ingest(readings: [reading(2, traffic(300, 30))], at: at(60, wallOffset: -3600))
        #expect(harness.events.map(\.kind) == [.firstSight, .clockJump])
        #expect(harness.total("eth0") == traffic(300, 30))
        harness.save(at: at(60, wallOffset: -3600))
        #expect(try harness.storedTotal("eth0") == traffic(300, 30))
    }

    @Test("link events before the counters in one ingest: a deletion is final, its stale reading ignored")
    func eventsBeforeSample() throws {
        let harness = try ServiceHarness()
        harness.start([link("tun0", 5, traffic(0, 0), kind: "tun", tunFlags: 0x1001)], at: at(0))
        harness.ingest(readings: [reading(5, traffic(100, 10))], at: at(30))
        // Deleted at 700 rx, but the dump taken after (a stale reading) still says 600.
        harness.ingest([.event(.deleted(link("tun0", 5, traffic(700, 70), kind: "tun")))],
                       readings: [reading(5, traffic(600, 60))], at: at(60))
        #expect(harness.total("tun0") == traffic(700, 70))
        #expect(harness.events.last?.kind == .deleted)
        #expect((harness.service.summary.presentLinks == 0))
        // Re-created after the sample: a new epoch counted from zero.
        harness.ingest([.event(.newOrChanged(link("tun0", 6, traffic(40, 4), kind: "tun", tunFlags: 0x1001)))], at: at(70))
        harness.ingest(readings: [reading(6, traffic(90, 9))], at: at(90))
        #expect(harness.events.suffix(1).map(\.kind) == [.epochStarted])
        #expect(harness.total("tun0") == traffic(790, 79))
        let figures = try #require(harness.figures("tun0"))
        #expect(figures.interfaceClass == "tunnel" && figures.labels.contains(.tunnelDoubleCounted))
        #expect(figures.total.resets == 1)
    }

    @Test("a deleted name stays in the snapshot as absent, with its total and when it was last seen")
    func absentAfterDeletion() throws {
        let harness = try ServiceHarness()
        harness.start([link("veth0", 3, traffic(0, 0), kind: "veth")], at: at(0))
        harness.ingest(readings: [reading(3, traffic(50, 5))], at: at(30))
        harness.save(at: at(30))
        harness.ingest([.event(.deleted(link("veth0", 3, traffic(80, 8), kind: "veth")))], at: at(40))
        harness.save(at: at(40))
        let absent = try #require(harness.figures("veth0"))
        #expect(absent.present == nil && absent.lastSeen == at(40).wall)
        #expect(absent.total.traffic == traffic(80, 8) && absent.interfaceClass == "virtual")
        try harness.restart(at: at(100))
        harness.start([], at: at(100))
        #expect(harness.figures("veth0")?.total.traffic == traffic(80, 8))
        #expect(harness.figures("veth0")?.lastSeen == at(40).wall)
    }

    @Test("restart in the middle of a log window: the windows before and after add up to the truth")
    func restartMidWindow() throws {
        let harness = try ServiceHarness()
        harness.start([link("eth0", 2, traffic(0, 0))], at: at(0))
        harness.ingest(readings: [reading(2, traffic(100, 10))], at: at(30))
        harness.save(at: at(30))
        harness.ingest(readings: [reading(2, traffic(250, 20))], at: at(45))
        harness.save(at: at(50))  // the stop's save, mid-way through the next 30 s window
        try harness.restart(at: at(55))
        harness.start([link("eth0", 2, traffic(260, 22))], at: at(55))
        harness.ingest(readings: [reading(2, traffic(300, 30))], at: at(80))
        harness.save(at: at(80))
        #expect(harness.logged("eth0") == traffic(300, 30))
        let windows = harness.logs.flatMap(\.estimates).map { [$0.start, $0.end] }
        #expect(windows == [[at(0).wall, at(30).wall], [at(30).wall, at(50).wall], [at(55).wall, at(80).wall]])
        #expect(try harness.storedTotal("eth0") == traffic(300, 30))
    }

    @Test("the link table keeps links without their counters, from the start dump, events and a resync alike")
    func linksWithoutCounters() throws {
        let harness = try ServiceHarness()
        harness.start([link("eth0", 2, traffic(100, 10))], at: at(0))
        harness.ingest([.event(.newOrChanged(link("eth1", 3, traffic(5, 5))))], at: at(5))
        #expect(harness.service.table.links.count == 2 && harness.service.table.links.values.allSatisfy { $0.counters == nil })
        harness.ingest([.resync(links: [link("eth0", 2, traffic(300, 30)), link("eth2", 4, traffic(1, 1))], unparseable: 0)],
                       readings: [reading(2, traffic(400, 40)), reading(4, traffic(2, 2))], at: at(10))
        #expect(harness.service.table.links.count == 2 && harness.service.table.links.values.allSatisfy { $0.counters == nil })
        #expect(harness.total("eth0") == traffic(300, 30))
    }

    @Test("the log's window names each name's class as it was when the save began, none for a link gone, sorted by name")
    func logClasses() throws {
        let harness = try ServiceHarness()
        let links = [link("tun9", 9, traffic(0, 0), kind: "tun", tunFlags: 1), link("eth0", 2, traffic(0, 0)),
                     link("veth1", 5, traffic(0, 0), kind: "veth")]
        harness.start(links, at: at(0))
        harness.ingest(readings: [reading(9, traffic(10, 1)), reading(2, traffic(20, 2)), reading(5, traffic(30, 3))],
                       at: at(10))
        harness.ingest([.event(.deleted(link("veth1", 5, traffic(35, 4), kind: "veth")))], at: at(12))
        let outcome = harness.save(at: at(15))
        let classes = harness.service.snapshot().interfaces.reduce(into: [String: String]()) { $0[$1.name] = $1.interfaceClass }
        #expect(outcome.log.estimates.map(\.name) == ["eth0", "tun9", "veth1"])
        #expect(outcome.log.estimates.map { $0.classification?.label } == [classes["eth0"], classes["tun9"], nil])
        #expect(classes["eth0"] != nil && classes["tun9"] != nil && classes["eth0"] != classes["tun9"])
        #expect(outcome.log.estimates.map(\.tally.traffic) == [traffic(20, 2), traffic(10, 1), traffic(35, 4)])
        #expect(outcome.log.estimates.allSatisfy { $0.start == at(0).wall && $0.end == at(15).wall })
    }

    @Test("a reload re-classifies: an ignore rule drops a link's traffic and events from then on")
    func reloadIgnores() throws {
        let harness = try ServiceHarness()
        harness.start([link("eth0", 2, traffic(0, 0)), link("eth1", 3, traffic(0, 0))], at: at(0))
        harness.ingest(readings: [reading(2, traffic(100, 10)), reading(3, traffic(100, 10))], at: at(30))
        harness.save(at: at(30))
        var configuration = ServiceConfiguration()
        configuration.classifier = Classifier(rules: [try ClassRule(parsing: "eth1 = ignore")])
        harness.service.reconfigure(configuration)
        let before = harness.events.count
        harness.ingest(readings: [reading(2, traffic(300, 30)), reading(3, traffic(50, 5))], at: at(60))
        #expect(harness.events.count == before)  // eth1's reset is not reported
        #expect(harness.total("eth0") == traffic(300, 30))
        #expect(harness.total("eth1") == traffic(100, 10))
        #expect(harness.figures("eth1")?.interfaceClass == "ignored")
        harness.save(at: at(60))
        // Its history stays as it was when last metered.
        let stored = try #require(try harness.store.queries.interfaces().first { $0.name == "eth1" })
        #expect(stored.interfaceClass == "ethernet" && stored.lastSeen == at(30).wall)
        // A metered link's record is written by every save.
        #expect(try harness.store.queries.interfaces().first { $0.name == "eth0" }?.lastSeen == at(60).wall)
        #expect(try harness.storedTotal("eth1") == traffic(100, 10))
    }

    @Test("a reboot between runs closes the old epochs and baselines nothing twice")
    func rebootBetweenRuns() throws {
        let harness = try ServiceHarness()
        harness.start([link("eth0", 2, traffic(0, 0))], at: at(0))
        harness.ingest(readings: [reading(2, traffic(100, 10))], at: at(30))
        harness.save(at: at(30))
        try harness.restart(bootID: "boot-2", at: at(5))
        harness.start([link("eth0", 2, traffic(70, 7))], at: at(5, wallOffset: 600))
        #expect(harness.events.suffix(2).map(\.kind) == [.reboot, .epochStarted])
        #expect(harness.total("eth0") == traffic(170, 17))
        harness.save(at: at(5, wallOffset: 600))
        #expect(try harness.storedTotal("eth0") == traffic(170, 17))
    }

    @Test("lost link events: a resync's event first, the labels of every figure since")
    func lostEvents() throws {
        let harness = try ServiceHarness()
        harness.start([link("eth0", 2, traffic(0, 0)), link("tap1", 4, traffic(0, 0), kind: "tun", tunFlags: 0x1002)], at: at(0))
        harness.ingest([.resync(links: [link("eth0", 2, traffic(10, 1))], unparseable: 0)], at: at(20))
        #expect(harness.events.suffix(2).map(\.kind) == [.eventsLost, .vanished])
        #expect(harness.service.summary.lostEvents.everyone.count(from: at(0).wall, to: at(30).wall) == 1)
        #expect(harness.figures("eth0")?.labels.contains(.eventsLost) == true)
        #expect(harness.service.snapshot().summary.eventsLost == 1)
        harness.save(at: at(30))
        try harness.restart(at: at(40))
        #expect(harness.service.summary.lostEvents.everyone.count(from: at(0).wall, to: at(30).wall) == 1)
    }

    @Test("a flood of resyncs: one stored events-lost event a window, every loss counted, the labels the same after a restart")
    func lostEventsFlood() throws {
        let harness = try ServiceHarness()
        harness.start([link("eth0", 2, traffic(0, 0))], at: at(0))
        for step in 0..<200 {
            harness.ingest([.resync(links: [link("eth0", 2, traffic(10, 1))], unparseable: 0)], at: at(10 + Double(step) / 2))
        }
        #expect(harness.events.filter { $0.kind == .eventsLost }.map(\.at) == [at(10).wall, at(70).wall])
        #expect(harness.service.snapshot().summary.eventsLost == 200)
        harness.save(at: at(120))
        #expect(try harness.store.queries.events(kind: .eventsLost).count == 2)
        try harness.restart(at: at(130))
        #expect(harness.service.summary.lostEvents.everyone.count(from: at(65).wall, to: at(66).wall) > 0)
        #expect(harness.service.summary.lostEvents.everyone.count(from: at(0).wall, to: at(10).wall) == 0)
    }

    @Test("a namespace metered from inside has at most insideNamesLimit names: a new one past it is ignored and said once; known names and a forgotten one's slot stay usable")
    func insideNamesLimit() throws {
        var configuration = ServiceConfiguration()
        configuration.insideNamesLimit = 2
        let harness = try ServiceHarness(configuration: configuration)
        func inside(_ name: String, _ ifindex: Int32, _ counters: Traffic) -> Link {
            var link = link("netns:vpn/\(name)", ifindex, counters)
            link.namespace = NamespaceID(rawValue: 1)
            return link
        }
        harness.start([link("eth0", 2, traffic(0, 0)), inside("lo", 1, traffic(0, 0))], at: at(0))
        var notices: [String] = []
        for (index, name) in ["a", "b", "c"].enumerated() {
            notices += harness.service.ingest(linkEvents: [.event(.newOrChanged(inside(name, Int32(10 + index), traffic(0, 0))))], at: at(10)).notices
        }
        notices += harness.service.ingest(linkEvents: [], readings: [
            CounterReading(namespace: NamespaceID(rawValue: 1), ifindex: 10, counters: LinkCounters(rxBytes: 100, txBytes: 10)),
            CounterReading(namespace: NamespaceID(rawValue: 1), ifindex: 11, counters: LinkCounters(rxBytes: 200, txBytes: 20)),
            CounterReading(namespace: NamespaceID(rawValue: 1), ifindex: 12, counters: LinkCounters(rxBytes: 300, txBytes: 30)),
        ], at: at(20)).notices
        #expect(notices.count == 1 && notices.first?.contains("meter_inside_names") == true, "\(notices)")
        #expect(harness.figures("netns:vpn/a")?.interfaceClass != "ignored", "lo and a are the two names")
        #expect(harness.total("netns:vpn/a") != traffic(0, 0))
        #expect(harness.figures("netns:vpn/b")?.interfaceClass == "ignored")
        #expect(harness.figures("netns:vpn/c")?.interfaceClass == "ignored")
        #expect(harness.total("netns:vpn/b") == traffic(0, 0) && harness.total("netns:vpn/c") == traffic(0, 0))
        #expect(harness.figures("eth0")?.interfaceClass != "ignored", "the own namespace has no limit")
        // Deleted, the ignored ones leave no history; the admitted a stays a name of the namespace.
        for index in 10...12 { harness.ingest([.event(.deleted(inside(["a", "b", "c"][index - 10], Int32(index), traffic(0, 0))))], at: at(30)) }
        harness.save(at: at(30))
        let names = harness.service.snapshot().interfaces.map(\.name).filter { $0.hasPrefix("netns:vpn/") }
        #expect(names.sorted() == ["netns:vpn/a", "netns:vpn/lo"], "\(names)")
    }

    @Test("nothing is counted before the first dump")
    func beforeStart() throws {
        let harness = try ServiceHarness()
        harness.ingest([.event(.newOrChanged(link("eth0", 2, traffic(10, 1))))], readings: [reading(2, traffic(10, 1))], at: at(1))
        #expect(harness.events.isEmpty && (harness.service.summary.presentLinks == 0) && harness.service.summary.sampledAt == nil)
        harness.start([link("eth0", 2, traffic(20, 2))], at: at(2), unparseable: 3)
        #expect(harness.events.map(\.kind) == [.firstSight, .eventsLost])
        #expect(harness.service.summary.sampledAt == at(2))
    }
}
