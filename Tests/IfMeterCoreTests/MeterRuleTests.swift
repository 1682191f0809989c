import Foundation
import IfMeterCore
import IfMeterTestSupport
import Testing

/// One case of a meter rule (docs/METER.md), as a scenario with exact expected totals and events.
struct RuleCase: Sendable, CustomTestStringConvertible {
    var rule: MeterRule
    /// The case in words.
    var what: String
    var configuration = MeterConfiguration()
    var knownNames: [String: Double] = [:]
    var steps: [MeterStep]
    var totals: [String: Traffic]
    var events: [CounterEvent.Kind]

    var testDescription: String { "rule \(rule.rawValue) (\(rule)): \(what)" }
}

private typealias S = Scenario

private func t(_ rxBytes: UInt64, _ txBytes: UInt64, _ rxPackets: UInt64 = 0, _ txPackets: UInt64 = 0) -> Traffic {
    S.traffic(rxBytes, txBytes, rxPackets, txPackets)
}

private func link(_ name: String, _ ifindex: Int32, _ counters: Traffic, kind: String = "",
                  is32Bit: Bool = false, speed: UInt64? = nil, parent: Int32? = nil) -> Link {
    S.link(name, ifindex, counters, kind: kind, is32Bit: is32Bit, speed: speed, parent: parent)
}

private func reading(_ ifindex: Int32, _ counters: Traffic) -> CounterReading {
    S.reading(ifindex, counters)
}

private func at(_ seconds: Double, wallOffset: Double = 0) -> MeterInstant {
    S.at(seconds, wallOffset: wallOffset)
}

let ruleCases: [RuleCase] = [
    RuleCase(
        rule: .firstSight, what: "first sight at daemon start: current counters are the baseline",
        steps: [.start([link("eth0", 2, t(1000, 2000, 10, 20))], at: at(0)),
                .sample([reading(2, t(1500, 2600, 15, 26))], at: at(30))],
        totals: ["eth0": t(500, 600, 5, 6)], events: [.firstSight]),
    RuleCase(
        rule: .countFromZero, what: "an interface appearing while the daemon runs counts from zero",
        steps: [.start([link("eth0", 2, t(10, 10))], at: at(0)),
                .event(.newOrChanged(link("usb0", 5, t(300, 400, 3, 4))), at: at(10)),
                .sample([reading(2, t(10, 10)), reading(5, t(350, 470, 4, 5))], at: at(30))],
        totals: ["usb0": t(350, 470, 4, 5)], events: [.firstSight, .appeared]),
    RuleCase(
        rule: .countFromZero, what: "a name with history at daemon start counts from zero",
        knownNames: ["wlan0": S.wallOrigin - 86_400],
        steps: [.start([link("wlan0", 3, t(700, 800, 7, 8))], at: at(0)),
                .sample([reading(3, t(900, 800, 9, 8))], at: at(30))],
        totals: ["wlan0": t(900, 800, 9, 8)], events: [.epochStarted]),
    RuleCase(
        rule: .advance, what: "same boot, same ifindex, counters grow: delta is the difference",
        steps: [.start([link("eth0", 2, t(5, 5))], at: at(0)),
                .sample([reading(2, t(105, 55, 1, 1))], at: at(30)),
                .sample([reading(2, t(105, 55, 1, 1))], at: at(60)),
                .sample([reading(2, t(1105, 2055, 11, 21))], at: at(90))],
        totals: ["eth0": t(1100, 2050, 11, 21)], events: [.firstSight]),
    RuleCase(
        rule: .reboot, what: "reboot: every epoch closes, the new boot counts from zero",
        steps: [.start([link("eth0", 2, t(100, 100))], at: at(0)),
                .sample([reading(2, t(400, 300))], at: at(30)),
                .restart(bootID: "boot-2"),
                .start([link("eth0", 2, t(50, 60, 1, 1))], at: at(20))],
        totals: ["eth0": t(350, 260, 1, 1)], events: [.firstSight, .reboot, .epochStarted]),
    RuleCase(
        rule: .recreated, what: "re-created while running: old epoch closes at its last values, new counts from zero",
        steps: [.start([link("tun0", 4, t(0, 0))], at: at(0)),
                .sample([reading(4, t(100, 200))], at: at(30)),
                .event(.newOrChanged(link("tun0", 9, t(40, 50))), at: at(40)),
                .sample([reading(4, t(999, 999)), reading(9, t(45, 55))], at: at(60))],
        totals: ["tun0": t(145, 255)], events: [.firstSight, .vanished, .recreated]),
    RuleCase(
        rule: .recreated, what: "re-created while the daemon was down, same boot",
        steps: [.start([link("tun0", 4, t(0, 0))], at: at(0)),
                .sample([reading(4, t(100, 200))], at: at(30)),
                .restart(bootID: nil),
                .start([link("tun0", 12, t(7, 8))], at: at(90))],
        totals: ["tun0": t(107, 208)], events: [.firstSight, .recreated, .vanished]),
    RuleCase(
        rule: .recreated, what: "an ifindex missing from a resync dump closes at its last values",
        steps: [.start([link("a", 2, t(0, 0)), link("b", 3, t(0, 0))], at: at(0)),
                .sample([reading(2, t(10, 10)), reading(3, t(20, 20))], at: at(30)),
                .resync([link("b", 3, t(25, 25))], at: at(40))],
        totals: ["a": t(10, 10), "b": t(25, 25)], events: [.firstSight, .firstSight, .vanished]),
    RuleCase(
        rule: .deleted, what: "deleted: bytes between the last poll and the deletion are counted",
        steps: [.start([link("tun0", 4, t(0, 0))], at: at(0)),
                .sample([reading(4, t(100, 200, 1, 2))], at: at(30)),
                .event(.deleted(link("tun0", 4, t(180, 260, 3, 4))), at: at(40))],
        totals: ["tun0": t(180, 260, 3, 4)], events: [.firstSight, .deleted]),
    RuleCase(
        rule: .deleted, what: "deleted veth reporting rx 0: final is the larger of poll and message, per counter",
        steps: [.start([link("va", 4, t(0, 0), kind: "veth")], at: at(0)),
                .sample([reading(4, t(500, 200, 5, 2))], at: at(30)),
                .event(.deleted(link("va", 4, t(0, 260, 0, 3), kind: "veth")), at: at(40))],
        totals: ["va": t(500, 260, 5, 3)], events: [.firstSight, .deleted]),
    RuleCase(
        rule: .backwards, what: "counters went backwards with the same ifindex: new epoch, delta = current",
        steps: [.start([link("eth0", 2, t(0, 0))], at: at(0)),
                .sample([reading(2, t(5000, 6000, 50, 60))], at: at(30)),
                .sample([reading(2, t(300, 100, 3, 1))], at: at(60)),
                .sample([reading(2, t(400, 150, 4, 2))], at: at(90))],
        totals: ["eth0": t(5400, 6150, 54, 62)], events: [.firstSight, .reset]),
    RuleCase(
        rule: .backwards, what: "a veth whose peer is gone reads rx 0 until deleted: rx held, not a reset",
        steps: [.start([link("va", 4, t(0, 0), kind: "veth", parent: 5)], at: at(0)),
                .sample([reading(4, t(500, 200, 5, 2))], at: at(30)),
                .event(.newOrChanged(link("va", 4, t(0, 230, 0, 3), kind: "veth")), at: at(31)),
                .event(.deleted(link("va", 4, t(0, 240, 0, 4), kind: "veth")), at: at(31))],
        totals: ["va": t(500, 240, 5, 4)], events: [.firstSight, .deleted]),
    RuleCase(
        rule: .backwards, what: "a veth that still has its peer and goes backwards in a full dump is reset",
        steps: [.start([link("va", 4, t(0, 0), kind: "veth", parent: 5)], at: at(0)),
                .sample([reading(4, t(500, 200, 5, 2))], at: at(30)),
                .resync([link("va", 4, t(10, 230, 1, 3), kind: "veth", parent: 5)], at: at(31))],
        totals: ["va": t(510, 430, 6, 5)], events: [.firstSight, .reset]),
    RuleCase(
        rule: .backwards, what: "a link event older than the sample applied before it (queued between the sample's event read and its dump) is no reset",
        steps: [.start([link("tun0", 4, t(0, 0), kind: "tun")], at: at(0)),
                .sample([reading(4, t(4280, 768, 10, 6))], at: at(30)),
                .event(.newOrChanged(link("tun0", 4, t(4280, 640, 10, 5), kind: "tun")), at: at(30)),
                .sample([reading(4, t(4280, 768, 10, 6))], at: at(60))],
        totals: ["tun0": t(4280, 768, 10, 6)], events: [.firstSight]),
    RuleCase(
        rule: .backwards, what: "a reset a link event shows first is counted once, at the next sample",
        steps: [.start([link("eth0", 2, t(0, 0))], at: at(0)),
                .sample([reading(2, t(5000, 6000, 50, 60))], at: at(30)),
                .event(.newOrChanged(link("eth0", 2, t(100, 50, 1, 1))), at: at(40)),
                .sample([reading(2, t(300, 100, 3, 1))], at: at(60))],
        totals: ["eth0": t(5300, 6100, 53, 61)], events: [.firstSight, .reset]),
    RuleCase(
        rule: .backwards, what: "a link event's metadata is taken even when its counters are older",
        steps: [.start([link("eth0", 2, t(0, 0))], at: at(0)),
                .sample([reading(2, t(5000, 6000, 50, 60))], at: at(30)),
                .event(.newOrChanged(link("wan0", 2, t(4000, 6000, 40, 60))), at: at(31)),
                .sample([reading(2, t(5100, 6000, 51, 60))], at: at(60))],
        totals: ["eth0": t(5000, 6000, 50, 60), "wan0": t(100, 0, 1, 0)], events: [.firstSight, .rename]),
    RuleCase(
        rule: .wrap, what: "32-bit wrap on the getifaddrs source: (2^32 - previous) + current, exactly",
        steps: [.start([link("eth0", 2, t(4_294_967_000, 10), is32Bit: true)], at: at(0)),
                .sample([reading(2, t(500, 20))], at: at(30))],
        totals: ["eth0": t(796, 10)], events: [.firstSight, .wrap]),
    RuleCase(
        rule: .wrap, what: "a 32-bit decrease too large to be a wrap is a reset",
        steps: [.start([link("eth0", 2, t(1_000_000, 10), is32Bit: true)], at: at(0)),
                .sample([reading(2, t(500, 20))], at: at(30))],
        totals: ["eth0": t(500, 20)], events: [.firstSight, .reset]),
    RuleCase(
        rule: .wrap, what: "a wrap beyond the link's speed is a reset, not 4 GiB invented",
        steps: [.start([link("eth0", 2, t(4_000_000_000, 10), is32Bit: true, speed: 10_000_000)], at: at(0)),
                .sample([reading(2, t(200_000_000, 20))], at: at(30))],
        totals: ["eth0": t(0, 20)], events: [.firstSight, .reset, .implausible]),
    RuleCase(
        rule: .wrap, what: "no wrap arithmetic on 64-bit counters",
        steps: [.start([link("eth0", 2, t(4_294_967_000, 10))], at: at(0)),
                .sample([reading(2, t(500, 20))], at: at(30))],
        totals: ["eth0": t(500, 20)], events: [.firstSight, .reset]),
    RuleCase(
        rule: .implausible, what: "implausible delta (beyond speed x elapsed x margin) is left out, counting goes on",
        steps: [.start([link("eth0", 2, t(0, 0), speed: 1_000_000)], at: at(0)),
                .sample([reading(2, t(10_000_000, 1000, 9000, 10))], at: at(30)),
                .sample([reading(2, t(10_000_500, 1200, 9001, 12))], at: at(60))],
        totals: ["eth0": t(500, 1200, 1, 12)], events: [.firstSight, .implausible]),
    RuleCase(
        rule: .implausible, what: "tun devices report a fake 10 Mbit/s: their speed caps nothing",
        steps: [.start([link("tun0", 4, t(0, 0), kind: "tun", speed: 10_000_000)], at: at(0)),
                .sample([reading(4, t(900_000_000, 5))], at: at(30))],
        totals: ["tun0": t(900_000_000, 5)], events: [.firstSight]),
    RuleCase(
        rule: .implausible, what: "a configured maximum applies to every interface, tun included",
        configuration: { var c = MeterConfiguration(); c.maxBytesPerSecond = 1_000_000; return c }(),
        steps: [.start([link("tun0", 4, t(0, 0), kind: "tun")], at: at(0)),
                .sample([reading(4, t(29_000_000, 5))], at: at(30)),
                .sample([reading(4, t(90_000_000, 10))], at: at(60))],
        totals: ["tun0": t(29_000_000, 10)], events: [.firstSight, .implausible]),
    RuleCase(
        rule: .implausible, what: "counters of a new epoch cover an unknown time: no cap judges them",
        configuration: { var c = MeterConfiguration(); c.maxBytesPerSecond = 1000; return c }(),
        knownNames: ["eth0": S.wallOrigin - 86_400],
        steps: [.start([link("eth0", 2, t(0, 0), speed: 8000)], at: at(0)),
                .event(.newOrChanged(link("usb0", 5, t(90_000_000, 4), speed: 8000)), at: at(1)),
                .restart(bootID: "boot-2"),
                .start([link("eth0", 3, t(80_000_000, 2), speed: 8000)], at: at(5))],
        totals: ["eth0": t(80_000_000, 2), "usb0": t(90_000_000, 4)],
        events: [.epochStarted, .appeared, .reboot, .epochStarted]),
    RuleCase(
        rule: .resume, what: "daemon was down (same boot, same ifindex): counted from the saved values",
        steps: [.start([link("eth0", 2, t(100, 100))], at: at(0)),
                .sample([reading(2, t(200, 150))], at: at(30)),
                .restart(bootID: nil),
                .start([link("eth0", 2, t(9200, 4150, 90, 40))], at: at(7200)),
                .sample([reading(2, t(9300, 4150, 91, 40))], at: at(7230))],
        totals: ["eth0": t(9200, 4050, 91, 40)], events: [.firstSight, .gap]),
    RuleCase(
        rule: .resume, what: "a reset while the daemon was down is a reset, not a gap delta",
        steps: [.start([link("eth0", 2, t(100, 100))], at: at(0)),
                .sample([reading(2, t(5000, 5000))], at: at(30)),
                .restart(bootID: nil),
                .start([link("eth0", 2, t(70, 80))], at: at(600))],
        totals: ["eth0": t(4970, 4980)], events: [.firstSight, .gap, .reset]),
    RuleCase(
        rule: .rename, what: "rename: bytes up to the rename message stay with the old name",
        steps: [.start([link("eth0", 2, t(0, 0))], at: at(0)),
                .sample([reading(2, t(100, 100))], at: at(30)),
                .event(.newOrChanged(link("lan0", 2, t(150, 170))), at: at(40)),
                .sample([reading(2, t(400, 470))], at: at(60))],
        totals: ["eth0": t(150, 170), "lan0": t(250, 300)], events: [.firstSight, .rename]),
    RuleCase(
        rule: .rename, what: "renamed while the daemon was down: the gap goes to the old name",
        steps: [.start([link("eth0", 2, t(0, 0))], at: at(0)),
                .restart(bootID: nil),
                .start([link("lan0", 2, t(80, 90))], at: at(300)),
                .sample([reading(2, t(100, 100))], at: at(330))],
        totals: ["eth0": t(80, 90), "lan0": t(20, 10)], events: [.firstSight, .gap, .rename]),
    RuleCase(
        rule: .clockJump, what: "a wall-clock jump is an event; boot time still measures elapsed",
        steps: [.start([link("eth0", 2, t(0, 0), speed: 1_000_000)], at: at(0)),
                .sample([reading(2, t(3_000_000, 0))], at: at(30, wallOffset: 3600))],
        totals: ["eth0": t(3_000_000, 0)], events: [.firstSight, .clockJump]),
]

@Suite("Meter rules (docs/METER.md)", .ownThread, .timeLimit(.minutes(3)))
struct MeterRuleTests {
    @Test("every rule has rows, and a rule that produces events produces one of its own in some row")
    func everyRuleHasRows() {
        for rule in MeterRule.allCases {
            let rows = ruleCases.filter { $0.rule == rule }
            #expect(!rows.isEmpty, "rule \(rule.rawValue) (\(rule)) has no row in the rule table")
            guard !rule.events.isEmpty else { continue }
            #expect(rows.contains { !rule.events.isDisjoint(with: $0.events) },
                    "no row of rule \(rule.rawValue) (\(rule)) produces \(rule.events.map(\.rawValue).sorted())")
        }
    }

    @Test("each rule: exact totals and events", arguments: ruleCases)
    func rule(_ row: RuleCase) {
        var run = ScenarioRun(configuration: row.configuration, knownNames: row.knownNames)
        run.run(row.steps)
        #expect(run.totals.filter { !$0.value.isZero } == row.totals)
        #expect(run.events.map(\.kind) == row.events)
    }

    @Test("a gap delta is attributed to the resume time and flagged")
    func gapAttribution() {
        var run = ScenarioRun()
        run.run([.start([link("eth0", 2, t(100, 100))], at: at(0)),
                 .restart(bootID: nil),
                 .start([link("eth0", 2, t(600, 100))], at: at(3600))])
        let delta = try? #require(run.deltas.last)
        #expect(delta?.at == S.wallOrigin + 3600)
        #expect(delta?.flags == .gap)
        let gap = run.events.first { $0.kind == .gap }
        #expect(gap?.delta == t(500, 0))
        #expect(gap?.detail.contains("3600 s") == true)
    }

    @Test("a reset starts a new epoch generation; a rename keeps the epoch")
    func epochIdentity() {
        var run = ScenarioRun()
        run.run([.start([link("eth0", 2, t(100, 100))], at: at(0)),
                 .sample([reading(2, t(50, 50))], at: at(30)),
                 .event(.newOrChanged(link("lan0", 2, t(60, 60))), at: at(40))])
        #expect(run.deltas.map(\.epoch.generation) == [1, 1])
        #expect(run.deltas.map(\.epoch.since) == [S.wallOrigin + 30, S.wallOrigin + 30])
        #expect(run.meter.tracked[LinkKey(ifindex: 2)]?.epoch == Epoch(bootID: "boot-1", ifindex: 2, generation: 1,
                                                      since: S.wallOrigin + 30))
    }

    @Test("the implausible event carries the raw values; nothing is silently dropped")
    func implausibleEvent() throws {
        var run = ScenarioRun()
        run.run([.start([link("eth0", 2, t(7, 0), speed: 1_000_000)], at: at(0)),
                 .sample([reading(2, t(10_000_007, 0))], at: at(30))])
        let event = try #require(run.events.last)
        #expect(event.kind == .implausible)
        #expect(event.previous == t(7, 0) && event.current == t(10_000_007, 0))
        #expect(event.delta == t(10_000_000, 0))
        #expect(run.deltas.last?.flags == .implausibleDropped)
        #expect(run.deltas.last?.traffic == .zero)
        #expect(run.events.last?.detail.contains("left out of the totals") == true)
    }

    @Test("samples and events before the first dump are ignored; unknown ifindexes are skipped")
    func beforeStart() {
        var meter = Meter(bootID: "b")
        #expect(meter.apply(sample: [reading(2, t(5, 5))], at: at(0)) == MeterOutput())
        #expect(meter.apply(.deleted(link("x", 2, t(1, 1))), at: at(0)) == MeterOutput())
        #expect(meter.phase == .awaitingStart)
        _ = meter.start(links: [link("eth0", 2, t(0, 0))], at: at(1))
        #expect(meter.phase == .running)
        #expect(meter.apply(sample: [reading(99, t(5, 5))], at: at(2)).deltas.isEmpty)
    }

    @Test("a meter built from an exported state exports the same state and counts on from it")
    func stateRoundTrip() throws {
        var run = ScenarioRun()
        run.run([.start([link("eth0", 2, t(100, 100), is32Bit: true, speed: 1000)], at: at(0)),
                 .sample([reading(2, t(200, 150))], at: at(30))])
        let state = run.meter.exportState()
        var resumed = Meter(bootID: state.bootID, configuration: run.meter.configuration, restoring: state)
        _ = resumed.start(links: [link("eth0", 2, t(200, 150), is32Bit: true, speed: 1000)], at: at(31))
        #expect(resumed.exportState().interfaces == state.interfaces.map { var moved = $0; moved.lastInstant = at(31); return moved })
        let next = resumed.apply(sample: [reading(2, t(260, 170))], at: at(60))
        #expect(next.deltas.map(\.traffic) == [t(60, 20)])
    }
}

@Suite("Counter steps", .ownThread, .timeLimit(.minutes(3)))
struct CounterStepTests {
    @Test("wrap arithmetic is exact at the boundary", arguments: [
        (UInt64(4_294_967_295), UInt64(0), UInt64(1)),
        (UInt64(4_294_967_295), UInt64(4_294_967_294), nil),
        (UInt64(4_294_967_000), UInt64(296), UInt64(592)),
        (UInt64(1 << 31) + 1, UInt64(0), UInt64((1 << 31) - 1)),
    ])
    func wraps(previous: UInt64, current: UInt64, expected: UInt64?) {
        let step = CounterStep(from: t(previous, 0), to: t(current, 0), is32Bit: true,
                               wrapLimit: CounterStep.wrapModulus / 2)
        if let expected {
            #expect(step == .wrapped(t(expected, 0), wrapped: ["rx_bytes"]))
        } else {
            #expect(step == .reset(t(current, 0)))
        }
    }
}

@Suite("Rates", .ownThread, .timeLimit(.minutes(3)))
struct RateTests {
    @Test("bytes per second over the last interval, and a time-weighted moving average")
    func rates() throws {
        var configuration = MeterConfiguration()
        configuration.rateSmoothingSeconds = 30
        var run = ScenarioRun(configuration: configuration)
        run.run([.start([link("eth0", 2, t(0, 0))], at: at(0)),
                 .sample([reading(2, t(1000, 500))], at: at(10))])
        var rate = try #require(run.meter.rates[LinkKey(ifindex: 2)])
        #expect(rate.isMeasured)
        #expect(rate.rxBytesPerSecond == 100 && rate.txBytesPerSecond == 50)
        #expect(rate.smoothedRxBytesPerSecond == 100)

        run.run([.sample([reading(2, t(4000, 500))], at: at(20))])
        rate = try #require(run.meter.rates[LinkKey(ifindex: 2)])
        #expect(rate.rxBytesPerSecond == 300 && rate.txBytesPerSecond == 0)
        let weight = 1 - exp(-10.0 / 30)
        #expect(abs(rate.smoothedRxBytesPerSecond - (100 + weight * 200)) < 1e-9)
        #expect(abs(rate.smoothedTxBytesPerSecond - (50 - weight * 50)) < 1e-9)

        // An event right after a sample does not close a 0.1 s interval; its bytes join the next.
        run.run([.event(.newOrChanged(link("eth0", 2, t(4100, 500))), at: at(20.1)),
                 .sample([reading(2, t(4900, 500))], at: at(30))])
        rate = try #require(run.meter.rates[LinkKey(ifindex: 2)])
        #expect(rate.rxBytesPerSecond == 90)
    }
}
