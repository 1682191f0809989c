import Foundation
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Networks (docs/NETWORKS.md) on Wi-Fi without Wi-Fi hardware: python-dbusmock's NetworkManager
/// (``NetworkManagerMock``) on a private system bus says which access point and profile its
/// device `wlan0` is on, and `wlan0` is the left end of a real veth, carrying real traffic, in
/// the daemon's namespace. ifmeterd runs as its unit runs it (nobody, two capabilities), with
/// `DBUS_SYSTEM_BUS_ADDRESS` on the mock's bus and `/metrics` and the page on a listener of its
/// namespace. Every wait is for what the daemon recorded (its networks answer, or its stderr),
/// with a deadline; no sleep orders anything.
@Suite("Networks from a mock NetworkManager's Wi-Fi on a real veth",
       .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason),
       .enabled(if: NetworkManagerMock.available, NetworkManagerMock.skipReason),
       .serialized, .ownThread, .timeLimit(.minutes(10)))
final class NetworksWiFiTests {
    /// The listener, inside the daemon's own namespace: no other test's port there.
    static let port = 10951
    static let interface = "wlan0"
    /// Markup, quotes, an ampersand, a backslash and a terminal escape sequence: valid UTF-8.
    static let hostileSSID = Array("<b>\"x'&\\\u{1b}[31m".utf8)
    /// Not UTF-8 (é in Latin-1, then 0xFF), then NUL and a line feed.
    static let nonUTF8SSID: [UInt8] = [0x43, 0x61, 0x66, 0xE9, 0xFF, 0x00, 0x0A]
    /// NetworkManager's `NMMetered`: 1 yes, 2 no, 4 guess-no.
    static let yes: UInt32 = 1, no: UInt32 = 2, guessNo: UInt32 = 4

    /// A Wi-Fi profile the mock knows, and the access point it is activated through ("/" for
    /// none: then the SSID is the profile's).
    struct Profile {
        var id: String
        var uuid: String
        var ssid: [UInt8]
        var metered: UInt32
        var path: String
        var accessPoint: String
        var subject: String { "network:\(uuid)" }
    }

    let pair: VethPair
    let mock: NetworkManagerMock
    let daemon: DaemonProcess
    let device: String
    /// The mock's active connection on the device now, if any.
    private var active: String?
    private var activations = 0
    private var accessPoints = 0
    /// The device's `Metered` as last set.
    private var metered = NetworksWiFiTests.guessNo

    init() throws {
        pair = try VethPair(leftName: Self.interface, rightName: "ap0", subnet: 93)
        mock = try NetworkManagerMock()
        try mock.start()
        device = try mock.addWiFiDevice("wlan_test", interface: Self.interface, metered: Self.guessNo)
        daemon = try DaemonProcess(namespace: pair.left, config: """
            interval = 3600
            save_interval = 3600
            metrics_listen = 127.0.0.1:\(Self.port)
            """)
    }

    deinit {
        _ = try? daemon.stop()
        try? mock.stopImpostor()
        try? mock.stop()
        pair.left.delete()
        pair.right.delete()
    }

    // MARK: Driving the mock

    static func uuid(_ index: Int) -> String {
        String(format: "%08x-7a1e-4c0d-9f00-%012x", 0x5eed0000 + index, index)
    }

    /// A profile, with an access point broadcasting its SSID unless `throughAccessPoint` is false.
    func addProfile(_ id: String, ssid: [UInt8], uuid: String, metered: UInt32, throughAccessPoint: Bool = true) throws -> Profile {
        var accessPoint = "/"
        if throughAccessPoint {
            accessPoints += 1
            accessPoint = try mock.addAccessPoint("ap\(accessPoints)", device: device, ssid: ssid)
        }
        let path = try mock.addWiFiConnection(id: id, uuid: uuid, ssid: ssid)
        return Profile(id: id, uuid: uuid, ssid: ssid, metered: metered, path: path, accessPoint: accessPoint)
    }

    /// What NetworkManager does to move the device to `profile`: off the connection it is on,
    /// the device's `Metered` set while it is on none, then on the new one.
    func switchTo(_ profile: Profile) throws {
        if let active {
            try mock.deactivate(active, on: device)
            self.active = nil
        }
        if profile.metered != metered {
            try mock.setMetered(device, profile.metered)
            metered = profile.metered
        }
        activations += 1
        active = try mock.activate(profile.path, on: device, accessPoint: profile.accessPoint, as: "a\(activations)")
    }

    // MARK: Reading the kernel and the daemon

    /// `wlan0`'s bytes as the kernel counts them: received, transmitted.
    func kernel() throws -> (rx: Int, tx: Int) {
        (Int(try pair.left.sysfsCounter(Self.interface, "rx_bytes")), Int(try pair.left.sysfsCounter(Self.interface, "tx_bytes")))
    }

    /// Known traffic both ways: `count` datagrams out of wlan0 and `count / 2 + 1` into it.
    func send(_ count: Int) throws {
        try pair.sendLeftToRight(count: count, payload: 1000)
        try pair.sendRightToLeft(count: count / 2 + 1, payload: 300)
    }

    /// The daemon's networks by subject (`network:UUID`, `network:unknown`), as `query` answers
    /// them after a sample (without one with `sampling: false`).
    func networks(sampling: Bool = true) throws -> [String: [String: Any]] {
        let client = try daemon.client()
        if sampling { _ = try client.request(#"{"v":1,"cmd":"sample"}"#) }
        let reply = try client.request(#"{"v":1,"cmd":"query","select":"networks","include":["networks"],"usage":[]}"#)
        guard let list = (reply["result"] as? [String: Any])?["networks"] as? [[String: Any]] else {
            throw CommandFailed(command: ["query networks"], result: CommandResult(status: 1, stdout: "\(reply)", stderr: "no networks in the answer"))
        }
        return Dictionary(list.map { ($0["subject"] as? String ?? "", $0) }) { first, _ in first }
    }

    /// Waits until the daemon has recorded `subject` as the one network on wlan0 (nil: none, as
    /// while NetworkManager is away or not believed); the networks it answered then. Asked
    /// without a sample of the test's: the only sample between a switch and the traffic after it
    /// is the daemon's own, so a daemon that took the new state before sampling would count the
    /// last stretch's bytes to the next network, and fail.
    @discardableResult
    func awaitActive(_ subject: String?, seconds: Double = 20) throws -> [String: [String: Any]] {
        var seen: [String: [String: Any]] = [:]
        return try eventually("\(subject ?? "no network") active on \(Self.interface)", seconds: seconds,
                              seen: { "\(seen) \(self.daemon.stderrText)" }) { () -> [String: [String: Any]]? in
            seen = try networks(sampling: false)
            let on = seen.filter { $0.value["interface"] as? String == Self.interface }.map(\.key)
            return on == (subject.map { [$0] } ?? []) ? seen : nil
        }
    }

    /// Waits until the daemon's stderr holds `text`.
    func awaitStderr(_ text: String) throws {
        _ = try eventually("ifmeterd saying \(text)", seen: { self.daemon.stderrText }) { () -> Bool? in
            daemon.stderrText.contains(text) ? true : nil
        }
    }

    func bytes(_ network: [String: Any]?) -> (rx: Int, tx: Int) {
        ((network?["rx_bytes"] as? Int) ?? -1, (network?["tx_bytes"] as? Int) ?? -1)
    }

    /// wlan0's totals as the daemon counts them, after a sample.
    func interfaceTotals() throws -> (rx: Int, tx: Int) {
        let entry = try daemon.figuresAfterSample()[Self.interface]
        return ((entry?["rx_bytes"] as? Int) ?? -1, (entry?["tx_bytes"] as? Int) ?? -1)
    }

    /// `path` from the daemon's listener, read inside its namespace.
    func http(_ path: String) throws -> String {
        try pair.left.exec(["curl", "-sS", "--fail", "--max-time", "10", "http://127.0.0.1:\(Self.port)\(path)"])
    }

    /// The samples of `family` in an exposition: each line's labels text and value.
    static func samples(_ exposition: String, _ family: String) -> [(labels: String, value: Double)] {
        exposition.split(separator: "\n").compactMap { line -> (String, Double)? in
            guard line.hasPrefix(family + "{"), let close = line.range(of: "} ", options: .backwards),
                  let value = Double(line[close.upperBound...]) else { return nil }
            return (String(line[line.index(line.startIndex, offsetBy: family.count + 1)..<close.lowerBound]), value)
        }
    }

    /// A label value as the Prometheus text format writes it.
    static func labelEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    /// C0 and C1 control characters and DEL in `text`, line feeds apart; U+FFFD stands for bytes
    /// that were not UTF-8.
    static func controlCharacters(_ text: String) -> [UInt32] {
        text.unicodeScalars.map(\.value).filter { ($0 < 0x20 && $0 != 0x0A) || (0x7F...0x9F).contains($0) || $0 == 0xFFFD }
    }

    /// Where `scalars` occur in `text`: 40 scalars either side of each, as Swift literals.
    static func excerpts(_ text: String, around scalars: Set<Unicode.Scalar>) -> [String] {
        let all = Array(text.unicodeScalars)
        return all.indices.filter { scalars.contains(all[$0]) }.prefix(5).map { index in
            var excerpt = String.UnicodeScalarView()
            excerpt.append(contentsOf: all[max(0, index - 40)..<min(all.count, index + 40)])
            return String(excerpt).debugDescription
        }
    }

    /// `VmRSS` and `VmHWM` of a process, in kB.
    static func memory(of pid: Int32) throws -> (rss: Int, hwm: Int) {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        func field(_ name: String) -> Int {
            status.split(separator: "\n").first { $0.hasPrefix(name + ":") }
                .flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? -1
        }
        return (field("VmRSS"), field("VmHWM"))
    }

    /// Starts the daemon as the unit does, on the mock's bus, which nobody must be able to reach.
    func startDaemon() throws {
        try #require(OtherUserCopy.firstClosedDirectory(above: mock.directory.path + "/bus") == nil,
                     "the mock's bus is not reachable by uid 65534")
        try daemon.startAsTheUnit(environment: ["DBUS_SYSTEM_BUS_ADDRESS": mock.address])
    }

    /// The three profiles of the first two tests: the home network, a hostile SSID whose profile
    /// is named by it (as NetworkManager names a profile it makes), and a metered café whose
    /// SSID is not UTF-8.
    func threeProfiles() throws -> (home: Profile, lobby: Profile, cafe: Profile) {
        (try addProfile("Home", ssid: Array("Home".utf8), uuid: Self.uuid(1), metered: Self.guessNo),
         try addProfile(String(decoding: Self.hostileSSID, as: UTF8.self), ssid: Self.hostileSSID, uuid: Self.uuid(2), metered: Self.no),
         try addProfile("Café", ssid: Self.nonUTF8SSID, uuid: Self.uuid(3), metered: Self.yes))
    }

    // MARK: Tests

    @Test("switching between three SSIDs: each network's rx/tx equal the kernel's between the switches, exactly; they add up to how far wlan0's total moved")
    func switchesBetweenSSIDs() throws {
        let (home, lobby, cafe) = try threeProfiles()
        try startDaemon()
        let start = try interfaceTotals()
        let k0 = try kernel()

        try switchTo(home)
        try awaitActive(home.subject)
        try send(40)
        let k1 = try kernel()

        try switchTo(lobby)
        try awaitActive(lobby.subject)
        try send(30)
        let k2 = try kernel()

        try switchTo(cafe)
        try awaitActive(cafe.subject)
        try send(20)
        let k3 = try kernel()

        try switchTo(home)
        try awaitActive(home.subject)
        try send(10)
        let k4 = try kernel()

        let seen = try networks()
        let onHome = bytes(seen[home.subject]), onLobby = bytes(seen[lobby.subject]), onCafe = bytes(seen[cafe.subject])
        #expect(onHome.rx == (k1.rx - k0.rx) + (k4.rx - k3.rx) && onHome.tx == (k1.tx - k0.tx) + (k4.tx - k3.tx), "\(seen)")
        #expect(onLobby.rx == k2.rx - k1.rx && onLobby.tx == k2.tx - k1.tx, "\(seen)")
        #expect(onCafe.rx == k3.rx - k2.rx && onCafe.tx == k3.tx - k2.tx, "\(seen)")
        #expect(onHome.tx > 0 && onLobby.tx > 0 && onCafe.tx > 0 && onHome.rx > 0 && onLobby.rx > 0 && onCafe.rx > 0,
                "every period carried traffic both ways")
        #expect(seen["network:unknown"] == nil, "NetworkManager was never away: \(seen)")
        #expect(seen.count == 3, "\(seen.keys.sorted())")

        // What NetworkManager said of each.
        for (profile, metered) in [(home, "guess-no"), (lobby, "no"), (cafe, "yes")] {
            let network = seen[profile.subject]
            #expect(network?["name"] as? String == profile.id, "\(String(describing: network))")
            #expect(network?["uuid"] as? String == profile.uuid, "\(String(describing: network))")
            #expect(network?["type"] as? String == "wifi", "\(String(describing: network))")
            #expect(network?["metered"] as? String == metered, "\(String(describing: network))")
            #expect(network?["ssid_hex"] as? String == profile.ssid.map { String(format: "%02x", $0) }.joined(),
                    "\(String(describing: network))")
            #expect((network?["labels"] as? [String])?.contains("network-unknown") == false, "\(String(describing: network))")
        }
        #expect(seen[home.subject]?["interface"] as? String == Self.interface)
        #expect(seen[lobby.subject]?["interface"] == nil && seen[lobby.subject]?["last_seen"] is Double, "\(seen)")
        #expect(seen[cafe.subject]?["interface"] == nil && seen[cafe.subject]?["last_seen"] is Double, "\(seen)")

        // Another view of the same bytes: wlan0's own total moved by exactly their sum.
        let end = try interfaceTotals()
        #expect(end.rx - start.rx == onHome.rx + onLobby.rx + onCafe.rx, "interface \(start) → \(end)")
        #expect(end.tx - start.tx == onHome.tx + onLobby.tx + onCafe.tx, "interface \(start) → \(end)")
        #expect(end.rx - start.rx == k4.rx - k0.rx && end.tx - start.tx == k4.tx - k0.tx, "interface \(start) → \(end)")
    }
}
