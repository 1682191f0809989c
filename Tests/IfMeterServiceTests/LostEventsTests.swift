import IfMeterCore
@testable import IfMeterService
import IfMeterTestSupport
import Testing

@Suite("Lost link events", .ownThread, .timeLimit(.minutes(3)))
struct LostEventTimesTests {
    @Test("a period is labelled when it overlaps a run of losses: from the first loss until a window after it")
    func periods() {
        var times = LostEventTimes([300, 100])
        let begun = times.record(200)
        #expect(begun)
        #expect(times.runs.map(\.start) == [100, 200, 300])
        #expect(times.runs.map(\.end) == [160, 260, 360])
        #expect(times.count(from: 100, to: 300) == 2)
        #expect(times.count(from: 0, to: 100) == 0)
        #expect(times.count(from: 150, to: 170) == 1, "inside the first run's window")
        #expect(times.count(from: 160, to: 200) == 0)
        #expect(times.count(from: 360, to: Double.infinity) == 0)
        #expect(EstimateLabel.labels(tunnel: false, resets: 0, gaps: 0, implausibleDropped: 0, eventsLost: 1).contains(.eventsLost))
    }

    @Test("a flood of losses: each window's are one run and one stored event; past the capacity the oldest runs merge, and every period that had a loss keeps its label")
    func flood() {
        var times = LostEventTimes()
        var begun: [Double] = []
        // A loss every 0.5 s for long enough to fill the capacity one and a half times over.
        let losses = Int(LostEventTimes.window) * 2 * LostEventTimes.capacity * 3 / 2
        for index in 0..<losses {
            let time = Double(index) / 2
            if times.record(time) { begun.append(time) }
        }
        #expect(begun.count == losses / (Int(LostEventTimes.window) * 2))
        #expect(times.runs.count == LostEventTimes.capacity)
        #expect(times.total == losses)
        #expect(times.count(from: -Double.infinity, to: Double.infinity) == losses)
        for probe in stride(from: 0.0, to: Double(losses) / 2, by: 997.3) {
            #expect(times.count(from: probe, to: probe + 1) > 0, "a loss at \(probe) lost its label")
        }
        #expect(zip(times.runs, times.runs.dropFirst()).allSatisfy { $0.end <= $1.start })
    }
}

@Suite("Lost link events, by whose figures they concern", .ownThread, .timeLimit(.minutes(3)))
struct ScopedLostEventsTests {
    @Test("a loss concerns everyone, one subject, or every subject under a prefix; a sum counts its members' own")
    func scopes() {
        var lost = LostEvents([(at: 100, scope: "container:web"), (at: 400, scope: nil)])
        #expect(lost.hasScoped && lost.total == 2)
        let begun = lost.record(200, scope: "netns:vpn/")
        let joined = !lost.record(210, scope: "netns:vpn/")
        #expect(begun && joined, "the second joins the first's run")
        #expect(lost.count(from: 0, to: 300, for: "container:web") == 1)
        #expect(lost.count(from: 0, to: 300, for: "container:web2") == 0)
        #expect(lost.count(from: 0, to: 300, for: "eth0") == 0)
        #expect(lost.count(from: 0, to: 300, for: "netns:vpn/eth0") == 2)
        #expect(lost.count(from: 0, to: 300, for: "netns:vpn") == 0)
        #expect(lost.count(from: 0, to: .infinity, for: "eth0") == 1, "everyone's")
        #expect(lost.count(from: 0, to: 300, forAny: ["eth0", "container:web", "netns:vpn/lo", "netns:vpn/eth0"]) == 3)
        #expect(lost.count(from: 0, to: 300, forAny: ["eth0"]) == 0)
        #expect(lost.everyone.total == 1 && lost.total == 4)
    }

    @Test("the peers socket lost messages as an owner's link went: that subject is labelled, in figures, the log and after a restart; nobody else")
    func ownerOnly() throws {
        let harness = try ServiceHarness()
        let web = link("container:web", 7, traffic(0, 0), kind: "veth")
        harness.start([link("eth0", 2, traffic(0, 0)), web], at: at(0))
        harness.ingest(readings: [reading(2, traffic(100, 10)), reading(7, traffic(50, 5))], at: at(30))
        harness.ingest([.peerEventsLost(before: web), .event(.deleted(link("container:web", 7, traffic(50, 5), kind: "veth")))], at: at(31))
        let lost = try #require(harness.events.first { $0.kind == .eventsLost })
        #expect(lost.interface == "container:web")
        #expect(harness.figures("container:web")?.labels.contains(.eventsLost) == true)
        #expect(harness.figures("eth0")?.labels.contains(.eventsLost) == false)
        #expect(harness.service.summary.lostEvents.everyone.total == 0)
        harness.save(at: at(32))
        let estimates = try #require(harness.logs.last?.estimates)
        #expect(estimates.first { $0.name == "container:web" }?.labels.contains(.eventsLost) == true)
        #expect(estimates.first { $0.name == "eth0" }?.labels.contains(.eventsLost) == false)
        #expect(try harness.store.queries.events(kind: .eventsLost).map(\.interface) == ["container:web"])
        try harness.restart(at: at(60))
        harness.start([link("eth0", 2, traffic(100, 10))], at: at(60))
        #expect(harness.figures("container:web")?.labels.contains(.eventsLost) == true)
        #expect(harness.figures("eth0")?.labels.contains(.eventsLost) == false)
    }

    @Test("a namespace metered from inside lost its events: only the subjects under its prefix are labelled")
    func insideNamespaceOnly() throws {
        let harness = try ServiceHarness()
        var inside = link("netns:vpn/lo", 1, traffic(0, 0))
        inside.namespace = NamespaceID(rawValue: 1)
        harness.start([link("eth0", 2, traffic(0, 0)), inside], at: at(0))
        harness.ingest([.resync(links: [inside], namespace: inside.namespace, unparseable: 0)], at: at(20))
        #expect(harness.events.first { $0.kind == .eventsLost }?.interface == "netns:vpn/")
        #expect(harness.figures("netns:vpn/lo")?.labels.contains(.eventsLost) == true)
        #expect(harness.figures("eth0")?.labels.contains(.eventsLost) == false)
    }
}
