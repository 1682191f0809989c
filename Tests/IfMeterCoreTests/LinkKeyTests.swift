import IfMeterCore
import IfMeterTestSupport
import Testing

/// A link is (namespace, ifindex): the seat a second namespace's feed sits in. Two namespaces
/// that both number a link 2 are two links, and what one namespace's feed says never closes,
/// advances or resets the other's.
@Suite("Link identity", .ownThread, .timeLimit(.minutes(3)))
struct LinkKeyTests {
    private typealias S = Scenario
    private static let other = NamespaceID(rawValue: 7)

    private func link(_ name: String, _ namespace: NamespaceID, _ ifindex: Int32, _ rx: UInt64) -> Link {
        var link = S.link(name, ifindex, S.traffic(rx, rx / 2))
        link.namespace = namespace
        return link
    }

    private func reading(_ namespace: NamespaceID, _ ifindex: Int32, _ rx: UInt64) -> CounterReading {
        var reading = S.reading(ifindex, S.traffic(rx, rx / 2))
        reading.namespace = namespace
        return reading
    }

    @Test("the same ifindex in two namespaces is two links, each counted from its own counters")
    func sameIndexTwoNamespaces() {
        var run = ScenarioRun()
        run.run([.start([link("eth0", .own, 2, 100), link("veth0", Self.other, 2, 5000)], at: S.at(0)),
                 .sample([reading(.own, 2, 300), reading(Self.other, 2, 5100)], at: S.at(10)),
                 // Backwards in the other namespace only: a reset there, an advance here.
                 .sample([reading(.own, 2, 400), reading(Self.other, 2, 50)], at: S.at(20))])
        #expect(run.meter.tracked.count == 2)
        #expect(run.meter.tracked[LinkKey(ifindex: 2)]?.name == "eth0")
        #expect(run.meter.tracked[LinkKey(Self.other, ifindex: 2)]?.name == "veth0")
        #expect(run.totals["eth0"] == S.traffic(300, 150))
        #expect(run.totals["veth0"] == S.traffic(150, 75))
        #expect(run.events.filter { $0.kind == .reset }.map(\.interface) == ["veth0"])
        #expect(run.events.filter { $0.kind == .reset }.map(\.namespace) == [Self.other])
    }

    @Test("a resync of one namespace closes only that namespace's missing links")
    func resyncOneNamespace() {
        var run = ScenarioRun()
        run.run([.start([link("eth0", .own, 2, 100), link("veth0", Self.other, 3, 100)], at: S.at(0))])
        let output = run.meter.resync(links: [], of: Self.other, at: S.at(10))
        #expect(output.events.map(\.kind) == [.vanished])
        #expect(output.events.map(\.interface) == ["veth0"])
        #expect(run.meter.tracked[LinkKey(ifindex: 2)] != nil)
        #expect(run.meter.tracked[LinkKey(Self.other, ifindex: 3)] == nil)
    }

    @Test("a deletion in one namespace leaves the same ifindex in another counting")
    func deletionOneNamespace() {
        var run = ScenarioRun()
        run.run([.start([link("eth0", .own, 2, 100), link("veth0", Self.other, 2, 100)], at: S.at(0)),
                 .event(.deleted(link("veth0", Self.other, 2, 200)), at: S.at(5)),
                 .sample([reading(.own, 2, 150), reading(Self.other, 2, 900)], at: S.at(10))])
        #expect(run.totals["veth0"] == S.traffic(100, 50), "the final counters, and nothing after")
        #expect(run.totals["eth0"] == S.traffic(50, 25))
        #expect(run.meter.tracked.keys == [LinkKey(ifindex: 2)])
    }
}
