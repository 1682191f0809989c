import Foundation
import IfMeterTestSupport
import Testing

/// The NetworkManager the network tests run (``NetworkManagerHost``): Debian's own, in a network
/// namespace and on a system bus of the test's, switching one end of a veth between a home
/// profile and a metered hotspot, restarted in the middle, and — told to be quiet — sending
/// nothing the kernel counts; and its bus's two policies, as a client of another user meets them.
@Suite("NetworkManager on a private bus", .enabled(if: NetworkManagerHost.available, NetworkManagerHost.skipReason), .ownThread,
       .timeLimit(.minutes(5)))
final class NetworkManagerHostTests {
    /// The end NetworkManager manages on the left, its peer on the right, each in a namespace of
    /// its own, with permanent neighbour entries.
    let pair: VethPair
    let host: NetworkManagerHost

    init() throws {
        pair = try VethPair()
        host = try NetworkManagerHost(in: pair.left)
    }

    deinit {
        host.stop()
        pair.left.delete()
        pair.right.delete()
    }

    @Test("Home, then the metered Hotspot: metered follows the profile; a restarted NetworkManager re-assumes Hotspot; quiet, the kernel counts none of its frames")
    func switching() throws {
        let interface = pair.leftName
        let home = try host.addEthernetProfile("Home", interface: interface, address: "\(pair.leftAddress)/24", metered: false)
        let hotspot = try host.addEthernetProfile("Hotspot", interface: interface, address: "\(pair.leftAddress)/24", metered: true)
        #expect(home.count == 36 && hotspot.count == 36 && home != hotspot, "\(home) \(hotspot)")
        try host.manage(interface, quiet: true)
        func shown() throws -> String { try host.nmcli("-g", "GENERAL.CONNECTION,GENERAL.METERED", "device", "show", interface) }
        let counted = try counters()

        try host.up("Home")
        #expect(try shown() == "Home\nno\n")
        try expectAnnouncements(3)
        try host.up("Hotspot")
        #expect(try shown() == "Hotspot\nyes\n")
        try expectAnnouncements(6)
        #expect(try counters() == counted, "the kernel counted frames of NetworkManager's. \(host.log)")

        // NetworkManager leaves the device as it is when it exits, and the one started again
        // re-assumes the profile the last one recorded in /run/NetworkManager/devices/<ifindex>,
        // announcing its address again.
        try host.stopManager()
        try host.startManager()
        #expect(try shown() == "Hotspot\nyes\n", "after the restart. \(host.log)")
        try expectAnnouncements(9)
        #expect(try counters() == counted, "the kernel counted frames of NetworkManager's. \(host.log)")

        // The test's own frames go out and are counted: the left end's permanent neighbour entry,
        // which the kernel flushed with the address Home had, is back (up), so no ARP is needed.
        try pair.sendLeftToRight(count: 3, payload: 100)
        #expect(try counters() == [counted[0] + 3, counted[1] + 3 * 142, counted[2] + 3, counted[3] + 3 * 142])
    }

    @Test("system policy: nobody reads a profile but may neither delete it nor claim NetworkManager's name; permissive: it may claim the name",
          .enabled(if: ["setpriv", "busctl"].allSatisfy { (try? Command.resolve($0)) != nil }, "needs setpriv (util-linux) and busctl (systemd)"))
    func policies() throws {
        _ = try host.addEthernetProfile("Home", interface: pair.leftName, address: "\(pair.leftAddress)/24", metered: false)
        let path = try host.nmcli("-g", "DBUS-PATH", "connection", "show").trimmingCharacters(in: .whitespacesAndNewlines)
        let profile = ["org.freedesktop.NetworkManager", path, "org.freedesktop.NetworkManager.Settings.Connection"]
        let settings = try asNobody(on: host, ["call"] + profile + ["GetSettings"])
        #expect(settings.status == 0 && settings.stdout.contains(#""id" s "Home""#), "\(settings)")
        // Refused by NetworkManager (auth-polkit=root-only), not by the bus.
        let delete = try asNobody(on: host, ["call"] + profile + ["Delete"])
        #expect(delete.status != 0 && delete.stderr.contains("Insufficient privileges"), "\(delete)")
        // RequestName with DBUS_NAME_FLAG_DO_NOT_QUEUE.
        let claim = ["call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "RequestName", "su", "org.freedesktop.NetworkManager", "4"]
        let denied = try asNobody(on: host, claim)
        #expect(denied.status != 0 && denied.stderr.contains("Access denied"), "\(denied)")

        let permissive = try NetworkManagerHost(in: pair.right, policy: .permissive)
        defer { permissive.stop() }
        // NetworkManager holds the name: DBUS_REQUEST_NAME_REPLY_EXISTS.
        let held = try asNobody(on: permissive, claim)
        #expect(held.status == 0 && held.stdout == "u 3\n", "\(held)")
        // Stopped, it holds it no more: DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER.
        try permissive.stopManager()
        let taken = try asNobody(on: permissive, claim)
        #expect(taken.status == 0 && taken.stdout == "u 1\n", "\(taken)")
    }

    /// `busctl ARGS…` on `host`'s bus as nobody, as the daemon under test runs.
    func asNobody(on host: NetworkManagerHost, _ arguments: [String]) throws -> CommandResult {
        try Command.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "busctl", "--address=\(host.busAddress)"] + arguments)
    }

    /// The managed end's tx packets and bytes, and its peer's rx packets and bytes.
    func counters() throws -> [UInt64] {
        [try pair.left.sysfsCounter(pair.leftName, "tx_packets"), try pair.left.sysfsCounter(pair.leftName, "tx_bytes"),
         try pair.right.sysfsCounter(pair.rightName, "rx_packets"), try pair.right.sysfsCounter(pair.rightName, "rx_bytes")]
    }

    /// Waits until `count` frames in all have reached the quiet filter's hook on the managed end,
    /// then expects exactly that many: NetworkManager's ARP announcements, 3 for each activation
    /// or re-assumption, as the test sends nothing meanwhile (the `clsact` qdisc counts every
    /// frame that reaches the hook, and its filter takes the ARP ones).
    func expectAnnouncements(_ count: Int) throws {
        func hooked() throws -> Int {
            let text = try pair.left.exec(["tc", "-s", "-j", "qdisc", "show", "dev", pair.leftName])
            let qdiscs = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]] ?? []
            return (qdiscs.first { $0["kind"] as? String == "clsact" }?["packets"] as? NSNumber)?.intValue ?? -1
        }
        let deadline = Date().addingTimeInterval(60)
        while try hooked() < count && Date() < deadline { usleep(50_000) }
        #expect(try hooked() == count, "frames at the quiet filter's hook. \(host.log)")
    }
}
