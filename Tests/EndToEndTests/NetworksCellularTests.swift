import Foundation
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Networks (docs/NETWORKS.md) on a mobile connection without a modem: python-dbusmock's
/// NetworkManager (``NetworkManagerMock``) on a private system bus has a modem device (type 8,
/// control port `cdc-wdm0`) whose traffic interface is `wwan0`, the left end of a real veth in
/// the daemon's namespace, carrying real traffic, with a `gsm` profile "SIM" active on it; a
/// second mock owns `org.freedesktop.ModemManager1` on the same bus, with the modem the device's
/// `Udi` names and its `Modem3gpp.OperatorName`. ifmeterd runs as its unit runs it (nobody, two
/// capabilities) with `DBUS_SYSTEM_BUS_ADDRESS` on the mocks' bus. Every wait is for what the
/// daemon recorded (its networks answer, or its stderr), with a deadline; no sleep orders anything.
@Suite("Networks from a mock NetworkManager's modem and a mock ModemManager on a real veth",
       .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason),
       .enabled(if: NetworkManagerMock.available, NetworkManagerMock.skipReason),
       .serialized, .ownThread, .timeLimit(.minutes(10)))
final class NetworksCellularTests {
    static let interface = "wwan0"
    static let profileID = "SIM"
    static let uuid = "5eed0001-ce11-4c0d-9f00-00000000ce11"
    static let apn = "internet.example"
    static let homeOperator = "Example Mobile"
    static let roamingOperator = "Roaming Partner"
    /// Markup and a terminal escape sequence.
    static let hostileOperator = "<b>\u{1b}[31m"
    static var subject: String { "network:\(uuid)" }
    /// What the daemon says once when ModemManager's name is owned by the hostile mock's uid.
    static let notBelieved = "org.freedesktop.ModemManager1 is owned by a process of uid \(NetworkManagerMock.impostorUID), "
        + "not 0: operator names not read"

    let pair: VethPair
    let mock: NetworkManagerMock
    let daemon: DaemonProcess
    /// The modem device, and the SIM's profile.
    let device: String
    let profile: String

    init() throws {
        pair = try VethPair(leftName: Self.interface, rightName: "ggsn0", subnet: 97)
        mock = try NetworkManagerMock()
        try mock.start()
        device = try mock.addModemDevice("modem0", ipInterface: Self.interface)
        profile = try mock.addGSMConnection(id: Self.profileID, uuid: Self.uuid, apn: Self.apn)
        daemon = try DaemonProcess(namespace: pair.left, config: """
            interval = 3600
            save_interval = 3600
            """)
    }

    deinit {
        _ = try? daemon.stop()
        try? mock.stopModemManager()
        try? mock.stop()
        pair.left.delete()
        pair.right.delete()
    }

    // MARK: Reading the kernel and the daemon

    /// `wwan0`'s bytes as the kernel counts them: received, transmitted.
    func kernel() throws -> (rx: Int, tx: Int) {
        (Int(try pair.left.sysfsCounter(Self.interface, "rx_bytes")), Int(try pair.left.sysfsCounter(Self.interface, "tx_bytes")))
    }

    /// Known traffic both ways: `count` datagrams out of wwan0 and `count / 2 + 1` into it.
    func send(_ count: Int) throws {
        try pair.sendLeftToRight(count: count, payload: 1000)
        try pair.sendRightToLeft(count: count / 2 + 1, payload: 300)
    }

    /// The daemon's networks by subject, as `query` answers them after a sample (without one
    /// with `sampling: false`).
    func networks(sampling: Bool = true) throws -> [String: [String: Any]] {
        let client = try daemon.client()
        if sampling { _ = try client.request(#"{"v":1,"cmd":"sample"}"#) }
        let reply = try client.request(#"{"v":1,"cmd":"query","select":"networks","include":["networks"],"usage":[]}"#)
        guard let list = (reply["result"] as? [String: Any])?["networks"] as? [[String: Any]] else {
            throw CommandFailed(command: ["query networks"], result: CommandResult(status: 1, stdout: "\(reply)", stderr: "no networks in the answer"))
        }
        return Dictionary(list.map { ($0["subject"] as? String ?? "", $0) }) { first, _ in first }
    }

    /// Waits until the daemon's record of the SIM is active on wwan0 and `matches`; the record then.
    @discardableResult
    func awaitSIM(_ what: String, _ matches: @escaping ([String: Any]) -> Bool) throws -> [String: Any] {
        var seen: [String: [String: Any]] = [:]
        return try eventually("the SIM \(what)", seen: { "\(seen) \(self.daemon.stderrText)" }) { () -> [String: Any]? in
            seen = try networks(sampling: false)
            guard let sim = seen[Self.subject], sim["interface"] as? String == Self.interface, matches(sim) else { return nil }
            return sim
        }
    }

    func operatorOf(_ network: [String: Any]?) -> String? { network?["operator"] as? String }

    /// Waits until the daemon's stderr holds `text`.
    func awaitStderr(_ text: String) throws {
        _ = try eventually("ifmeterd saying \(text)", seen: { self.daemon.stderrText }) { () -> Bool? in
            daemon.stderrText.contains(text) ? true : nil
        }
    }

    func bytes(_ network: [String: Any]?) -> (rx: Int, tx: Int) {
        ((network?["rx_bytes"] as? Int) ?? -1, (network?["tx_bytes"] as? Int) ?? -1)
    }

    /// wwan0's totals as the daemon counts them, after a sample.
    func interfaceTotals() throws -> (rx: Int, tx: Int) {
        let entry = try daemon.figuresAfterSample()[Self.interface]
        return ((entry?["rx_bytes"] as? Int) ?? -1, (entry?["tx_bytes"] as? Int) ?? -1)
    }

    /// `ifmeter networks`: its output, and the SIM's rows in it.
    func view() throws -> (stdout: String, sim: [Substring]) {
        let result = try Command.run([CLIBinary.path, "--socket", daemon.socket, "networks"])
        #expect(result.status == 0, "\(result)")
        return (result.stdout, result.stdout.split(separator: "\n").filter { $0.hasPrefix(Self.profileID + " ") })
    }

    /// Starts the daemon as the unit does, on the mocks' bus, which nobody must be able to reach.
    func startDaemon() throws {
        try #require(OtherUserCopy.firstClosedDirectory(above: mock.directory.path + "/bus") == nil,
                     "the mocks' bus is not reachable by uid 65534")
        try daemon.startAsTheUnit(environment: ["DBUS_SYSTEM_BUS_ADDRESS": mock.address])
    }

    /// Starts ModemManager (root) with the home operator, the daemon, and activates the SIM on the
    /// modem; returns once the daemon has it on wwan0 with the home operator, with wwan0's
    /// kernel counters and the daemon's totals of it from before the activation.
    func startOnTheSIM() throws -> (k0: (rx: Int, tx: Int), start: (rx: Int, tx: Int)) {
        try mock.startModemManager(operatorName: Self.homeOperator)
        try startDaemon()
        let start = try interfaceTotals()
        let k0 = try kernel()
        try mock.activate(profile, on: device, accessPoint: "/", as: "m1")
        try awaitSIM("on wwan0 with operator \(Self.homeOperator)") { self.operatorOf($0) == Self.homeOperator }
        return (k0, start)
    }

    // MARK: Tests

    @Test("a modem's gsm connection: type gsm, the profile's APN, ModemManager's operator, on wwan0, its bytes exactly the kernel's; roaming followed; ModemManager stopped: the operator is dropped, the network stays; back: read again")
    func mobileNetwork() throws {
        let (k0, start) = try startOnTheSIM()
        try send(40)
        let k1 = try kernel()

        let first = try networks()
        let sim = first[Self.subject]
        #expect(sim?["name"] as? String == Self.profileID, "\(first)")
        #expect(sim?["uuid"] as? String == Self.uuid, "\(first)")
        #expect(sim?["type"] as? String == "gsm", "\(first)")
        #expect(sim?["apn"] as? String == Self.apn, "\(first)")
        #expect(operatorOf(sim) == Self.homeOperator, "\(first)")
        #expect(sim?["interface"] as? String == Self.interface, "the traffic interface, not the control port: \(first)")
        #expect(sim?["metered"] as? String == "guess-no", "\(first)")
        #expect(sim?["ssid_hex"] == nil && sim?["ssid"] == nil, "\(first)")
        #expect(bytes(sim) == (k1.rx - k0.rx, k1.tx - k0.tx), "kernel \(k0) → \(k1): \(first)")
        #expect(k1.tx - k0.tx > 0 && k1.rx - k0.rx > 0, "traffic both ways")
        #expect(Set(first.keys) == [Self.subject], "one network, none unknown: \(first)")

        let shown = try view()
        #expect(shown.sim.count == 1 && shown.sim.first?.hasPrefix("SIM (Example Mobile, APN internet.example) ") == true,
                "\(shown.stdout)")
        #expect(shown.sim.first?.contains(" gsm ") == true && shown.sim.first?.contains(" wwan0 ") == true, "\(shown.stdout)")

        // (a) Roaming: ModemManager's PropertiesChanged, and nothing from NetworkManager, makes
        // the daemon read again.
        try mock.setOperatorName(Self.roamingOperator)
        try awaitSIM("with operator \(Self.roamingOperator)") { self.operatorOf($0) == Self.roamingOperator }
        try send(20)
        let k2 = try kernel()
        let roaming = try view()
        #expect(roaming.sim.count == 1 && roaming.sim.first?.hasPrefix("SIM (Roaming Partner, APN internet.example) ") == true,
                "\(roaming.stdout)")

        // (b) ModemManager stops: the daemon reads again (NameOwnerChanged), finds no operator,
        // and records what it read: the network, still active on wwan0 with its APN, without
        // one. Its traffic stays the SIM's: only NetworkManager's absence makes it unknown.
        try mock.stopModemManager()
        let away = try awaitSIM("without an operator once ModemManager stopped") { self.operatorOf($0) == nil }
        #expect(away["apn"] as? String == Self.apn && away["type"] as? String == "gsm", "\(away)")
        try send(9)
        let k3 = try kernel()
        let withoutOperator = try view()
        #expect(withoutOperator.sim.count == 1 && withoutOperator.sim.first?.hasPrefix("SIM (APN internet.example) ") == true,
                "\(withoutOperator.stdout)")

        // ModemManager back (root): believed, its operator read again.
        try mock.startModemManager(operatorName: Self.homeOperator)
        try awaitSIM("with operator \(Self.homeOperator) again") { self.operatorOf($0) == Self.homeOperator }
        try send(5)
        let k4 = try kernel()

        let seen = try networks()
        #expect(bytes(seen[Self.subject]) == (k4.rx - k0.rx, k4.tx - k0.tx),
                "every byte since the activation is the SIM's, exactly: kernel \(k0) → \(k4) (\(k1), \(k2), \(k3)): \(seen)")
        #expect(Set(seen.keys) == [Self.subject], "NetworkManager was never away: \(seen)")
        let end = try interfaceTotals()
        #expect(end.rx - start.rx == k4.rx - k0.rx && end.tx - start.tx == k4.tx - k0.tx, "interface \(start) → \(end)")
        #expect(!daemon.stderrText.contains("uid \(NetworkManagerMock.impostorUID)"), "\(daemon.stderrText)")
    }

    @Test("a ModemManager owned by uid 65534 offering an operator of markup and an escape sequence: not believed (said once on stderr), nothing of it recorded or shown, its signals ignored; the real one back: believed",
          .enabled(if: NetworkManagerMock.impostorMissing == nil, NetworkManagerMock.impostorSkipReason))
    func hostileModemManager() throws {
        let (k0, _) = try startOnTheSIM()
        try send(10)
        try mock.stopModemManager()
        try awaitSIM("without an operator once ModemManager stopped") { self.operatorOf($0) == nil }

        try mock.startModemManager(operatorName: Self.hostileOperator, asUID: NetworkManagerMock.impostorUID)
        // It offers its operator to anyone who asks.
        let offered = try mock.operatorNameOnTheBus()
        try #require(offered.contains("<b>"), "the hostile ModemManager does not offer its operator: \(offered) \(mock.modemManagerErrors)")
        try awaitStderr(Self.notBelieved)

        // Its PropertiesChanged, then a change NetworkManager signals (the device's Metered,
        // guess-no to yes), which makes the daemon read everything again, ModemManager's owner
        // checked again: once the daemon has the new Metered, that read is done.
        try mock.setOperatorName(Self.hostileOperator + "2")
        try mock.setMetered(device, 1)
        let during = try awaitSIM("metered yes") { $0["metered"] as? String == "yes" }
        #expect(operatorOf(during) == nil, "the hostile ModemManager's operator was taken: \(during)")
        try send(8)

        let json = try Command.run([CLIBinary.path, "--socket", daemon.socket, "networks", "--json"])
        #expect(json.status == 0 && !json.stdout.contains("<b>") && !json.stdout.contains("\\u001b") && !json.stdout.contains("operator"),
                "\(json.stdout)")
        let shown = try view()
        #expect(!shown.stdout.contains("<b>") && !shown.stdout.unicodeScalars.contains("\u{1b}"), "\(shown.stdout.debugDescription)")
        #expect(shown.sim.count == 1 && shown.sim.first?.hasPrefix("SIM (APN internet.example) ") == true, "\(shown.stdout)")

        // The real one back: believed again, so the hostile one was refused for its uid only.
        try mock.stopModemManager()
        try mock.startModemManager(operatorName: Self.homeOperator)
        try awaitSIM("with operator \(Self.homeOperator) again") { self.operatorOf($0) == Self.homeOperator }
        try send(4)
        let k1 = try kernel()

        let seen = try networks()
        #expect(bytes(seen[Self.subject]) == (k1.rx - k0.rx, k1.tx - k0.tx), "kernel \(k0) → \(k1): \(seen)")
        #expect(Set(seen.keys) == [Self.subject], "\(seen)")
        let said = daemon.stderrText.split(separator: "\n").filter { $0.contains("uid \(NetworkManagerMock.impostorUID)") }
        #expect(said.count == 1 && said.first?.contains(Self.notBelieved) == true, "reported once: \(daemon.stderrText)")
        #expect(!daemon.stderrText.contains("<b>") && !daemon.stderrText.unicodeScalars.contains("\u{1b}"),
                "the hostile operator in the journal: \(daemon.stderrText.debugDescription)")
    }
}
