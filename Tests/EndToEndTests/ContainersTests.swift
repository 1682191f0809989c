import Foundation
import IfMeterTestSupport
import Testing

/// Traffic per container on real Podman (docs/NAMESPACES.md): containers whose host side is a
/// test namespace, the real daemon metering that namespace, known traffic sent from inside with
/// busybox `nc`, and each container's figures compared with its own `eth0` counters summed over
/// its lifetimes.
@Suite("Containers on real Podman", .enabled(if: Podman.available, Podman.skipReason), .serialized, .ownThread, .timeLimit(.minutes(10)))
final class ContainersTests {
    let host: NetworkNamespace
    let daemon: DaemonProcess
    var labels: [String] = []

    init() throws {
        host = try NetworkNamespace()
        daemon = try DaemonProcess(namespace: host, config: "interval = 3600\n")
    }

    deinit {
        _ = try? daemon.stop(SIGKILL)
        // Last made first: podman refuses to remove a container while others share its
        // namespace (`--network container:…`), and it would stay up with its conmon.
        for label in labels.reversed() { Podman.remove(label) }
        host.delete()
    }

    func run(_ label: String) throws {
        if !labels.contains(label) { labels.append(label) }
        try Podman.run(label, in: host)
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

    /// The host side of the container's veth, as the kernel names it now.
    func hostSide(of label: String) throws -> String {
        let figures = try #require(try interfaces()["container:\(Podman.name(label))"], "container \(label) not listed")
        let owner = try #require(figures["owner"] as? [String: Any])
        return try #require(owner["alias"] as? String)
    }

    @Test("per-container totals are the container's own counters over its lifetimes; a veth name another container takes over counts for that one")
    func lifetimesAndReuse() throws {
        try daemon.start()
        try run("a")
        try run("b")
        let aliasA = try hostSide(of: "a")
        try Podman.send(300_000, from: "a", in: host, port: 5001)
        try Podman.send(100_000, from: "b", in: host, port: 5002)
        try Podman.freeze("a", in: host)
        let a1 = try Podman.counters(of: "a")
        #expect(a1.tx > 300_000, "a's eth0 sent the test's bytes")
        Podman.remove("a")
        try run("c")
        // The issue's case: Podman gives c the host-side name a had.
        #expect(try hostSide(of: "c") == aliasA)
        try Podman.send(50_000, from: "c", in: host, port: 5003)
        // b restarts (a new namespace and veth), a comes back under its name (a new container).
        try Podman.freeze("b", in: host)
        let b1 = try Podman.counters(of: "b")
        try Podman.podman(["restart", "-t", "0", Podman.name("b")], in: host)
        try run("a")
        try Podman.send(20_000, from: "a", in: host, port: 5004)
        try Podman.send(10_000, from: "b", in: host, port: 5005)
        // c's end of the bridge also receives what reaches the others by broadcast: all three
        // are frozen before any is read.
        for label in ["a", "b", "c"] { try Podman.freeze(label, in: host) }
        let a2 = try Podman.counters(of: "a")
        let b2 = try Podman.counters(of: "b")
        let c1 = try Podman.counters(of: "c")

        let figures = try interfaces()
        func totals(_ label: String) throws -> (rx: UInt64?, tx: UInt64?) {
            let entry = try #require(figures["container:\(Podman.name(label))"], "container \(label) not listed")
            return (entry.int("rx_bytes"), entry.int("tx_bytes"))
        }
        let a = try totals("a"), b = try totals("b"), c = try totals("c")
        #expect(a.rx == a1.rx + a2.rx && a.tx == a1.tx + a2.tx, "a: \(a) vs \(a1) + \(a2)")
        #expect(b.rx == b1.rx + b2.rx && b.tx == b1.tx + b2.tx, "b: \(b) vs \(b1) + \(b2)")
        #expect(c.rx == c1.rx && c.tx == c1.tx, "c: \(c) vs \(c1)")
        // Nothing was counted under the veths' own names.
        #expect(figures.keys.filter { $0.hasPrefix("veth") }.isEmpty, "\(figures.keys.sorted())")
        let entry = try #require(figures["container:\(Podman.name("c"))"])
        #expect((entry["labels"] as? [String])?.contains("host-side-veth") == true)
        #expect((entry["owner"] as? [String: Any])?["kind"] as? String == "podman")

        // Its events say whose: a's start and its return under the same name.
        let events = try request(#"{"v":1,"cmd":"events","interface":"container:\#(Podman.name("a"))"}"#)["events"] as? [[String: Any]] ?? []
        let details = events.compactMap { $0["detail"] as? String }
        #expect(details.contains { $0.hasPrefix("podman container \(Podman.name("a")) (") && $0.contains("appeared via \(aliasA)") }, "\(details)")
        #expect(details.contains { $0.contains("container \(Podman.name("a")) (") && $0.contains("started again") }, "\(details)")

        // The store agrees once saved: the month's usage of a is both lifetimes.
        let usage = try request(#"{"v":1,"cmd":"usage","interface":"container:\#(Podman.name("a"))","period":"total"}"#)
        let row = try #require((usage["rows"] as? [[String: Any]])?.first)
        #expect(row.int("tx_bytes") == a1.tx + a2.tx)

        // `ifmeter containers`: this month of each, and who owns it now.
        let listed = try Command.run([CLIBinary.path, "--socket", daemon.socket, "containers", "--json"])
        #expect(listed.status == 0, "\(listed.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])
        let containers = try #require(json["containers"] as? [[String: Any]])
        let byName = Dictionary(containers.map { ($0["name"] as? String ?? "", $0) }) { first, _ in first }
        let month = try #require(byName["container:\(Podman.name("a"))"]?["this_month"] as? [String: Any])
        #expect(month.int("tx_bytes") == a1.tx + a2.tx && month.int("rx_bytes") == a1.rx + a2.rx)
        #expect((byName["container:\(Podman.name("c"))"]?["owner"] as? [String: Any])?["alias"] as? String == aliasA)
        let text = try Command.run([CLIBinary.path, "--socket", daemon.socket, "containers"]).stdout
        #expect(text.contains("container:\(Podman.name("b"))") && text.contains("podman"))

        // The same figures in /metrics, with a container label.
        let metrics = try Command.run([CLIBinary.path, "--socket", daemon.socket, "metrics"]).stdout
        let name = Podman.name("a")
        #expect(metrics.contains("ifmeter_interface_transmit_bytes_total{interface=\"container:\(name)\",class=\"virtual\",container=\"\(name)\"} \(a1.tx + a2.tx)\n"),
                "\(metrics.split(separator: "\n").filter { $0.contains(name) })")
        #expect(metrics.contains("ifmeter_owner_info{interface=\"container:\(name)\",container=\"\(name)\",kind=\"podman\""))
    }

    @Test("containers sharing one namespace (--network container:X, as a pod's): it is named by the first created of them, the same at five daemon starts")
    func sharedNamespaceOwner() throws {
        try run("first")
        for label in ["second", "third"] {
            if !labels.contains(label) { labels.append(label) }
            try Podman.run(label, sharingNamespaceOf: "first", in: host)
        }
        var named: [[String]] = []
        for _ in 0..<5 {
            try daemon.start()
            named.append(try daemon.figuresAfterSample().keys.filter { $0.hasPrefix("container:") }.sorted())
            try daemon.stop()
        }
        #expect(named == Array(repeating: ["container:\(Podman.name("first"))"], count: 5), "\(named)")
    }

    /// The shipped unit's privileges without systemd: an unprivileged user (nobody) holding
    /// only CAP_DAC_READ_SEARCH and CAP_NET_BROADCAST, as ifmeterd.service grants them.
    @Test("as nobody with only the unit's two capabilities: containers are named, and one removed between samples is exact")
    func underTheUnitsPrivileges() throws {
        try daemon.startAsTheUnit()
        let status = try String(contentsOfFile: "/proc/\(daemon.pid)/status", encoding: .utf8)
        #expect(status.contains("CapEff:\t0000000000000804"), "\(status.split(separator: "\n").filter { $0.hasPrefix("Cap") })")
        #expect(!daemon.stderrText.contains("NETLINK_LISTEN_ALL_NSID"), "\(daemon.stderrText)")
        try run("u")
        _ = try hostSide(of: "u")
        try Podman.send(80_000, from: "u", in: host, port: 5011)
        try Podman.freeze("u", in: host)
        let counted = try Podman.counters(of: "u")
        Podman.remove("u")
        let gone = try #require(try interfaces()["container:\(Podman.name("u"))"])
        #expect(gone["operstate"] as? String == "absent")
        #expect(gone.int("rx_bytes") == counted.rx && gone.int("tx_bytes") == counted.tx, "\(gone) vs \(counted)")
    }
}
