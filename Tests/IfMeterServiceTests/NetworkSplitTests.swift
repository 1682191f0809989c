import IfMeterCore
import IfMeterHistory
import IfMeterPlans
@testable import IfMeterService
@testable import IfMeterStore
import IfMeterTestSupport
import Testing

private let home = Network(uuid: "0b5ab2a0-0000-4000-8000-000000000001", id: "Home", type: "wifi",
                           ssid: Array("Home".utf8), metered: .no)
private let hotspot = Network(uuid: "0b5ab2a0-0000-4000-8000-000000000002", id: "Pixel", type: "wifi",
                              ssid: [0x50, 0xFF, 0x3C, 0x62, 0x3E], metered: .guessYes)

@Suite("Networks: an interface's traffic split at each switch", .ownThread, .timeLimit(.minutes(3)))
struct NetworkSplitTests {
    private func figures(_ harness: ServiceHarness, _ subject: String) -> NetworkFigures? {
        harness.service.networkFigures().first { $0.subject == subject }
    }

    @Test("each network gets what crossed while it was on, and the networks add up to the interface")
    func splitAtSwitches() throws {
        let harness = try ServiceHarness()
        harness.start([link("wlan0", 3, traffic(1000, 100))], at: at(0))
        harness.service.reportNetworks([DeviceNetwork(interface: "wlan0", network: home)], at: at(0).wall)
        harness.ingest(readings: [reading(3, traffic(5000, 700))], at: at(10))
        // The switch: the daemon samples first, then reports.
        harness.ingest(readings: [reading(3, traffic(6000, 800))], at: at(20))
        harness.service.reportNetworks([DeviceNetwork(interface: "wlan0", network: hotspot)], at: at(20).wall)
        harness.ingest(readings: [reading(3, traffic(9000, 1800))], at: at(30))
        // Off every network, then back home.
        harness.service.reportNetworks([DeviceNetwork(interface: "wlan0", network: nil)], at: at(30).wall)
        harness.ingest(readings: [reading(3, traffic(9100, 1810))], at: at(40))
        harness.service.reportNetworks([DeviceNetwork(interface: "wlan0", network: home)], at: at(40).wall)
        harness.ingest(readings: [reading(3, traffic(9500, 1900))], at: at(50))

        #expect(figures(harness, home.subject)?.total.traffic.rxBytes == 5000 + 400)
        #expect(figures(harness, home.subject)?.total.traffic.txBytes == 700 + 90)
        #expect(figures(harness, hotspot.subject)?.total.traffic.rxBytes == 3000)
        #expect(figures(harness, hotspot.subject)?.total.traffic.txBytes == 1000)
        #expect(harness.total("wlan0").rxBytes == 8500)
        #expect(figures(harness, home.subject)?.interface == "wlan0")
        #expect(figures(harness, hotspot.subject)?.interface == nil)
        // Another view of the same bytes: not an interface, and not in the estimate log.
        #expect(harness.figures(home.subject) == nil)
        harness.save(at: at(50))
        #expect(harness.logged(home.subject) == .zero)
        #expect(harness.logged("wlan0").rxBytes == 8500)
        #expect(try harness.storedTotal(hotspot.subject).rxBytes == 3000)
    }

    @Test("a restart keeps the networks; what crossed while ifmeterd was down, and until NetworkManager is read, is network:unknown")
    func restartIsUnknown() throws {
        let harness = try ServiceHarness()
        harness.start([link("wlan0", 3, traffic(0, 0))], at: at(0))
        harness.service.reportNetworks([DeviceNetwork(interface: "wlan0", network: hotspot)], at: at(0).wall)
        harness.ingest(readings: [reading(3, traffic(400, 40))], at: at(10))
        harness.save(at: at(10))
        try harness.restart(at: at(100))
        harness.start([link("wlan0", 3, traffic(1400, 140))], at: at(100))
        harness.ingest(readings: [reading(3, traffic(1500, 150))], at: at(110))
        harness.service.reportNetworks([DeviceNetwork(interface: "wlan0", network: hotspot)], at: at(110).wall)
        harness.ingest(readings: [reading(3, traffic(1700, 170))], at: at(120))

        let unknown = try #require(figures(harness, NetworkSubject.unknown))
        #expect(unknown.total.traffic == traffic(1100, 110))
        #expect(unknown.labels.contains(.networkUnknown))
        #expect(figures(harness, hotspot.subject)?.total.traffic == traffic(600, 60))
        #expect(figures(harness, hotspot.subject)?.record?.network.ssid == hotspot.ssid)
        #expect(figures(harness, hotspot.subject)?.labels.contains(.networkUnknown) == false)
    }

    @Test("an interface on no network at the last save that joined one while ifmeterd was down: that traffic is network:unknown")
    func joinedWhileDown() throws {
        let harness = try ServiceHarness()
        harness.start([link("wlan0", 3, traffic(0, 0))], at: at(0))
        harness.service.reportNetworks([DeviceNetwork(interface: "wlan0", network: hotspot)], at: at(0).wall)
        harness.ingest(readings: [reading(3, traffic(400, 40))], at: at(10))
        harness.service.reportNetworks([DeviceNetwork(interface: "wlan0", network: nil)], at: at(10).wall)
        harness.ingest(readings: [reading(3, traffic(450, 45))], at: at(20))
        harness.save(at: at(20))
        // Down: wlan0 joins the hotspot again and carries 1000 bytes, then ifmeterd starts.
        try harness.restart(at: at(100))
        harness.start([link("wlan0", 3, traffic(1450, 145))], at: at(100))
        harness.ingest(readings: [reading(3, traffic(1500, 150))], at: at(110))
        harness.service.reportNetworks([DeviceNetwork(interface: "wlan0", network: hotspot)], at: at(110).wall)
        harness.ingest(readings: [reading(3, traffic(1600, 160))], at: at(120))
        #expect(figures(harness, NetworkSubject.unknown)?.total.traffic == traffic(1050, 105))
        #expect(figures(harness, hotspot.subject)?.total.traffic == traffic(500, 50))
        #expect(harness.service.networkFigures().map(\.total.traffic.rxBytes).reduce(0, +) == 1550,
                "all but the 50 bytes wlan0 carried on no network while ifmeterd watched")
    }

    @Test("a VPN's network counts the traffic beneath it again: its figures, and any plan by network holding it, say so")
    func tunnelNetworks() throws {
        let vpn = Network(uuid: "0b5ab2a0-0000-4000-8000-000000000003", id: "Office", type: "tun", metered: .yes)
        var configuration = ServiceConfiguration()
        configuration.plans = [Plan(name: "paid", selectors: [.metered(true)], limit: 1000, period: .day)]
        let harness = try ServiceHarness(configuration: configuration)
        harness.start([link("wlan0", 3, traffic(0, 0)), link("tun0", 4, traffic(0, 0), kind: "tun")], at: at(0))
        harness.service.reportNetworks([DeviceNetwork(interface: "wlan0", network: hotspot),
                                        DeviceNetwork(interface: "tun0", network: vpn)], at: at(0).wall)
        _ = harness.watch(at: at(0))
        harness.ingest(readings: [reading(3, traffic(300, 30)), reading(4, traffic(200, 20))], at: at(10))
        _ = harness.watch(at: at(10))
        #expect(figures(harness, vpn.subject)?.labels.contains(.tunnelDoubleCounted) == true)
        #expect(figures(harness, hotspot.subject)?.labels.contains(.tunnelDoubleCounted) == false)
        let plan = try #require(harness.service.planFigures(at: at(10).wall).first)
        #expect(plan.used == 550 && plan.labels.contains(.tunnelDoubleCounted))
    }

    @Test("network_names = hidden taken by a reload hides every name at once, APN and operator too, and the next save writes them so")
    func hiddenOnReload() throws {
        let modem = Network(uuid: "0b5ab2a0-0000-4000-8000-000000000004", id: "SIM", type: "gsm", metered: .yes,
                            apn: "internet.example", operatorName: "Roamer")
        let harness = try ServiceHarness()
        harness.start([link("wwan0", 3, traffic(0, 0))], at: at(0))
        harness.service.reportNetworks([DeviceNetwork(interface: "wwan0", network: modem)], at: at(0).wall)
        harness.save(at: at(1))
        var configuration = ServiceConfiguration()
        configuration.hideNetworkNames = true
        harness.service.reconfigure(configuration)
        let shown = try #require(figures(harness, modem.subject)?.record?.network)
        #expect(shown.id == modem.withNameHidden.id && shown.apn == nil && shown.operatorName == nil)
        harness.save(at: at(2))
        #expect(try harness.store.loader.networks().map(\.network) == [modem.withNameHidden])
    }

    @Test("NetworkManager gone: its devices' traffic is network:unknown until it is back")
    func managerGone() throws {
        let harness = try ServiceHarness()
        harness.start([link("wlan0", 3, traffic(0, 0)), link("eth0", 2, traffic(0, 0))], at: at(0))
        harness.service.reportNetworks([DeviceNetwork(interface: "wlan0", network: home)], at: at(0).wall)
        harness.ingest(readings: [reading(3, traffic(100, 10)), reading(2, traffic(7, 7))], at: at(10))
        harness.service.networkManagerGone()
        harness.ingest(readings: [reading(3, traffic(150, 15)), reading(2, traffic(9, 9))], at: at(20))
        harness.service.reportNetworks([DeviceNetwork(interface: "wlan0", network: home)], at: at(20).wall)
        harness.ingest(readings: [reading(3, traffic(160, 16))], at: at(30))
        #expect(figures(harness, home.subject)?.total.traffic == traffic(110, 11))
        #expect(figures(harness, NetworkSubject.unknown)?.total.traffic == traffic(50, 5))
        // An interface NetworkManager never put on a network is on none.
        #expect(harness.service.networkFigures().map(\.total.traffic.rxBytes).reduce(0, +) == 160)
    }

    @Test("network_names = hidden: a name made from the UUID, the same every time, and no SSID")
    func hiddenName() {
        let hidden = hotspot.withNameHidden
        #expect(hidden.id.hasPrefix("network-") && hidden.id.utf8.count == 16)
        #expect(hidden.id == hotspot.withNameHidden.id && hidden.id != home.withNameHidden.id)
        #expect(hidden.ssid == nil && hidden.uuid == hotspot.uuid && hidden.metered == hotspot.metered && hidden.type == "wifi")
    }

    @Test("a metered-only plan counts the metered network's traffic only, and a plan by SSID bytes finds its network")
    func plansByNetwork() throws {
        var configuration = ServiceConfiguration()
        configuration.plans = [
            Plan(name: "paid", selectors: [.metered(true)], limit: 1000, period: .day),
            Plan(name: "pixel", selectors: [try Plan.Selector.network(parsing: "Pixel")], limit: 1000, period: .day),
            Plan(name: "home", selectors: [.network("Home")], limit: 1000, period: .day),
        ]
        let harness = try ServiceHarness(configuration: configuration)
        harness.start([link("wlan0", 3, traffic(0, 0))], at: at(0))
        harness.service.reportNetworks([DeviceNetwork(interface: "wlan0", network: home)], at: at(0).wall)
        _ = harness.watch(at: at(0))
        harness.ingest(readings: [reading(3, traffic(300, 30))], at: at(10))
        harness.service.reportNetworks([DeviceNetwork(interface: "wlan0", network: hotspot)], at: at(10).wall)
        harness.ingest(readings: [reading(3, traffic(500, 80))], at: at(20))
        _ = harness.watch(at: at(20))
        let used = Dictionary(uniqueKeysWithValues: harness.service.planFigures(at: at(20).wall).map { ($0.plan.name, $0.used) })
        #expect(used == ["paid": 250, "pixel": 250, "home": 330])
        #expect(harness.service.planFiguresRecounted(at: at(20).wall).map(\.used) == [250, 250, 330])
        #expect(!harness.service.planFigures(at: at(20).wall).contains { $0.labels.contains(.networkUnknown) })
    }

    @Test("a plan by metered network fires each threshold once, as a plan by interface does, and survives a restart")
    func thresholdsOnce() throws {
        var configuration = ServiceConfiguration()
        configuration.plans = [Plan(name: "paid", selectors: [.metered(true)], limit: 400, period: .day)]
        let harness = try ServiceHarness(configuration: configuration)
        harness.start([link("wlan0", 3, traffic(0, 0))], at: at(0))
        harness.service.reportNetworks([DeviceNetwork(interface: "wlan0", network: hotspot)], at: at(0).wall)
        func fired(_ events: [CounterEvent]) -> [Double] {
            events.compactMap(PlanEvent.init).filter { $0.kind == .threshold }.compactMap(\.facts.threshold)
        }
        _ = harness.watch(at: at(0))
        harness.ingest(readings: [reading(3, traffic(200, 50))], at: at(10))
        #expect(fired(harness.watch(at: at(10))) == [])
        harness.ingest(readings: [reading(3, traffic(250, 100))], at: at(20))
        #expect(fired(harness.watch(at: at(20))) == [0.8])
        harness.ingest(readings: [reading(3, traffic(300, 120))], at: at(30))
        #expect(fired(harness.watch(at: at(30))) == [1.0])
        harness.save(at: at(30))
        try harness.restart(at: at(40), configuration: configuration)
        harness.start([link("wlan0", 3, traffic(310, 130))], at: at(40))
        harness.service.reportNetworks([DeviceNetwork(interface: "wlan0", network: hotspot)], at: at(40).wall)
        harness.ingest(readings: [reading(3, traffic(400, 200))], at: at(50))
        #expect(fired(harness.watch(at: at(50))) == [], "fired once a period, across a restart")
        // What crossed while the daemon was down is network:unknown, not the hotspot's; the plan says so.
        let figures = try #require(harness.service.planFigures(at: at(50).wall).first)
        #expect(figures.used == 420 + 160)
        #expect(figures.labels.contains(.networkUnknown))
    }

    @Test("one profile active on two devices at once (multi-connect): both devices' traffic is the network's")
    func multiConnect() throws {
        let harness = try ServiceHarness()
        harness.start([link("eth0", 2, traffic(0, 0)), link("eth1", 3, traffic(0, 0))], at: at(0))
        harness.service.reportNetworks([DeviceNetwork(interface: "eth0", network: home), DeviceNetwork(interface: "eth1", network: home)],
                                       at: at(0).wall)
        harness.ingest(readings: [reading(2, traffic(100, 10)), reading(3, traffic(200, 20))], at: at(10))
        #expect(figures(harness, home.subject)?.total.traffic == traffic(300, 30))
    }

    @Test("network_names = hidden renames the networks the history holds too, and the next save writes them so")
    func hiddenHistory() throws {
        let harness = try ServiceHarness()
        harness.start([link("wlan0", 3, traffic(0, 0))], at: at(0))
        harness.service.reportNetworks([DeviceNetwork(interface: "wlan0", network: hotspot)], at: at(0).wall)
        harness.service.reportNetworks([DeviceNetwork(interface: "wlan0", network: home)], at: at(1).wall)
        harness.save(at: at(2))
        var configuration = ServiceConfiguration()
        configuration.hideNetworkNames = true
        try harness.restart(at: at(10), configuration: configuration)
        harness.start([link("wlan0", 3, traffic(0, 0))], at: at(10))
        #expect(Set(harness.service.networkFigures().compactMap { $0.record?.network.id }) == [home.withNameHidden.id, hotspot.withNameHidden.id])
        harness.save(at: at(20))
        let stored = try harness.store.loader.networks()
        #expect(stored.allSatisfy { $0.network.id.hasPrefix("network-") && $0.network.ssid == nil }, "\(stored)")
    }

    @Test("networks = no: no interface is ever on a network, not even network:unknown after a restart")
    func disabled() throws {
        let harness = try ServiceHarness()
        harness.start([link("wlan0", 3, traffic(0, 0))], at: at(0))
        harness.service.reportNetworks([DeviceNetwork(interface: "wlan0", network: home)], at: at(0).wall)
        harness.save(at: at(1))
        var configuration = ServiceConfiguration()
        configuration.networks = false
        try harness.restart(at: at(10), configuration: configuration)
        harness.start([link("wlan0", 3, traffic(500, 50))], at: at(10))
        harness.ingest(readings: [reading(3, traffic(900, 90))], at: at(20))
        #expect(figures(harness, NetworkSubject.unknown) == nil)
    }
}
