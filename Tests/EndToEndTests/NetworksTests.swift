import Foundation
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Networks (docs/NETWORKS.md) from a real NetworkManager (``NetworkManagerHost``) on a private
/// system bus, in the test's namespace: ifmeterd, run as its unit runs it, splits one veth end's
/// traffic between the two profiles NetworkManager switches it between, exactly, across a
/// NetworkManager restart.
@Suite("Networks from a real NetworkManager", .enabled(if: NetworkManagerHost.available, NetworkManagerHost.skipReason), .ownThread,
       .timeLimit(.minutes(8)))
final class NetworksTests {
    let pair: VethPair
    let host: NetworkManagerHost
    let daemon: DaemonProcess

    init() throws {
        pair = try VethPair()
        host = try NetworkManagerHost(in: pair.left)
        daemon = try DaemonProcess(namespace: pair.left, config: """
            interval = 3600
            save_interval = 3600
            plan[paid].metered = yes
            plan[paid].limit = 1G
            plan[home].network = Home
            plan[home].limit = 1G
            """)
    }

    deinit {
        _ = try? daemon.stop()
        host.stop()
        pair.left.delete()
        pair.right.delete()
    }

    /// The managed end's bytes as the kernel counts them: received, transmitted.
    func kernel() throws -> (rx: Int, tx: Int) {
        (Int(try pair.left.sysfsCounter(pair.leftName, "rx_bytes")), Int(try pair.left.sysfsCounter(pair.leftName, "tx_bytes")))
    }

    /// Known traffic both ways: `count` datagrams out and `count / 2 + 1` in.
    func send(_ count: Int) throws {
        try pair.sendLeftToRight(count: count, payload: 1000)
        try pair.sendRightToLeft(count: count / 2 + 1, payload: 300)
    }

    /// The daemon's networks by name, as `query` answers them after a sample.
    func networks() throws -> [String: [String: Any]] {
        let client = try daemon.client()
        _ = try client.request(#"{"v":1,"cmd":"sample"}"#)
        let reply = try client.request(#"{"v":1,"cmd":"query","select":"networks","include":["networks"],"usage":[]}"#)
        let list = (reply["result"] as? [String: Any])?["networks"] as? [[String: Any]] ?? []
        return Dictionary(list.map { ($0["name"] as? String ?? "", $0) }) { first, _ in first }
    }

    /// Waits until the daemon has recorded `name` as the network on the managed end (nil: on none
    /// it knows, as while NetworkManager is away).
    func awaitActive(_ name: String?) throws {
        var seen: [String: [String: Any]] = [:]
        _ = try eventually("\(name ?? "no network") active", seen: { "\(seen) \(self.daemon.stderrText)" }) { () -> Bool? in
            seen = try networks()
            let active = seen.values.filter { $0["interface"] as? String == pair.leftName }.compactMap { $0["name"] as? String }
            return active == (name.map { [$0] } ?? []) ? true : nil
        }
    }

    func bytes(_ network: [String: Any]?) -> (rx: Int, tx: Int) {
        ((network?["rx_bytes"] as? Int) ?? -1, (network?["tx_bytes"] as? Int) ?? -1)
    }

    @Test("each network's bytes equal the kernel's between the switches, exactly; the networks add up to the interface; a metered plan counts the metered profile only; across a NetworkManager restart")
    func switches() throws {
        let interface = pair.leftName
        _ = try host.addEthernetProfile("Home", interface: interface, address: "\(pair.leftAddress)/24", metered: false)
        _ = try host.addEthernetProfile("Hotspot", interface: interface, address: "\(pair.leftAddress)/24", metered: true)
        try host.manage(interface, quiet: true)
        try daemon.startAsTheUnit(environment: ["DBUS_SYSTEM_BUS_ADDRESS": host.busAddress])
        let startTotals = try daemon.figuresAfterSample()[interface]
        let k0 = try kernel()

        try host.up("Home")
        try awaitActive("Home")
        try send(40)
        let k1 = try kernel()

        try host.up("Hotspot")
        try awaitActive("Hotspot")
        try send(30)
        let k2 = try kernel()

        // NetworkManager away: what the end carries meanwhile is on a network not known.
        try host.stopManager()
        try awaitActive(nil)
        try send(7)
        let k3 = try kernel()
        try host.startManager()
        try awaitActive("Hotspot")
        try send(11)
        let k4 = try kernel()

        try host.up("Home")
        try awaitActive("Home")
        try send(13)
        let k5 = try kernel()

        let seen = try networks()
        let home = bytes(seen["Home"]), hotspot = bytes(seen["Hotspot"]), unknown = bytes(seen["unknown"])
        #expect(home.rx == (k1.rx - k0.rx) + (k5.rx - k4.rx) && home.tx == (k1.tx - k0.tx) + (k5.tx - k4.tx), "\(seen)")
        #expect(hotspot.rx == (k2.rx - k1.rx) + (k4.rx - k3.rx) && hotspot.tx == (k2.tx - k1.tx) + (k4.tx - k3.tx), "\(seen)")
        #expect(unknown.rx == k3.rx - k2.rx && unknown.tx == k3.tx - k2.tx, "\(seen)")
        #expect((seen["unknown"]?["labels"] as? [String])?.contains("network-unknown") == true, "\(seen)")
        #expect((seen["Home"]?["labels"] as? [String])?.contains("network-unknown") == false, "\(seen)")
        #expect(seen["Hotspot"]?["metered"] as? String == "yes" && seen["Home"]?["metered"] as? String == "no", "\(seen)")
        #expect(home.tx > 0 && hotspot.tx > 0 && unknown.tx > 0, "every period carried traffic")

        // Another view of the same bytes: the interface's total moved by exactly the networks' sum.
        let figures = try daemon.figuresAfterSample()[interface]
        func total(_ entry: [String: Any]?, _ key: String) -> Int { (entry?[key] as? Int) ?? -1 }
        #expect(total(figures, "rx_bytes") - total(startTotals, "rx_bytes") == home.rx + hotspot.rx + unknown.rx)
        #expect(total(figures, "tx_bytes") - total(startTotals, "tx_bytes") == home.tx + hotspot.tx + unknown.tx)

        let plans = try daemon.client().request(#"{"v":1,"cmd":"plans"}"#)
        let byName = Dictionary(((plans["result"] as? [String: Any])?["plans"] as? [[String: Any]] ?? []).map {
            ($0["name"] as? String ?? "", $0)
        }) { first, _ in first }
        #expect(byName["paid"]?["used_bytes"] as? Int == hotspot.rx + hotspot.tx, "\(byName)")
        #expect(byName["paid"]?["networks"] as? [String] == ["Hotspot"], "\(byName)")
        #expect(byName["home"]?["used_bytes"] as? Int == home.rx + home.tx, "\(byName)")

        // The client's view of the same answer.
        let view = try Command.run([CLIBinary.path, "--socket", daemon.socket, "networks"])
        #expect(view.status == 0 && view.stdout.contains("Hotspot") && view.stdout.contains("yes") && view.stdout.contains("unknown"),
                "\(view)")
    }

    @Test("ifmeterd stopped and started again mid-connection: what crossed while it was down is network:unknown, labelled so; the rest is the network's")
    func restartedMidConnection() throws {
        let interface = pair.leftName
        _ = try host.addEthernetProfile("Hotspot", interface: interface, address: "\(pair.leftAddress)/24", metered: true)
        try host.manage(interface, quiet: true)
        try host.up("Hotspot")
        try daemon.startAsTheUnit(environment: ["DBUS_SYSTEM_BUS_ADDRESS": host.busAddress])
        try awaitActive("Hotspot")
        let k0 = try kernel()
        try send(20)
        let k1 = try kernel()
        #expect(try daemon.stop() == 0)
        try send(9)
        let k2 = try kernel()
        try daemon.startAsTheUnit(environment: ["DBUS_SYSTEM_BUS_ADDRESS": host.busAddress])
        try awaitActive("Hotspot")
        try send(5)
        let k3 = try kernel()

        let seen = try networks()
        let hotspot = bytes(seen["Hotspot"]), unknown = bytes(seen["unknown"])
        #expect(hotspot.rx == (k1.rx - k0.rx) + (k3.rx - k2.rx) && hotspot.tx == (k1.tx - k0.tx) + (k3.tx - k2.tx), "\(seen)")
        #expect(unknown.rx == k2.rx - k1.rx && unknown.tx == k2.tx - k1.tx, "\(seen)")
        #expect((seen["unknown"]?["labels"] as? [String])?.contains("network-unknown") == true, "\(seen)")
    }

    @Test("traffic flowing through a switch: every byte is in exactly one of the two networks, which add up to the interface; each has at least what was sent wholly on it")
    func switchWhileTrafficFlows() throws {
        let interface = pair.leftName
        _ = try host.addEthernetProfile("Home", interface: interface, address: "\(pair.leftAddress)/24", metered: false)
        _ = try host.addEthernetProfile("Hotspot", interface: interface, address: "\(pair.leftAddress)/24", metered: true)
        try host.manage(interface, quiet: true)
        try host.up("Home")
        try daemon.startAsTheUnit(environment: ["DBUS_SYSTEM_BUS_ADDRESS": host.busAddress])
        try awaitActive("Home")
        let start = try daemon.figuresAfterSample()[interface]
        let k0 = try kernel()
        try send(10)
        let beforeSwitch = try kernel()

        // A sender that keeps going while NetworkManager switches the end to the hotspot.
        let sender = try FlowingSender(pair: pair)
        sender.start()
        try host.up("Hotspot")
        try awaitActive("Hotspot")
        let sent = sender.stop()
        let afterSwitch = try kernel()
        try send(10)
        let k1 = try kernel()

        #expect(sent > 0, "datagrams were in flight during the switch")
        let seen = try networks()
        let home = bytes(seen["Home"]), hotspot = bytes(seen["Hotspot"])
        let figures = try daemon.figuresAfterSample()[interface]
        func total(_ entry: [String: Any]?, _ key: String) -> Int { (entry?[key] as? Int) ?? -1 }
        #expect(home.tx + hotspot.tx == k1.tx - k0.tx && home.rx + hotspot.rx == k1.rx - k0.rx, "\(seen)")
        #expect(total(figures, "tx_bytes") - total(start, "tx_bytes") == home.tx + hotspot.tx)
        #expect(home.tx >= beforeSwitch.tx - k0.tx && hotspot.tx >= k1.tx - afterSwitch.tx, "\(seen)")
        #expect(seen["unknown"] == nil, "the end was on a network throughout: \(seen)")
    }
}

/// Datagrams from the managed end, one after another, on a thread of their own until stopped.
/// Nothing waits for them to arrive: while NetworkManager moves the end between profiles its
/// address and neighbour entry come and go, and sends fail then; what the kernel counted is what
/// the test compares.
final class FlowingSender: @unchecked Sendable {
    private let socket: UDPSocket
    private let destination: String
    private let lock = NSLock()
    private var stopping = false
    private var sent = 0
    private let done = DispatchSemaphore(value: 0)

    init(pair: VethPair) throws {
        socket = try pair.left.inside { try UDPSocket(bindTo: "0.0.0.0", port: 0) }
        destination = pair.rightAddress
    }

    func start() {
        let payload = [UInt8](repeating: 0x5a, count: 500)
        Thread.detachNewThread { [self] in
            while !lock.withLock({ stopping }) {
                if (try? socket.send(payload, to: destination, port: 9100)) != nil { lock.withLock { sent += 1 } }
            }
            done.signal()
        }
    }

    /// Stops it; how many sends the kernel took.
    func stop() -> Int {
        lock.withLock { stopping = true }
        done.wait()
        return lock.withLock { sent }
    }
}
