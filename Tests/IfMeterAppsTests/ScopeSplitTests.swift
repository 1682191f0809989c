import IfMeterApps
import IfMeterCore
import IfMeterTestSupport
import Testing

@Suite("An interface's split by scope", .ownThread, .timeLimit(.minutes(3)))
struct ScopeSplitTests {
    let eth = AppLink(ifindex: 2, name: "eth0", headerLength: 14)
    let wlan = AppLink(ifindex: 3, name: "wlan0", headerLength: 14)

    func link(_ ifindex: Int32) -> AppLink? { [eth, wlan].first { $0.ifindex == ifindex } }

    func own(_ ifindex: Int32, _ traffic: Traffic, flags: MeterDelta.Flags = []) -> MeterDelta {
        MeterDelta(name: link(ifindex)?.name ?? "x", ifindex: ifindex, epoch: Epoch(bootID: "b", ifindex: ifindex, since: 0),
                   traffic: traffic, at: 100, flags: flags)
    }

    func key(_ ifindex: Int32, _ scope: TrafficScope) -> ScopeCounterKey { ScopeCounterKey(ifindex: ifindex, scope: scope) }

    func bytes(_ rx: UInt64, _ tx: UInt64 = 0) -> Traffic { Traffic(rxBytes: rx, txBytes: tx, rxPackets: rx / 100, txPackets: tx / 100) }

    func run(_ split: inout ScopeSplit, _ counts: ScopeCounts?, _ links: [MeterDelta], boot: String = "b") -> [String: MeterDelta] {
        let out = split.split(counts, linkDeltas: links, link: link, bootID: boot, at: 100)
        return Dictionary(uniqueKeysWithValues: out.map { ($0.name, $0) })
    }

    /// A split that has read `counts` once (its baseline).
    func baselined(_ counts: ScopeCounts) -> ScopeSplit {
        var split = ScopeSplit(bootID: "b")
        _ = run(&split, counts, [])
        return split
    }

    @Test("a link covered at both reads is divided in the program's proportions, to the byte")
    func proportional() {
        var split = baselined(ScopeCounts(mapID: 7, counters: [key(2, .local): .zero, key(2, .internet): .zero]))
        let read = ScopeCounts(mapID: 7, counters: [key(2, .local): bytes(1000, 300), key(2, .internet): bytes(3000, 100)])
        let out = run(&split, read, [own(2, bytes(4100, 410))])
        #expect(out["scope:local/eth0"]?.traffic.rxBytes == 1025)
        #expect(out["scope:internet/eth0"]?.traffic.rxBytes == 3075)
        #expect(out["scope:local/eth0"]?.traffic.txBytes == 308)
        #expect(out["scope:internet/eth0"]?.traffic.txBytes == 102)
        #expect(out["scope:unknown/eth0"] == nil, "a zero subject is not emitted")
        #expect(out.values.allSatisfy { $0.ifindex == 2 && $0.epoch.ifindex == 2 && $0.flags.isEmpty })
    }

    @Test("local, internet and unknown meet the link's delta exactly, for any counts")
    func sumsMeet() {
        let seed = TestSeed("ScopeSplitTests.sumsMeet")
        var random = seed.generator
        var split = ScopeSplit(bootID: "b")
        var map: [ScopeCounterKey: Traffic] = [:]
        var mapID: UInt32 = 1
        func any(_ limit: UInt64) -> Traffic {
            Traffic(rxBytes: .random(in: 0...limit, using: &random), txBytes: .random(in: 0...limit, using: &random),
                    rxPackets: .random(in: 0...limit / 64, using: &random), txPackets: .random(in: 0...limit / 64, using: &random))
        }
        for round in 0..<2000 {
            // The map may be replaced, a link attached, an entry counted or made again.
            if UInt8.random(in: 0..<50, using: &random) == 0 { (map, mapID) = ([:], mapID + 1) }
            for ifindex: Int32 in [2, 3] where Bool.random(using: &random) {
                if map[key(ifindex, .local)] == nil, Bool.random(using: &random) {
                    (map[key(ifindex, .local)], map[key(ifindex, .internet)]) = (.zero, .zero)
                }
                for scope in TrafficScope.allCases where map[key(ifindex, scope)] != nil || scope == .unknown {
                    map[key(ifindex, scope), default: .zero] += any(UInt64.random(in: 0...1 << 40, using: &random))
                }
            }
            let limit = round % 7 == 0 ? UInt64.max / 4 : 1 << 30
            let links = [own(2, any(limit), flags: round % 11 == 0 ? .reset : []), own(3, any(limit))]
            let read: ScopeCounts? = round % 13 == 5 ? nil : ScopeCounts(mapID: mapID, counters: map)
            let out = split.split(read, linkDeltas: links, link: link, bootID: "b", at: Double(round))
            for delta in links {
                let parts = out.filter { $0.ifindex == delta.ifindex }
                #expect(parts.reduce(Traffic.zero) { $0 + $1.traffic } == delta.traffic, "\(seed), round \(round)")
                #expect(parts.allSatisfy { !$0.traffic.isZero && $0.flags.isSuperset(of: delta.flags) }, "\(seed)")
            }
        }
    }

    @Test("the map's first read is a baseline: the link's delta then is unknown")
    func baseline() {
        var split = ScopeSplit(bootID: "b")
        let read = ScopeCounts(mapID: 7, counters: [key(2, .local): bytes(1 << 30), key(2, .internet): bytes(1 << 31)])
        let out = run(&split, read, [own(2, bytes(500))])
        #expect(out.keys.sorted() == ["scope:unknown/eth0"])
        #expect(out["scope:unknown/eth0"]?.traffic == bytes(500))
        #expect(split.mapID == 7 && split.last == read.counters)
    }

    @Test("attached during the interval: the program's counts, capped at the link's, and the rest unknown")
    func attachedMidInterval() {
        var split = baselined(ScopeCounts(mapID: 7, counters: [:]))
        let attached = ScopeCounts(mapID: 7, counters: [key(2, .local): bytes(300), key(2, .internet): bytes(900)])
        let out = run(&split, attached, [own(2, bytes(1000))])
        #expect(out["scope:local/eth0"]?.traffic == bytes(300))
        #expect(out["scope:internet/eth0"]?.traffic == bytes(700), "capped at what the link has left")
        #expect(out["scope:unknown/eth0"] == nil)
        let uncapped = run(&split, ScopeCounts(mapID: 7, counters: [key(2, .local): bytes(400), key(2, .internet): bytes(1200)]),
                             [own(2, bytes(800))])
        #expect(uncapped["scope:local/eth0"]?.traffic == bytes(200), "covered at both reads: in proportion")
        #expect(uncapped["scope:internet/eth0"]?.traffic == bytes(600))
    }

    @Test("a link not covered, and one the program counted nothing on, are unknown")
    func notCovered() {
        var split = baselined(ScopeCounts(mapID: 7, counters: [key(2, .local): .zero, key(2, .internet): .zero]))
        let out = run(&split, ScopeCounts(mapID: 7, counters: [key(2, .local): .zero, key(2, .internet): .zero]),
                        [own(2, bytes(600)), own(3, bytes(700))])
        #expect(out["scope:unknown/eth0"]?.traffic == bytes(600))
        #expect(out["scope:unknown/wlan0"]?.traffic == bytes(700))
        #expect(out.count == 2)
    }

    @Test("a map made anew counts from zero as a gap, capped; the next read divides again")
    func mapReplaced() {
        var split = baselined(ScopeCounts(mapID: 7, counters: [key(2, .local): bytes(5000), key(2, .internet): bytes(5000)]))
        let out = run(&split, ScopeCounts(mapID: 8, counters: [key(2, .local): bytes(100), key(2, .internet): bytes(200)]),
                        [own(2, bytes(1000))])
        #expect(out["scope:local/eth0"]?.traffic == bytes(100))
        #expect(out["scope:internet/eth0"]?.traffic == bytes(200))
        #expect(out["scope:unknown/eth0"]?.traffic == bytes(700))
        #expect(out.values.allSatisfy { $0.flags.contains(.gap) })
        let next = run(&split, ScopeCounts(mapID: 8, counters: [key(2, .local): bytes(200), key(2, .internet): bytes(500)]),
                         [own(2, bytes(800))])
        #expect(next["scope:local/eth0"]?.traffic == bytes(200))
        #expect(next["scope:internet/eth0"]?.traffic == bytes(600))
        #expect(next.values.allSatisfy { $0.flags.isEmpty })
    }

    @Test("a reboot with the same map id is another map")
    func otherBoot() {
        var split = baselined(ScopeCounts(mapID: 7, counters: [key(2, .local): bytes(5000), key(2, .internet): .zero]))
        let out = run(&split, ScopeCounts(mapID: 7, counters: [key(2, .local): bytes(100), key(2, .internet): .zero]),
                        [own(2, bytes(1000))], boot: "c")
        #expect(out["scope:local/eth0"]?.traffic == bytes(100))
        #expect(out["scope:unknown/eth0"]?.traffic == bytes(900))
        #expect(out.values.allSatisfy { $0.flags.contains(.gap) })
    }

    @Test("an entry lower than last read counts in full as a reset; the link's flags are carried")
    func resetsAndFlags() {
        var split = baselined(ScopeCounts(mapID: 7, counters: [key(2, .local): bytes(5000), key(2, .internet): bytes(100)]))
        let out = run(&split, ScopeCounts(mapID: 7, counters: [key(2, .local): bytes(300), key(2, .internet): bytes(200)]),
                        [own(2, bytes(1000), flags: .final)])
        #expect(out["scope:local/eth0"]?.traffic == bytes(300))
        #expect(out["scope:internet/eth0"]?.traffic == bytes(100))
        #expect(out["scope:unknown/eth0"]?.traffic == bytes(600))
        #expect(out.values.allSatisfy { $0.flags == [.reset, .final] })
    }

    @Test("a sample without a read is unknown, and the read after it is capped: its deltas span more")
    func missedRead() {
        var split = baselined(ScopeCounts(mapID: 7, counters: [key(2, .local): .zero, key(2, .internet): .zero]))
        let missed = run(&split, nil, [own(2, bytes(400))])
        #expect(missed.keys.sorted() == ["scope:unknown/eth0"])
        #expect(!split.continuous)
        let after = run(&split, ScopeCounts(mapID: 7, counters: [key(2, .local): bytes(300), key(2, .internet): bytes(500)]),
                          [own(2, bytes(600))])
        #expect(after["scope:local/eth0"]?.traffic == bytes(300))
        #expect(after["scope:internet/eth0"]?.traffic == bytes(300))
        #expect(split.continuous)
    }

    @Test("links not counted (gone unnamed, loopback, ignored, another namespace) are not split")
    func uncounted() {
        var split = baselined(ScopeCounts(mapID: 7, counters: [key(9, .local): .zero, key(9, .internet): .zero]))
        var other = own(2, bytes(100))
        other.namespace = NamespaceID(rawValue: 4)
        let out = run(&split, ScopeCounts(mapID: 7, counters: [key(9, .local): bytes(100), key(9, .internet): .zero]),
                        [own(9, bytes(100)), other])
        #expect(out.isEmpty)
    }

    @Test("a saved split resumes: the read after a restart divides what the links counted meanwhile")
    func resumes() {
        let before = baselined(ScopeCounts(mapID: 7, counters: [key(2, .local): bytes(100), key(2, .internet): bytes(100)]))
        let saved = before.saved
        var split = ScopeSplit(bootID: saved.bootID, mapID: saved.mapID, last: saved.last)
        #expect(split == before)
        let out = run(&split, ScopeCounts(mapID: 7, counters: [key(2, .local): bytes(200), key(2, .internet): bytes(400)]),
                        [own(2, bytes(4000))])
        #expect(out["scope:local/eth0"]?.traffic == bytes(1000))
        #expect(out["scope:internet/eth0"]?.traffic == bytes(3000))
    }

    @Test("largest remainder: the parts add up, ties go to the earlier, no overflow")
    func apportion() {
        #expect(ScopeSplit.apportion(10, by: [1, 1, 1]) == [4, 3, 3])
        #expect(ScopeSplit.apportion(2, by: [1, 1, 1]) == [1, 1, 0])
        #expect(ScopeSplit.apportion(7, by: [0, 0, 0]) == [0, 0, 7])
        #expect(ScopeSplit.apportion(.max, by: [.max, .max, 1]).reduce(0, &+) == .max)
        #expect(ScopeSplit.apportion(100, by: [0, 3, 0]) == [0, 100, 0])
    }
}
