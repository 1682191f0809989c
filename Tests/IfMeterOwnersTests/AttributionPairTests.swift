import IfMeterCore
import IfMeterOwners
import IfMeterTestSupport
import Testing

/// Veth pairs made in the daemon's namespace, one end then moved into a container (Docker, LXC),
/// and a container's end brought home as it stops.
extension AttributionTests {
    static func pairEnd(_ ifindex: Int32, _ name: String, peer: Int32?, nsid: Int32? = nil, rx: UInt64 = 0, tx: UInt64 = 0) -> Link {
        Link(ifindex: ifindex, name: name, kind: "veth", arpType: 1, flags: [.up], operState: .up,
             parent: peer, peerNamespaceID: nsid, counters: LinkCounters(rxBytes: rx, txBytes: tx))
    }

    @Test("Docker's pair: both ends made here wait; the end moved away is never a name, the one that stays is its owner's from its first byte")
    func pairMadeHere() {
        var attribution = Attribution(scope: .all, grace: .seconds(10))
        // The first end is announced before its peer exists (no IFLA_LINK yet).
        let first = attribution.apply([.event(.newOrChanged(Self.pairEnd(50, "vethB", peer: nil))),
                                       .event(.newOrChanged(Self.pairEnd(51, "vethA", peer: 50)))], at: 100)
        #expect(first.isEmpty, "\(first)")
        #expect(attribution.settle([:], at: 101).isEmpty, "within the grace, a look shows neither")
        // The feed reads the end that stayed afresh before the moved end's deletion.
        let moved = attribution.apply([.event(.newOrChanged(Self.pairEnd(51, "vethA", peer: 50, nsid: 4))),
                                       .event(.deleted(Self.pairEnd(50, "vethB", peer: 51)))], at: 101)
        #expect(moved.isEmpty, "\(moved)")
        #expect(attribution.unsettled.nsids == [4])
        #expect(attribution.apply(readings: [Self.reading(51, rx: 700, tx: 900)]).isEmpty)
        let settled = Self.shown(attribution.settle([4: .found(Self.web)], at: 102))
        #expect(settled.map(\.name) == ["container:web"])
        #expect(settled.first?.counters == LinkCounters(rxBytes: 900, txBytes: 700), "from its first byte")
    }

    @Test("a pair still both here when the grace runs out is counted under its names; one whose end moves later, having carried nothing, becomes its owner's")
    func pairOutwaitsGrace() {
        var attribution = Attribution(scope: .all, grace: .seconds(10))
        _ = attribution.apply([.event(.newOrChanged(Self.pairEnd(50, "p0", peer: 51, rx: 5, tx: 6))),
                               .event(.newOrChanged(Self.pairEnd(51, "p1", peer: 50)))], at: 100)
        let shown = Self.shown(attribution.settle([:], at: 110))
        #expect(shown.map(\.name).sorted() == ["p0", "p1"])
        #expect(shown.first { $0.name == "p0" }?.counters == LinkCounters(rxBytes: 5, txBytes: 6))
        // p1 carried nothing, and its peer goes into a container now.
        let late = attribution.apply([.event(.newOrChanged(Self.pairEnd(51, "p1", peer: 50, nsid: 4)))], at: 120)
        #expect(late.count == 1, "\(late)")
        guard case .event(.deleted(let closed))? = late.first else { Issue.record("\(late)"); return }
        #expect(closed.name == "p1")
        #expect(Self.shown(attribution.settle([4: .found(Self.web)], at: 121)).map(\.name) == ["container:web"])
        // p0 carried bytes under its own name: it stays so, wherever its peer goes.
        let used = attribution.apply([.event(.newOrChanged(Self.pairEnd(50, "p0", peer: 7, nsid: 5, rx: 5, tx: 6)))], at: 122)
        #expect(Self.shown(used).map(\.name) == ["p0"])
    }

    @Test("the container's end brought home as it stops: never counted, its readings withheld, its deletion raises the host end")
    func endBroughtHome() {
        var attribution = Attribution(scope: .all)
        _ = attribution.apply([.event(.newOrChanged(Self.veth(7, "vethA", nsid: 3, rx: 1000, tx: 2000, peer: 2)))], at: 100)
        _ = attribution.settle([3: .found(Self.web)], at: 100)
        let home = Self.pairEnd(9, "vethB", peer: 7, rx: 2500, tx: 1500)
        #expect(attribution.apply([.event(.newOrChanged(home))], at: 101).isEmpty)
        #expect(attribution.apply(readings: [Self.reading(9, rx: 2500, tx: 1500), Self.reading(7, rx: 1000, tx: 2000)]).map(\.ifindex) == [7])
        let gone = attribution.apply([.event(.deleted(home)), .event(.deleted(Self.veth(7, "vethA", nsid: nil, rx: 0, tx: 2000)))], at: 102)
        #expect(Self.shown(gone).map(\.counters) == [LinkCounters(rxBytes: 2500, txBytes: 1500)])
        #expect(gone.filter { if case .event(.deleted(let link)) = $0 { link.name == "vethB" } else { false } }.isEmpty)
    }
}
