import IfMeterCore
import Testing

@Suite("Labelled estimates")
struct EstimateTests {
    /// eth0 resets at 60 s; wg0 is a tunnel; lo is loopback; a gap on wlan0 at 30 s.
    func scenario() -> ScenarioRun {
        var run = ScenarioRun()
        run.run([
            .start([Scenario.link("eth0", 2, Scenario.traffic(0, 0)),
                    Scenario.link("wg0", 3, Scenario.traffic(0, 0)),
                    Scenario.link("lo", 1, Scenario.traffic(0, 0)),
                    Scenario.link("wlan0", 4, Scenario.traffic(0, 0))], at: Scenario.at(0)),
            .restart(bootID: nil),
            .start([Scenario.link("eth0", 2, Scenario.traffic(100, 10)),
                    Scenario.link("wg0", 3, Scenario.traffic(80, 8)),
                    Scenario.link("lo", 1, Scenario.traffic(5, 5)),
                    Scenario.link("wlan0", 4, Scenario.traffic(1000, 100))], at: Scenario.at(30)),
            .sample([Scenario.reading(2, Scenario.traffic(40, 4))], at: Scenario.at(60)),
            .sample([Scenario.reading(2, Scenario.traffic(90, 9)),
                     Scenario.reading(3, Scenario.traffic(200, 20))], at: Scenario.at(120)),
        ])
        return run
    }

    func estimate(_ run: ScenarioRun, _ name: String, _ interfaceClass: InterfaceClass,
                  from start: Double, to end: Double) -> Estimate {
        Estimate(interface: name, interfaceClass: interfaceClass, start: Scenario.wallOrigin + start,
                 end: Scenario.wallOrigin + end, deltas: run.deltas, events: run.events,
                 since: run.meter.firstSeen[name])
    }

    @Test("one interface: window-exact traffic, continuity and labels")
    func interface() {
        let run = scenario()
        let eth0 = estimate(run, "eth0", .ethernet, from: 0, to: 200)
        #expect(eth0.traffic == Scenario.traffic(100 + 40 + 50, 10 + 4 + 5))
        #expect(eth0.continuity == Continuity(since: Scenario.wallOrigin, resets: 1, gaps: 1))
        #expect(eth0.labels == [.estimate, .interfaceCounters, .notPerApp, .includesOverhead,
                                .resetInPeriod, .gapInPeriod])
        #expect(eth0.footnote.contains("counters restarted in this period"))

        let later = estimate(run, "eth0", .ethernet, from: 100, to: 200)
        #expect(later.traffic == Scenario.traffic(50, 5))
        #expect(later.continuity.resets == 0 && later.continuity.gaps == 0)
        #expect(later.labels == EstimateLabel.always)
        #expect(later.footnote == EstimateLabel.footnote)

        let tunnel = estimate(run, "wg0", .tunnel, from: 0, to: 200)
        #expect(tunnel.labels.contains(.tunnelDoubleCounted))
        #expect(tunnel.traffic == Scenario.traffic(200, 20))
    }

    @Test("a sum leaves out loopback, virtual and tunnel by default, and says so")
    func sum() {
        let run = scenario()
        let parts = [estimate(run, "eth0", .ethernet, from: 0, to: 200),
                     estimate(run, "wg0", .tunnel, from: 0, to: 200),
                     estimate(run, "lo", .loopback, from: 0, to: 200),
                     estimate(run, "wlan0", .wifi, from: 0, to: 200)]
        let total = Estimate(summing: parts, start: 0, end: 200)
        #expect(total.traffic == Scenario.traffic(190 + 1000, 19 + 100))
        #expect(total.labels.contains(.excludesLoopbackVirtualTunnel))
        #expect(!total.labels.contains(.tunnelDoubleCounted))
        #expect(total.continuity.gaps == 2 && total.continuity.resets == 1)
        #expect(total.footnote.contains("sum excludes loopback, virtual and tunnel interfaces"))

        let everything = Estimate(summing: parts, classes: Set(InterfaceClass.allCases), start: 0, end: 200)
        #expect(everything.traffic == Scenario.traffic(190 + 1000 + 200 + 5, 19 + 100 + 20 + 5))
        #expect(everything.labels.contains(.tunnelDoubleCounted))
        #expect(!everything.labels.contains(.excludesLoopbackVirtualTunnel))
    }

    @Test("a reboot marks every interface's window as reset")
    func rebootMarksAll() {
        var run = ScenarioRun()
        run.run([.start([Scenario.link("eth0", 2, Scenario.traffic(0, 0))], at: Scenario.at(0)),
                 .restart(bootID: "boot-2"),
                 .start([Scenario.link("eth0", 5, Scenario.traffic(10, 10))], at: Scenario.at(50))])
        let eth0 = estimate(run, "eth0", .ethernet, from: 0, to: 100)
        #expect(eth0.continuity.resets == 2)  // the reboot, and the new epoch it started
        #expect(eth0.labels.contains(.resetInPeriod))
    }
}
