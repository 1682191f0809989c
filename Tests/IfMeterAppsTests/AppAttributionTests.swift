import IfMeterApps
import IfMeterCore
import IfMeterTestSupport
import Testing

@Suite("Application attribution and remainders", .ownThread, .timeLimit(.minutes(3)))
struct AppAttributionTests {
    let eth = AppLink(ifindex: 2, name: "eth0", headerLength: 14)
    let tun = AppLink(ifindex: 5, name: "tun0", headerLength: 0)
    let names: [UInt64: String] = [10: "service:nginx.service", 11: "service:nginx.service", 12: "app:1000/firefox"]

    func link(_ ifindex: Int32) -> AppLink? { [eth, tun].first { $0.ifindex == ifindex } }

    func own(_ ifindex: Int32, _ traffic: Traffic) -> MeterDelta {
        MeterDelta(name: ifindex == 2 ? "eth0" : "tun0", ifindex: ifindex,
                   epoch: Epoch(bootID: "b", ifindex: ifindex, since: 0), traffic: traffic, at: 100)
    }

    func attribute(_ attribution: inout AppAttribution, _ apps: [AppCounterDelta], _ links: [MeterDelta]) -> [String: Traffic] {
        let out = attribution.attribute(apps, linkDeltas: links, subject: { names[$0] }, link: link, bootID: "b", at: 100)
        return out.reduce(into: [:]) { $0[$1.name, default: .zero] += $1.traffic }
    }

    @Test("applications in the link's terms plus the remainder equal the link's counters")
    func addsUp() {
        var attribution = AppAttribution()
        let apps = [
            AppCounterDelta(key: AppCounterKey(cgroupID: 10, ifindex: 2), traffic: Traffic(rxBytes: 1000, txBytes: 500, rxPackets: 10, txPackets: 5)),
            AppCounterDelta(key: AppCounterKey(cgroupID: 11, ifindex: 2), traffic: Traffic(rxBytes: 100, txBytes: 0, rxPackets: 1, txPackets: 0)),
            AppCounterDelta(key: AppCounterKey(cgroupID: 12, ifindex: 5), traffic: Traffic(rxBytes: 300, txBytes: 300, rxPackets: 3, txPackets: 3)),
        ]
        let ethOwn = Traffic(rxBytes: 5000, txBytes: 2000, rxPackets: 40, txPackets: 20)
        let tunOwn = Traffic(rxBytes: 300, txBytes: 300, rxPackets: 3, txPackets: 3)
        let figures = attribute(&attribution, apps, [own(2, ethOwn), own(5, tunOwn)])
        let nginx = Traffic(rxBytes: 1100 + 11 * 14, txBytes: 500 + 5 * 14, rxPackets: 11, txPackets: 5)
        #expect(figures["service:nginx.service"] == nginx)
        #expect(figures["app:1000/firefox"] == tunOwn)
        #expect(figures["remainder:eth0"] == ethOwn.combined(with: nginx, -))
        #expect(figures["remainder:tun0"] == nil)
        #expect(attribution.debt.isEmpty)
    }

    @Test("applications counted ahead of their link wait as debt: no negative remainder, and the sums meet")
    func debt() {
        var attribution = AppAttribution()
        let ahead = [AppCounterDelta(key: AppCounterKey(cgroupID: 12, ifindex: 2),
                                     traffic: Traffic(rxBytes: 986, txBytes: 0, rxPackets: 1, txPackets: 0))]
        let first = attribute(&attribution, ahead, [own(2, Traffic(rxBytes: 500, rxPackets: 1))])
        #expect(first["remainder:eth0"] == nil)
        #expect(attribution.debt[2] == Traffic(rxBytes: 500))
        let second = attribute(&attribution, [], [own(2, Traffic(rxBytes: 2000, rxPackets: 2))])
        #expect(second["remainder:eth0"] == Traffic(rxBytes: 1500, rxPackets: 2))
        #expect(attribution.debt.isEmpty)
        // Over both reads: 1000 + 1500 + 0 = 2500 bytes, the link's own.
    }

    @Test("cgroups gone before they were named and a full map's overflow are the link's unnamed applications; links not counted count nothing")
    func unnamed() {
        var attribution = AppAttribution()
        let apps = [
            AppCounterDelta(key: AppCounterKey(cgroupID: 99, ifindex: 2), traffic: Traffic(rxBytes: 100, rxPackets: 1)),
            AppCounterDelta(key: .overflow(ifindex: 2), traffic: Traffic(rxBytes: 200, rxPackets: 2)),
            AppCounterDelta(key: AppCounterKey(cgroupID: 10, ifindex: 1), traffic: Traffic(rxBytes: 50, rxPackets: 1)),
            AppCounterDelta(key: .lost, traffic: Traffic(rxBytes: 70, rxPackets: 1)),
        ]
        let figures = attribute(&attribution, apps, [own(2, Traffic(rxBytes: 400, rxPackets: 4))])
        #expect(figures == ["remainder:eth0#unnamed": Traffic(rxBytes: 342, rxPackets: 3),
                            "remainder:eth0": Traffic(rxBytes: 58, rxPackets: 1)])
        #expect(BucketTally().labels(tunnel: false, subject: "remainder:eth0#unnamed").last == .unnamedApps)
    }

    @Test("scoped: each named application is also counted by its entries' scopes, summed by subject; remainders are not")
    func scoped() {
        var attribution = AppAttribution()
        let apps = [
            AppCounterDelta(key: AppCounterKey(cgroupID: 10, ifindex: 2, scope: .local), traffic: Traffic(rxBytes: 100, rxPackets: 1)),
            AppCounterDelta(key: AppCounterKey(cgroupID: 11, ifindex: 2, scope: .local), traffic: Traffic(rxBytes: 200, rxPackets: 2)),
            AppCounterDelta(key: AppCounterKey(cgroupID: 10, ifindex: 2, scope: .internet), traffic: Traffic(txBytes: 300, txPackets: 3),
                            flags: .gap),
            AppCounterDelta(key: AppCounterKey(cgroupID: 99, ifindex: 2, scope: .internet), traffic: Traffic(rxBytes: 10, rxPackets: 1)),
        ]
        let out = attribution.attribute(apps, linkDeltas: [own(2, Traffic(rxBytes: 1000, txBytes: 1000, rxPackets: 10, txPackets: 10))],
                                        subject: { names[$0] }, link: link, scoped: true, bootID: "b", at: 100)
        let figures = out.reduce(into: [String: Traffic]()) { $0[$1.name, default: .zero] += $1.traffic }
        #expect(figures["service:nginx.service"] == Traffic(rxBytes: 342, txBytes: 342, rxPackets: 3, txPackets: 3))
        #expect(figures["scope:local/service:nginx.service"] == Traffic(rxBytes: 342, rxPackets: 3))
        #expect(figures["scope:internet/service:nginx.service"] == Traffic(txBytes: 342, txPackets: 3))
        #expect(out.first { $0.name == "scope:internet/service:nginx.service" }?.flags == .gap)
        #expect(!figures.keys.contains { $0.hasPrefix("scope:") && $0.contains("remainder:") })
        #expect(figures["remainder:eth0#unnamed"] == Traffic(rxBytes: 24, rxPackets: 1))
    }
}
