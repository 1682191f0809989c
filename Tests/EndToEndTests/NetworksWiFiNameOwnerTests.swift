import Foundation
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Who owns NetworkManager's name on the bus: NetworkManager stopped and started again, and an
/// impostor that takes the name meanwhile.
extension NetworksWiFiTests {
    @Test("NetworkManager stopped and started again in the middle: what wlan0 carried meanwhile is network:unknown, labelled network-unknown, exactly")
    func networkManagerRestarted() throws {
        let home = try addProfile("Home", ssid: Array("Home".utf8), uuid: Self.uuid(1), metered: Self.guessNo)
        let hotspot = try addProfile("Hotspot", ssid: Array("Pixel 7".utf8), uuid: Self.uuid(4), metered: Self.yes)
        try startDaemon()
        let start = try interfaceTotals()
        let k0 = try kernel()

        try switchTo(home)
        try awaitActive(home.subject)
        try send(25)
        let k1 = try kernel()

        try mock.stop()
        try awaitStderr("NetworkManager left the system bus")
        try awaitActive(nil)
        try send(9)
        let k2 = try kernel()

        // Started again, it restores its state: Home on wlan0.
        try mock.start()
        try awaitActive(home.subject)
        try send(11)
        let k3 = try kernel()

        try switchTo(hotspot)
        try awaitActive(hotspot.subject)
        try send(6)
        let k4 = try kernel()

        let seen = try networks()
        let onHome = bytes(seen[home.subject]), onHotspot = bytes(seen[hotspot.subject]), unknown = bytes(seen["network:unknown"])
        #expect(onHome.rx == (k1.rx - k0.rx) + (k3.rx - k2.rx) && onHome.tx == (k1.tx - k0.tx) + (k3.tx - k2.tx), "\(seen)")
        #expect(unknown.rx == k2.rx - k1.rx && unknown.tx == k2.tx - k1.tx, "\(seen)")
        #expect(onHotspot.rx == k4.rx - k3.rx && onHotspot.tx == k4.tx - k3.tx, "\(seen)")
        #expect(unknown.tx > 0 && unknown.rx > 0)
        let entry = seen["network:unknown"]
        #expect(entry?["name"] as? String == "unknown" && entry?["uuid"] == nil && entry?["interface"] == nil, "\(String(describing: entry))")
        #expect((entry?["labels"] as? [String])?.contains("network-unknown") == true, "\(String(describing: entry))")
        #expect((seen[home.subject]?["labels"] as? [String])?.contains("network-unknown") == false, "\(seen)")
        #expect(seen[hotspot.subject]?["metered"] as? String == "yes", "\(seen)")

        let end = try interfaceTotals()
        #expect(end.rx - start.rx == onHome.rx + onHotspot.rx + unknown.rx, "interface \(start) → \(end)")
        #expect(end.tx - start.tx == onHome.tx + onHotspot.tx + unknown.tx, "interface \(start) → \(end)")

        // The exposition says the same of network="unknown".
        let exposition = try http("/metrics")
        let unknownSample = Self.samples(exposition, "ifmeter_network_transmit_bytes_total").first { $0.labels.contains("network=\"unknown\"") }
        #expect(unknownSample?.value == Double(unknown.tx), "\(exposition)")
    }

    @Test("an impostor (uid 65534) owning NetworkManager's name and claiming wlan0 is on its network: not believed, said on stderr, its traffic network:unknown; NetworkManager back: believed again",
          .enabled(if: NetworkManagerMock.impostorMissing == nil, NetworkManagerMock.impostorSkipReason))
    func impostorNotBelieved() throws {
        let home = try addProfile("Home", ssid: Array("Home".utf8), uuid: Self.uuid(1), metered: Self.guessNo)
        let evilUUID = Self.uuid(666)
        try startDaemon()
        let k0 = try kernel()
        try switchTo(home)
        try awaitActive(home.subject)
        try send(15)
        let k1 = try kernel()

        try mock.stop()
        try awaitStderr("NetworkManager left the system bus")
        try awaitActive(nil)
        try mock.startImpostor()
        do {
            try awaitStderr("owned by a process of uid \(NetworkManagerMock.impostorUID), not 0: not believed")
        } catch {
            Issue.record("impostor: \(mock.impostorErrors)")
            throw error
        }

        // The impostor says wlan0 is on "Evil Twin", through its own device, access point,
        // profile and active connection.
        try mock.ownerAddsWiFiDevice("evil", interface: Self.interface)
        let evilDevice = "\(NetworkManagerMock.root)/Devices/evil"
        try ownerCall("/org/freedesktop", "org.freedesktop.DBus.Mock.AddAccessPoint",
                      [evilDevice, "evil", "Evil Twin", "11:22:33:44:55:66", "2", "2437", "5400", "80", "0"])
        let added = try ownerCall("\(NetworkManagerMock.root)/Settings", "org.freedesktop.NetworkManager.Settings.AddConnection",
                                  ["{'connection': {'id': <'Evil Twin'>, 'uuid': <'\(evilUUID)'>, 'type': <'802-11-wireless'>}, "
                                   + "'802-11-wireless': {'ssid': <[byte 0x45, byte 0x76, byte 0x69, byte 0x6c]>}}"])
        let profile = try #require(added.split(separator: "'").first { $0.hasPrefix("/") }.map(String.init), "\(added)")
        try ownerCall("/org/freedesktop", "org.freedesktop.DBus.Mock.AddActiveConnection",
                      ["['\(evilDevice)']", profile, "\(NetworkManagerMock.root)/AccessPoint/evil", "evil", "2"])
        try send(8)
        let k2 = try kernel()

        let during = try networks()
        #expect(during["network:\(evilUUID)"] == nil, "the impostor's network was taken: \(during)")
        #expect(!during.values.contains { $0["interface"] as? String == Self.interface }, "\(during)")
        #expect(bytes(during["network:unknown"]) == (k2.rx - k1.rx, k2.tx - k1.tx), "\(during)")
        // Nothing was asked of it: a read goes only to an owner whose uid was checked.
        #expect(try ownerCalls(of: "GetDevices") == 0, "ifmeterd read the impostor")
        // The count counts: one call of the test's own is one.
        try ownerCall(NetworkManagerMock.root, "org.freedesktop.NetworkManager.GetDevices", [])
        #expect(try ownerCalls(of: "GetDevices") == 1)

        try mock.stopImpostor()
        try mock.start()
        try awaitActive(home.subject)
        try awaitStderr("networks: NetworkManager is on the bus")
        try send(4)
        let k3 = try kernel()

        let seen = try networks()
        #expect(seen["network:\(evilUUID)"] == nil, "\(seen)")
        #expect(!seen.values.contains { $0["name"] as? String == "Evil Twin" }, "\(seen)")
        #expect(bytes(seen[home.subject]) == ((k1.rx - k0.rx) + (k3.rx - k2.rx), (k1.tx - k0.tx) + (k3.tx - k2.tx)), "\(seen)")
        #expect(bytes(seen["network:unknown"]) == (k2.rx - k1.rx, k2.tx - k1.tx), "\(seen)")
        let said = daemon.stderrText.split(separator: "\n").filter { $0.contains("uid \(NetworkManagerMock.impostorUID)") }
        #expect(said.count == 1, "the impostor is reported once: \(daemon.stderrText)")
        #expect(said.first?.contains("not believed") == true, "\(daemon.stderrText)")
    }

    /// How many times `method` of the NetworkManager object of whoever owns the name now was
    /// called (``NetworkManagerMock/calls(of:)`` reads no count of 0: busctl prints `a(tav) 0`
    /// and a line feed).
    func ownerCalls(of method: String) throws -> Int {
        let output = try Command.check(["busctl", "--address=\(mock.address)", "call", NetworkManagerMock.busName, NetworkManagerMock.root,
                                        NetworkManagerMock.mockInterface, "GetMethodCalls", "s", method], timeout: 30)
        let fields = output.split(whereSeparator: \.isWhitespace)
        guard fields.count >= 2, fields[0] == "a(tav)", let count = Int(fields[1]) else {
            throw CommandFailed(command: ["GetMethodCalls", method], result: CommandResult(status: 0, stdout: output, stderr: "unexpected"))
        }
        return count
    }

    /// A call to whoever owns NetworkManager's name now (the impostor), not part of the mock's
    /// set-up that is replayed when it starts again.
    @discardableResult
    func ownerCall(_ path: String, _ method: String, _ arguments: [String]) throws -> String {
        try Command.check(["gdbus", "call", "--address", mock.address, "--dest", NetworkManagerMock.busName,
                           "--object-path", path, "--method", method] + arguments, timeout: 30)
    }
}
