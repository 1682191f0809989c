import Foundation
import IfMeterCore
import IfMeterNetworkManager
import IfMeterPlatform
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The watch against python-dbusmock's NetworkManager on a private system bus: the first list,
/// one change per switch, NetworkManager stopping and starting, an impostor, a flood, and
/// replies of the wrong types. Every wait is for a callback the watch made, with a deadline.
@Suite("NetworkManagerWatch against a mock NetworkManager",
       .enabled(if: NetworkManagerMock.available, NetworkManagerMock.skipReason), .ownThread, .timeLimit(.minutes(5)))
struct NetworkManagerWatchTests {
    static let homeUUID = "0b2c1f3e-5a6d-4e7f-8a9b-0c1d2e3f4a5b"
    static let cafeUUID = "7d8e9f00-1a2b-4c3d-9e4f-5a6b7c8d9e0f"
    /// Not UTF-8, and markup.
    static let homeSSID: [UInt8] = [0xFF, 0xFE, 0x3C, 0x62, 0x3E, 0x26, 0x22]
    static let cafeSSID = Array("Café <i>'".utf8)

    /// A mock with wlan0 on the home network, activated.
    struct Home {
        let mock: NetworkManagerMock
        let device: String
        let cafe: String
        let cafeProfile: String
        let active: String

        init() throws {
            mock = try NetworkManagerMock()
            try mock.start()
            device = try mock.addWiFiDevice("wlan_test", interface: "wlan0")
            let home = try mock.addAccessPoint("home", device: device, ssid: NetworkManagerWatchTests.homeSSID)
            cafe = try mock.addAccessPoint("cafe", device: device, ssid: NetworkManagerWatchTests.cafeSSID)
            let homeProfile = try mock.addWiFiConnection(id: "Home <b>", uuid: NetworkManagerWatchTests.homeUUID,
                                                         ssid: NetworkManagerWatchTests.homeSSID)
            cafeProfile = try mock.addWiFiConnection(id: "Café", uuid: NetworkManagerWatchTests.cafeUUID,
                                                     ssid: NetworkManagerWatchTests.cafeSSID)
            active = try mock.activate(homeProfile, on: device, accessPoint: home, as: "0")
        }
    }

    static let onHome = [DeviceNetwork(interface: "wlan0", network: Network(
        uuid: homeUUID, id: "Home <b>", type: "wifi", ssid: homeSSID, metered: .guessNo))]
    static let onCafe = [DeviceNetwork(interface: "wlan0", network: Network(
        uuid: cafeUUID, id: "Café", type: "wifi", ssid: cafeSSID, metered: .guessNo))]

    @Test("start: the full list; a switch: one onChange; Metered: one more; stopped: onUnavailable; started: the list")
    func lifecycle() throws {
        let home = try Home()
        let run = try WatchRun(address: home.mock.address)
        #expect(run.run(until: { !run.changes.isEmpty || !run.unavailable.isEmpty }))
        #expect(run.changes == [Self.onHome])
        #expect(run.unavailable.isEmpty)

        // Deactivated and activated while the watch does not run: the signals of both wait on
        // the bus, and any read that follows finds the café.
        try home.mock.deactivate(home.active, on: home.device)
        try home.mock.activate(home.cafeProfile, on: home.device, accessPoint: home.cafe, as: "1")
        #expect(run.run(until: { run.changes.count >= 2 }))
        #expect(run.changes.count == 2)
        #expect(run.changes.last == Self.onCafe)

        try home.mock.setMetered(home.device, 1)
        var metered = Self.onCafe
        metered[0].network?.metered = .yes
        #expect(run.run(until: { run.changes.count >= 3 }))
        #expect(run.changes.count == 3)
        #expect(run.changes.last == metered)

        try home.mock.stop()
        #expect(run.run(until: { !run.unavailable.isEmpty }))
        #expect(run.unavailable.count == 1)
        #expect(run.unavailable.first?.contains("left the system bus") == true, "\(run.unavailable)")
        #expect(run.changes.count == 3, "no change delivered after the last one but the unavailability")

        try home.mock.start()
        #expect(run.run(until: { run.changes.count >= 4 }))
        #expect(run.changes.count == 4)
        #expect(run.changes.last == metered)
        #expect(run.unavailable.count == 1)
    }

    @Test("the bus itself restarted: onUnavailable, then a new connection and the list again, with no restart of the watch")
    func busRestarted() throws {
        let home = try Home()
        let run = try WatchRun(address: home.mock.address)
        #expect(run.run(until: { !run.changes.isEmpty }))
        #expect(run.changes == [Self.onHome])
        try home.mock.restartBus()
        #expect(run.run(until: { run.changes.count >= 2 }), "\(run.unavailable)")
        #expect(run.unavailable.contains { $0.contains("connection to the system bus was lost") }, "\(run.unavailable)")
        #expect(run.changes.last == Self.onHome)
    }

    @Test("without NetworkManager at start: onUnavailable once, then the list once it starts")
    func notRunningAtStart() throws {
        let mock = try NetworkManagerMock()
        let run = try WatchRun(address: mock.address)
        #expect(run.run(until: { !run.unavailable.isEmpty }))
        #expect(run.unavailable.count == 1)
        #expect(run.unavailable.first?.contains("NetworkManager is not running") == true, "\(run.unavailable)")

        try mock.start()
        try mock.addWiFiDevice("wlan_test", interface: "wlan0")
        #expect(run.run(until: { !run.changes.isEmpty }))
        #expect(run.changes == [[DeviceNetwork(interface: "wlan0", network: nil)]])
        #expect(run.unavailable.count == 1)
    }

    @Test("no bus at the address: one PlatformError naming the address and errno, thrown by start")
    func noBus() throws {
        let directory = try TemporaryDirectory()
        let address = "unix:path=\(directory.path)/no-bus"
        let loop = try EventLoop()
        let watch = NetworkManagerWatch(loop: loop, busAddress: address, onChange: { _ in }, onUnavailable: { _ in })
        do {
            try watch.start()
            Issue.record("start succeeded without a bus")
        } catch {
            #expect(error.errno == ENOENT)
            #expect(error.call == "sd_bus_start")
            #expect(error.message.contains(address), "\(error.message)")
            #expect(error.message.contains(Errno(ENOENT).description), "\(error.message)")
        }
    }

    @Test("a device off its connection with the next one queued: its list held back for the next signal, for at most 1 s")
    func heldInTransition() throws {
        let home = try Home()
        let run = try WatchRun(address: home.mock.address)
        #expect(run.run(until: { !run.changes.isEmpty }))

        // What NetworkManager shows for 2 ms while switching profiles, here for good.
        try home.mock.deactivate(home.active, on: home.device)
        try home.mock.setDeviceProperty(home.device, "StateReason", "<(uint32 30, uint32 60)>")
        let start = run.loop.now
        #expect(run.run(until: { run.changes.count >= 2 }))
        #expect(run.loop.now - start >= 900_000, "delivered after \(run.loop.now - start) µs")
        #expect(run.changes.last == [DeviceNetwork(interface: "wlan0", network: nil)])
    }

    @Test("an impostor owning org.freedesktop.NetworkManager as uid 65534: reported once with its uid, never believed",
          .enabled(if: NetworkManagerMock.impostorMissing == nil, NetworkManagerMock.impostorSkipReason))
    func impostor() throws {
        let home = try Home()
        let run = try WatchRun(address: home.mock.address)
        #expect(run.run(until: { !run.changes.isEmpty }))
        #expect(run.changes == [Self.onHome])

        // dbusmock asks for the name with replacement, and the mock allows it: the name
        // changes hands at once.
        try home.mock.startImpostor()
        #expect(run.run(until: { !run.unavailable.isEmpty }), "\(home.mock.impostorErrors)")
        #expect(run.unavailable.count == 1)
        #expect(run.unavailable.first?.contains("uid \(NetworkManagerMock.impostorUID)") == true, "\(run.unavailable)")

        // What it says is not taken: its signals come before its leaving, which is awaited.
        try home.mock.ownerAddsWiFiDevice("evil", interface: "evil0")
        try home.mock.stopImpostor()
        #expect(run.run(until: { run.unavailable.count >= 2 }))
        #expect(run.changes == [Self.onHome])
        #expect(run.unavailable.count == 2)
        #expect(run.unavailable.filter { $0.contains("uid \(NetworkManagerMock.impostorUID)") }.count == 1)
    }

    @Test("a flood of 10,000 PropertiesChanged: a bounded number of reads, no change delivered, the next change still seen")
    func flood() throws {
        let home = try Home()
        let run = try WatchRun(address: home.mock.address)
        #expect(run.run(until: { !run.changes.isEmpty }))
        let before = try home.mock.calls(of: "GetDevices")
        let started = run.loop.now

        // Sent while the watch runs, so reads and signals interleave as they would.
        try home.mock.startFlood(home.device, count: 10_000)
        #expect(run.run(until: { !home.mock.isFlooding }, within: 120))
        #expect(home.mock.floodSent)
        // On a loaded machine a read may wait past its budget behind the flood: the watch says
        // so and reads again, delivering the same list once more. Never another value.
        #expect(run.changes.allSatisfy { $0 == Self.onHome }, "signals naming a value that did not change deliver nothing else")
        // Two real changes after it: once the second is seen, every read the flood made has
        // reached the mock.
        try home.mock.setMetered(home.device, 1)
        #expect(run.run(until: { run.changes.last?.first?.network?.metered == .yes }))
        try home.mock.setMetered(home.device, 2)
        #expect(run.run(until: { run.changes.last?.first?.network?.metered == .no }))
        let reads = try home.mock.calls(of: "GetDevices") - before
        // A read for each burst, and one for each failed read's retry (every 5 s at most).
        let allowed = 20 + Int((run.loop.now - started) / 5_000_000)
        print("NetworkManagerWatch: 10,000 PropertiesChanged and two real changes led to \(reads) reads (\(allowed) allowed)")
        #expect(reads <= allowed, "\(reads) reads")
    }

    @Test("a hung NetworkManager: onUnavailable once the read's budget is spent, the loop turning all along; it answers again: the list")
    func hung() throws {
        let home = try Home()
        let run = try WatchRun(address: home.mock.address)
        #expect(run.run(until: { !run.changes.isEmpty }))
        var turns = 0
        let ticker = try run.loop.every(.milliseconds(100)) { turns += 1 }

        // The change's signal is on the bus before the mock stops; the read it causes hangs.
        try home.mock.setMetered(home.device, 1)
        home.mock.pause()
        defer { home.mock.resume() }
        #expect(run.run(until: { !run.unavailable.isEmpty }))
        #expect(run.unavailable.first?.contains("did not answer") == true, "\(run.unavailable)")
        #expect(turns >= 30, "the loop turned \(turns) times in the read's 5 s budget")
        #expect(run.changes.count == 1)

        home.mock.resume()
        try home.mock.setMetered(home.device, 2)
        #expect(run.run(until: { run.changes.count >= 2 }))
        #expect(run.changes.last?.first?.network?.metered == .no)
        withExtendedLifetime(ticker) {}
    }

    @Test("a read that failed is tried again on its own: a NetworkManager that answers again but sends no signal is read")
    func failedReadRetried() throws {
        let home = try Home()
        let run = try WatchRun(address: home.mock.address)
        #expect(run.run(until: { !run.changes.isEmpty }))
        try home.mock.setMetered(home.device, 1)
        home.mock.pause()
        defer { home.mock.resume() }
        #expect(run.run(until: { !run.unavailable.isEmpty }))
        home.mock.resume()
        #expect(run.run(until: { run.changes.count >= 2 }), "no read after NetworkManager answered again")
        #expect(run.changes.last?.first?.network?.metered == .yes)
    }

    @Test("replies of the wrong types, and a malformed UUID: the object is left out or not counted, nothing crashes")
    func wrongTypes() throws {
        let home = try Home()
        let other = try home.mock.addWiFiDevice("wlan_other", interface: "wlan1")
        let run = try WatchRun(address: home.mock.address)
        #expect(run.run(until: { !run.changes.isEmpty }))
        #expect(run.changes.last == Self.onHome + [DeviceNetwork(interface: "wlan1", network: nil)])

        try home.mock.setDeviceProperty(other, "Metered", "<'yes'>")
        #expect(run.run(until: { run.changes.count >= 2 }))
        #expect(run.changes.last == Self.onHome)

        try home.mock.setDeviceProperty(home.device, "ActiveConnection", "<'not a path'>")
        #expect(run.run(until: { run.changes.count >= 3 }))
        #expect(run.changes.last == [])

        let fresh = try NetworkManagerMock()
        try fresh.start()
        let device = try fresh.addWiFiDevice("wlan_test", interface: "wlan0")
        let accessPoint = try fresh.addAccessPoint("ap", device: device, ssid: Array("x".utf8))
        let profile = try fresh.addWiFiConnection(id: "Bad", uuid: "NOT-A-UUID'; DROP", ssid: Array("x".utf8))
        try fresh.activate(profile, on: device, accessPoint: accessPoint, as: "0")
        let bad = try WatchRun(address: fresh.address)
        #expect(bad.run(until: { !bad.changes.isEmpty }))
        #expect(bad.changes == [[DeviceNetwork(interface: "wlan0", network: nil)]])
    }
}
