import IfMeterApps
import IfMeterCore
import IfMeterTestSupport
import Testing

@Suite("Application meter", .ownThread, .timeLimit(.minutes(3)))
struct AppMeterTests {
    let web = AppCounterKey(cgroupID: 4242, ifindex: 2)
    let shell = AppCounterKey(cgroupID: 77, ifindex: 2)

    func traffic(_ rx: UInt64, _ tx: UInt64) -> Traffic {
        Traffic(rxBytes: rx, txBytes: tx, rxPackets: rx / 100, txPackets: tx / 100)
    }

    @Test("the first read of a daemon that never read a map is the baseline, as an interface's first sight; a new entry after it counts in full")
    func firstRead() {
        var meter = AppMeter(bootID: "b")
        #expect(meter.apply(AppCounts(mapID: 9, counters: [web: traffic(1000, 300)], lost: traffic(5, 0)), bootID: "b").isEmpty)
        #expect(meter.last[web] == traffic(1000, 300))
        let deltas = meter.apply(AppCounts(mapID: 9, counters: [web: traffic(1000, 300), shell: traffic(70, 0)]), bootID: "b")
        #expect(deltas == [AppCounterDelta(key: shell, traffic: traffic(70, 0))])
    }

    @Test("later reads of the same map count the difference, and nothing for an entry that did not move")
    func difference() {
        var meter = AppMeter(bootID: "b")
        _ = meter.apply(AppCounts(mapID: 9, counters: [web: traffic(1000, 300), shell: traffic(100, 100)]), bootID: "b")
        let deltas = meter.apply(AppCounts(mapID: 9, counters: [web: traffic(1500, 700), shell: traffic(100, 100)]),
                                 bootID: "b")
        #expect(deltas == [AppCounterDelta(key: web, traffic: traffic(500, 400))])
    }

    @Test("a restart from saved counters of the same map loses nothing the map counted meanwhile")
    func restart() {
        var before = AppMeter(bootID: "b")
        _ = before.apply(AppCounts(mapID: 9, counters: [web: traffic(1000, 300)]), bootID: "b")
        let saved = before.saved
        var after = AppMeter(bootID: saved.bootID, mapID: saved.mapID, last: saved.last)
        let deltas = after.apply(AppCounts(mapID: 9, counters: [web: traffic(4000, 300)]), bootID: "b")
        #expect(deltas == [AppCounterDelta(key: web, traffic: traffic(3000, 0))])
    }

    @Test("a map made anew (a reboot, attached again) counts in full, as a gap when one was counted before")
    func newMap() {
        var meter = AppMeter(bootID: "b", mapID: 9, last: [web: traffic(9000, 9000)])
        let rebooted = meter.apply(AppCounts(mapID: 3, counters: [web: traffic(200, 100)]), bootID: "c")
        #expect(rebooted == [AppCounterDelta(key: web, traffic: traffic(200, 100), flags: .gap)])
        let reattached = meter.apply(AppCounts(mapID: 4, counters: [web: traffic(50, 0)]), bootID: "c")
        #expect(reattached == [AppCounterDelta(key: web, traffic: traffic(50, 0), flags: .gap)])
    }

    @Test("an entry below its last read was taken and made again: counted in full as a reset")
    func remade() {
        var meter = AppMeter(bootID: "b")
        _ = meter.apply(AppCounts(mapID: 9, counters: [web: traffic(1000, 300)]), bootID: "b")
        let deltas = meter.apply(AppCounts(mapID: 9, counters: [web: traffic(100, 0)]), bootID: "b")
        #expect(deltas == [AppCounterDelta(key: web, traffic: traffic(100, 0), flags: .reset)])
    }

    @Test("a final is counted and forgotten; one made again in the same interval counts from zero after it")
    func finals() {
        var meter = AppMeter(bootID: "b")
        _ = meter.apply(AppCounts(mapID: 9, counters: [web: traffic(1000, 300), shell: traffic(100, 0)]), bootID: "b")
        let deltas = meter.apply(AppCounts(mapID: 9, counters: [web: traffic(100, 0)],
                                           finals: [web: traffic(1200, 300), shell: traffic(300, 0)]), bootID: "b")
        #expect(Set(deltas) == [AppCounterDelta(key: web, traffic: traffic(200, 0)),
                                AppCounterDelta(key: shell, traffic: traffic(200, 0)),
                                AppCounterDelta(key: web, traffic: traffic(100, 0))])
        #expect(meter.last[shell] == nil)
        #expect(meter.last[web] == traffic(100, 0))
    }

    @Test("what no map had room for is counted under the lost key")
    func lost() {
        var meter = AppMeter(bootID: "b")
        _ = meter.apply(AppCounts(mapID: 9, counters: [:], lost: traffic(100, 0)), bootID: "b")
        let deltas = meter.apply(AppCounts(mapID: 9, counters: [:], lost: traffic(700, 0)), bootID: "b")
        #expect(deltas == [AppCounterDelta(key: .lost, traffic: traffic(600, 0))])
    }
}
