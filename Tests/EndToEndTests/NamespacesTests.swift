import Foundation
import IfMeterTestSupport
import Testing

/// Host-side veths into a bound namespace and into a systemd-nspawn machine, and a thousand
/// namespaces churned, through the real daemon (docs/NAMESPACES.md).
@Suite("Namespaces and machines", .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason), .serialized)
final class NamespacesTests {
    let host: NetworkNamespace
    let daemon: DaemonProcess

    init() throws {
        host = try NetworkNamespace()
        daemon = try DaemonProcess(namespace: host, config: "interval = 3600\nmetrics_keep_absent = 0\n")
    }

    deinit {
        daemon.stop(SIGKILL)
        host.delete()
    }

    func request(_ line: String) throws -> [String: Any] {
        let reply = try daemon.client().request(line)
        return try #require(reply["result"] as? [String: Any], "\(reply)")
    }

    func interfaces() throws -> [String: [String: Any]] {
        _ = try request(#"{"v":1,"cmd":"sample"}"#)
        let list = try #require(try request(#"{"v":1,"cmd":"interfaces"}"#)["interfaces"] as? [[String: Any]])
        return Dictionary(list.map { ($0["name"] as? String ?? "", $0) }) { first, _ in first }
    }

    func waitUntilAbsent(_ subject: String) throws {
        let deadline = Date().addingTimeInterval(60)
        while try interfaces()[subject]?["operstate"] as? String != "absent" {
            guard Date() < deadline else {
                Issue.record("\(subject) still present after 60 s")
                throw CancellationError()
            }
            usleep(20_000)
        }
    }

    /// The kernel's counters of `interface` in the namespace of process `pid` (its own view).
    func counters(_ interface: String, inNamespaceOf pid: Int32) throws -> (rx: UInt64, tx: UInt64) {
        let text = try Command.check(["nsenter", "-t", String(pid), "-n", "ip", "-s", "-j", "link", "show", interface])
        let links = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])
        let stats = try #require(links.first?["stats64"] as? [String: Any])
        let rx = try #require(stats["rx"] as? [String: Any]), tx = try #require(stats["tx"] as? [String: Any])
        return (try #require((rx["bytes"] as? NSNumber)?.uint64Value), try #require((tx["bytes"] as? NSNumber)?.uint64Value))
    }

    /// Raw frames out of `interface` in `namespace`: each arrives at the other end.
    func sendFrames(_ count: Int, from interface: String, in namespace: NetworkNamespace) throws {
        _ = try namespace.exec(["python3", "-c", """
            import socket, sys
            frame = b"\\xff" * 6 + b"\\x02\\x00\\x00\\x00\\x00\\x01" + b"\\x88\\xb5" + b"ifmeter test".ljust(86, b"\\0")
            with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as s:
                for _ in range(int(sys.argv[2])): s.sendto(frame, (sys.argv[1], 0))
            """, interface, String(count)])
    }

    @Test("a veth into a bound namespace is netns:NAME, exact to the last frame after the namespace is deleted; an nspawn machine's ve-NAME is container:NAME")
    func boundNamespaceAndMachine() throws {
        try daemon.start()
        let blue = try NetworkNamespace()
        try host.ip("link", "add", "hb", "type", "veth", "peer", "name", "eth0", "netns", blue.name)
        try host.ip("link", "set", "hb", "up")
        try blue.ip("link", "set", "eth0", "up")
        var figures = try interfaces()
        let subject = "netns:\(blue.name)"
        let entry = try #require(figures[subject], "\(figures.keys.sorted())")
        #expect((entry["owner"] as? [String: Any])?["kind"] as? String == "netns")
        #expect((entry["owner"] as? [String: Any])?["alias"] as? String == "hb")
        #expect(figures["hb"] == nil)

        // Sent from inside after the last sample: counted only through the peer's own counters,
        // which it reports as it is deleted (as Podman and Docker delete a container's end).
        try sendFrames(40, from: "eth0", in: blue)
        try sendFrames(25, from: "hb", in: host)
        let inside = (rx: try blue.sysfsCounter("eth0", "rx_bytes"), tx: try blue.sysfsCounter("eth0", "tx_bytes"))
        #expect(inside.tx >= 40 * 100 && inside.rx >= 25 * 100)
        try blue.ip("link", "delete", "eth0")
        try waitUntilAbsent(subject)
        let gone = try #require(try interfaces()[subject])
        #expect(gone.int("rx_bytes") == inside.rx && gone.int("tx_bytes") == inside.tx, "\(gone) vs \(inside)")

        // A namespace destroyed with its end still in it: the kernel drops the namespace's nsid
        // before it deletes the links, so the container's end is never heard, and what it sent
        // since the last sample is not counted (docs/NAMESPACES.md); what it received is.
        let green = try NetworkNamespace()
        try host.ip("link", "add", "hg", "type", "veth", "peer", "name", "eth0", "netns", green.name)
        try host.ip("link", "set", "hg", "up")
        try green.ip("link", "set", "eth0", "up")
        try sendFrames(10, from: "eth0", in: green)
        let sampled = try #require(try interfaces()["netns:\(green.name)"])
        try sendFrames(20, from: "eth0", in: green)
        try sendFrames(5, from: "hg", in: host)
        let greenInside = (rx: try green.sysfsCounter("eth0", "rx_bytes"), tx: try green.sysfsCounter("eth0", "tx_bytes"))
        green.delete()
        try waitUntilAbsent("netns:\(green.name)")
        let greenGone = try #require(try interfaces()["netns:\(green.name)"])
        #expect(greenGone.int("rx_bytes") == greenInside.rx)
        #expect(greenGone.int("tx_bytes") == sampled.int("tx_bytes") && greenInside.tx > (sampled.int("tx_bytes") ?? 0))

        guard NspawnMachine.available else { return }
        let machineName = "ifmt\(getpid() % 100000)"
        let machine = try NspawnMachine(name: machineName, in: host)
        let hostSide = String(("ve-" + machineName).prefix(15))
        try host.ip("link", "set", hostSide, "up")
        let payload = try #require(machine.payload)
        _ = try Command.check(["nsenter", "-t", String(payload), "-n", "ip", "link", "set", "host0", "up"])
        try sendFrames(30, from: hostSide, in: host)
        figures = try interfaces()
        let box = try #require(figures["container:\(machineName)"], "\(figures.keys.sorted())")
        #expect((box["owner"] as? [String: Any])?["kind"] as? String == "nspawn")
        let host0 = try counters("host0", inNamespaceOf: payload)
        #expect(host0.rx >= 30 * 100)
        #expect(box.int("rx_bytes") == host0.rx && box.int("tx_bytes") == host0.tx, "\(box) vs \(host0)")
    }
}
