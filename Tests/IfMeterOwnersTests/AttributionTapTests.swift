import IfMeterCore
import IfMeterOwners
import IfMeterTestSupport
import Testing

/// Virtual machines' taps through the attribution state machine, with made-up links and looks.
@Suite("Attribution of taps", .ownThread, .timeLimit(.minutes(3)))
struct AttributionTapTests {
    static func reading(_ ifindex: Int32, rx: UInt64, tx: UInt64) -> CounterReading { AttributionTests.reading(ifindex, rx: rx, tx: tx) }
    static func shown(_ observations: [LinkObservation]) -> [Link] { AttributionTests.shown(observations) }


    static let vmA = FoundOwner(.libvirt, name: "a", id: "ae25cd81-9c70-4c91-9c74-481c24be67a4", nic: 1)
    static let vmB = FoundOwner(.libvirt, name: "b", id: "0d0e3c1a-1111-4c91-9c74-481c24be67a4", nic: 1)

    static func tap(_ ifindex: Int32, _ name: String, address: String = "fe:54:00:50:6b:de", rx: UInt64 = 0, tx: UInt64 = 0) -> Link {
        Link(ifindex: ifindex, name: name, kind: "tun", arpType: 1, flags: [.up], operState: .up, address: address,
             master: 4, counters: LinkCounters(rxBytes: rx, txBytes: tx))
    }

    @Test("a libvirt tap waits for a look, then is its virtual machine's, turned round: rx is what the guest received")
    func tapOfVM() {
        var attribution = Attribution()
        #expect(Self.shown(attribution.apply([.event(.newOrChanged(Self.tap(9, "vnet0", rx: 10, tx: 20)))], at: 100)).isEmpty)
        #expect(attribution.unsettled.taps == [9: TapSight(name: "vnet0", address: "fe:54:00:50:6b:de")])
        #expect(attribution.unsettled.nsids.isEmpty && !attribution.unsettled.isEmpty)
        #expect(attribution.apply(readings: [Self.reading(9, rx: 30, tx: 40)]).isEmpty, "withheld while it waits")
        let settled = Self.shown(attribution.settle(OwnerLookups(taps: [9: .found(Self.vmA)]), at: 100))
        #expect(settled.map(\.name) == ["vm:a"])
        #expect(settled.first?.owner?.kind == .libvirt && settled.first?.owner?.alias == "vnet0")
        #expect(settled.first?.counters == LinkCounters(rxBytes: 40, txBytes: 30))
        #expect(attribution.apply(readings: [Self.reading(9, rx: 50, tx: 70)]).map(\.counters) == [LinkCounters(rxBytes: 70, txBytes: 50)])
        #expect(attribution.isSettled)
        let gone = attribution.apply([.event(.deleted(Self.tap(9, "vnet0", rx: 60, tx: 80)))], at: 200)
        guard case .event(.deleted(let last))? = gone.first else { Issue.record("\(gone)"); return }
        #expect(last.name == "vm:a" && last.counters == LinkCounters(rxBytes: 80, txBytes: 60))
    }

    @Test("a VM's second NIC is vm:NAME#2, by its place in the domain, whichever tap is seen first")
    func secondNIC() {
        var attribution = Attribution()
        _ = attribution.apply([.event(.newOrChanged(Self.tap(11, "vnet4", address: "fe:54:00:00:00:02"))),
                               .event(.newOrChanged(Self.tap(10, "vnet3")))], at: 100)
        var second = Self.vmA
        second.nic = 2
        let settled = Self.shown(attribution.settle(OwnerLookups(taps: [10: .found(Self.vmA), 11: .found(second)]), at: 100))
        #expect(Set(settled.map(\.name)) == ["vm:a", "vm:a#2"])
    }

    static func tun(_ ifindex: Int32, _ name: String, rx: UInt64 = 0) -> Link {
        Link(ifindex: ifindex, name: name, kind: "tun", arpType: ARPHRD.none, flags: [.up, .pointToPoint], operState: .unknown,
             counters: LinkCounters(rxBytes: rx))
    }

    @Test("a tap of any name waits for a look: a domain's own target name is its VM's, one nobody names counts under its own name; a TUN-mode device never waits")
    func tapsOfAnyName() {
        var attribution = Attribution()
        let shown = Self.shown(attribution.apply([.event(.newOrChanged(Self.tap(9, "myvmtap0", rx: 5))),
                                                  .event(.newOrChanged(Self.tap(12, "tap0", rx: 7))),
                                                  .event(.newOrChanged(Self.tun(13, "tun0", rx: 9)))], at: 100))
        #expect(shown.map(\.name) == ["tun0"], "a VPN's tun is nobody's VM")
        #expect(attribution.unsettled.taps.keys.sorted() == [9, 12])
        let settled = Self.shown(attribution.settle(OwnerLookups(taps: [9: .found(Self.vmA), 12: .unknown]), at: 100))
        #expect(settled.map(\.name).sorted() == ["tap0", "vm:a"])
        #expect(settled.first { $0.name == "vm:a" }?.owner?.alias == "myvmtap0")
        #expect(settled.first { $0.name == "tap0" }?.owner == nil && settled.first { $0.name == "tap0" }?.counters == LinkCounters(rxBytes: 7))
    }

    @Test("a tap libvirt is still starting waits out the grace, then counts under its own name from zero")
    func tapStarting() {
        var attribution = Attribution(grace: .seconds(10))
        #expect(Self.shown(attribution.apply([.event(.newOrChanged(Self.tap(9, "vnet0", rx: 5)))], at: 100)).isEmpty)
        #expect(attribution.settle(OwnerLookups(taps: [9: .starting(fallback: nil)]), at: 109).isEmpty)
        let settled = Self.shown(attribution.settle(OwnerLookups(taps: [9: .starting(fallback: nil)]), at: 110))
        #expect(settled.map(\.name) == ["vnet0"] && settled.first?.owner == nil)
        #expect(settled.first?.counters == LinkCounters(rxBytes: 5))
    }

    @Test("a VM's tap reads up when the tun driver says unknown but it is up with its carrier; down stays down")
    func tapState() {
        var attribution = Attribution()
        var running = Self.tap(9, "vnet0")
        running.operState = .unknown
        running.flags = [.up, .lowerUp]
        var stopped = Self.tap(10, "vnet1", address: "fe:54:00:00:00:02")
        stopped.operState = .unknown
        stopped.flags = []
        _ = attribution.apply([.event(.newOrChanged(running)), .event(.newOrChanged(stopped))], at: 100)
        var second = Self.vmB
        second.nic = 1
        let settled = Self.shown(attribution.settle(OwnerLookups(taps: [9: .found(Self.vmA), 10: .found(second)]), at: 100))
        #expect(settled.first { $0.name == "vm:a" }?.operState == .up)
        #expect(settled.first { $0.name == "vm:b" }?.operState == .unknown)
    }

    @Test("a tap name the next VM takes over is that VM's; a look that does not cover a new tap leaves it waiting")
    func tapNameReused() {
        var attribution = Attribution()
        _ = attribution.apply([.event(.newOrChanged(Self.tap(9, "vnet0")))], at: 100)
        _ = attribution.settle(OwnerLookups(taps: [9: .found(Self.vmA)]), at: 100)
        _ = attribution.apply([.event(.deleted(Self.tap(9, "vnet0")))], at: 101)
        _ = attribution.apply([.event(.newOrChanged(Self.tap(13, "vnet0", address: "fe:54:00:aa:bb:cc")))], at: 102)
        #expect(attribution.settle(OwnerLookups(taps: [9: .found(Self.vmA)]), at: 102).isEmpty)
        #expect(Self.shown(attribution.settle(OwnerLookups(taps: [13: .found(Self.vmB)]), at: 102)).map(\.name) == ["vm:b"])
    }

    @Test("at the start, a tap no running domain names is counted under its own name at once")
    func tapAtStart() {
        var attribution = Attribution()
        var asked: [Int32: TapSight] = [:]
        let links = attribution.start([Self.tap(9, "vnet0"), Self.tap(10, "vnet1", address: "fe:00:00:00:00:01")], at: 100) { unsettled in
            asked = unsettled.taps
            return OwnerLookups(taps: [9: .found(Self.vmA), 10: .starting(fallback: nil)])
        }
        #expect(asked.keys.sorted() == [9, 10])
        #expect(links.map(\.name) == ["vm:a", "vnet1"])
        #expect(attribution.isSettled)
    }

    @Test("a NIC hot-plugged where another was unplugged, its place now the second's: never two taps on one subject")
    func hotplug() {
        var attribution = Attribution()
        var second = Self.vmA
        second.nic = 2
        _ = attribution.apply([.event(.newOrChanged(Self.tap(9, "hotnic1"))),
                               .event(.newOrChanged(Self.tap(10, "hotnic2", address: "fe:54:00:00:00:02")))], at: 100)
        _ = attribution.settle(OwnerLookups(taps: [9: .found(Self.vmA), 10: .found(second)]), at: 100)
        _ = attribution.apply([.event(.deleted(Self.tap(9, "hotnic1")))], at: 101)
        // The domain's status now lists hotnic2 first and the new NIC second.
        _ = attribution.apply([.event(.newOrChanged(Self.tap(11, "hotnic3", address: "fe:54:00:00:00:03")))], at: 102)
        let settled = Self.shown(attribution.settle(OwnerLookups(taps: [11: .found(second)]), at: 102))
        #expect(settled.count == 1 && settled.first?.name != "vm:a#2", "\(settled.map(\.name))")
    }
}
