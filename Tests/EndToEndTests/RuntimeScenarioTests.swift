import Foundation
import IfMeterTestSupport
import Testing

/// One owner scenario, written once, on every real runtime (``ContainerRuntime``): Podman,
/// Docker, LXC, containerd's CRI (pods) and libvirt, each with its host side in a test namespace, the real ifmeterd
/// metering that namespace as the shipped unit runs it (nobody with its two capabilities), and
/// each owner's figures compared with its NIC's own counters over its lifetimes
/// (docs/NAMESPACES.md). What is one runtime's own stays in its own tests.
@Suite("One owner scenario on every runtime", .serialized, .ownThread, .timeLimit(.minutes(15)))
struct RuntimeScenarioTests {
    @Test("Podman", .enabled(if: Podman.available, Podman.skipReason))
    func podman() throws {
        let host = try NetworkNamespace()
        defer { host.delete() }
        try Self.scenario(PodmanRuntime(in: host))
    }

    @Test("Docker", .enabled(if: DockerDaemon.available, DockerDaemon.skipReason))
    func docker() throws {
        let host = try NetworkNamespace()
        defer { host.delete() }
        try Self.scenario(try DockerDaemon(in: host))
    }

    @Test("LXC", .enabled(if: LXCHost.available, LXCHost.skipReason))
    func lxc() throws {
        let host = try NetworkNamespace()
        defer { host.delete() }
        try Self.scenario(try LXCHost(in: host))
    }

    @Test("Kubernetes pods through containerd's CRI", .enabled(if: ContainerdCRI.available, ContainerdCRI.skipReason))
    func kubernetes() throws {
        let node = try NetworkNamespace()
        defer { node.delete() }
        try Self.scenario(try ContainerdCRI(in: node))
    }

    @Test("libvirt", .enabled(if: LibvirtHost.available, LibvirtHost.skipReason))
    func libvirt() throws {
        let host = try NetworkNamespace()
        defer { host.delete() }
        try Self.scenario(try LibvirtHost(in: host))
    }

    /// a and b run; a is removed; c starts, on a's host-side name where the runtime hands names
    /// over; b restarts; a new owner runs under a's name. Each owner's figures are its NIC's
    /// own counters summed over its lifetimes, exactly, and no host-side name keeps a byte.
    static func scenario(_ runtime: some ContainerRuntime) throws {
        defer { runtime.destroy() }
        let daemon = try DaemonProcess(namespace: runtime.namespace, config: "interval = 3600\n")
        defer { _ = try? daemon.stop(SIGKILL) }
        runtime.prepare(daemon)
        try daemon.startAsTheUnit()
        var hostSides: Set<String> = []
        func side(_ label: String) throws -> String {
            let name = try runtime.hostSide(of: label)
            hostSides.insert(name)
            return name
        }

        try runtime.run("a")
        try runtime.run("b")
        let aliasA = try side("a")
        _ = try side("b")
        try runtime.send("a", bytes: 20_000)
        try runtime.send("b", bytes: 10_000)
        // An LXC container's namespace goes with it, its end inside: what it sent after the
        // last sample is not counted (docs/NAMESPACES.md). Frozen and sampled first, nothing is.
        try runtime.freeze("a")
        let a1 = try runtime.counters(of: "a")
        #expect(a1.rx + a1.tx > 20_000, "a's NIC carried the test's bytes: \(a1)")
        _ = try daemon.figuresAfterSample()
        try runtime.remove("a")

        try runtime.handOverHostSideName(of: "a", to: "c")
        try runtime.run("c")
        if runtime.reusesHostSideNames {
            #expect(try side("c") == aliasA, "c took over a's host-side name")
        } else {
            _ = try side("c")
        }
        try runtime.send("c", bytes: 10_000)

        try runtime.freeze("b")
        let b1 = try runtime.counters(of: "b")
        _ = try daemon.figuresAfterSample()
        try runtime.restart("b")
        _ = try side("b")
        try runtime.send("b", bytes: 5_000)

        // The next owner of a's name: a new container or machine, the same subject.
        try runtime.run("a")
        _ = try side("a")
        try runtime.send("a", bytes: 8_000)
        for label in ["a", "b", "c"] { try runtime.freeze(label) }
        let a2 = try runtime.counters(of: "a"), b2 = try runtime.counters(of: "b"), c1 = try runtime.counters(of: "c")

        let figures = try daemon.figuresAfterSample()
        func counted(_ label: String) throws -> (rx: UInt64?, tx: UInt64?) {
            let entry = try #require(figures[runtime.subject(label)], "\(label) not listed: \(figures.keys.sorted())")
            let owner = entry["owner"] as? [String: Any]
            #expect(owner?["kind"] as? String == runtime.kind, "\(entry)")
            let labels = entry["labels"] as? [String] ?? []
            #expect(labels.contains("host-side-veth") || labels.contains("host-side-tap"), "\(labels)")
            #expect(!labels.contains("tunnel-double-counted") && entry["class"] as? String == "virtual", "\(entry)")
            return (entry.int("rx_bytes"), entry.int("tx_bytes"))
        }
        let a = try counted("a"), b = try counted("b"), c = try counted("c")
        #expect(a.rx == a1.rx + a2.rx && a.tx == a1.tx + a2.tx, "a: \(a) vs \(a1) + \(a2)")
        #expect(b.rx == b1.rx + b2.rx && b.tx == b1.tx + b2.tx, "b: \(b) vs \(b1) + \(b2)")
        #expect(c.rx == c1.rx && c.tx == c1.tx, "c: \(c) vs \(c1)")
        let own = figures.filter { hostSides.contains($0.key) || $0.key.hasPrefix("netns:") }
        #expect(own.isEmpty, "host-side or namespace names of their own: \(own.mapValues { ($0.int("rx_bytes"), $0.int("tx_bytes")) })")

        // Its events say whose: a's first start, and its return under the same name.
        let reply = try daemon.client().request(#"{"v":1,"cmd":"events","interface":"\#(runtime.subject("a"))"}"#)
        let details = (reply[path: "result.events"] as? [[String: Any]] ?? []).compactMap { $0["detail"] as? String }
        #expect(details.contains { $0.hasPrefix("\(runtime.kind) ") && $0.contains("appeared via \(aliasA)") }, "\(details)")
        #expect(details.contains { $0.contains("started again") }, "\(details)")

        // The store agrees once saved: all of a's time is both lifetimes.
        let usage = try daemon.client().request(#"{"v":1,"cmd":"usage","interface":"\#(runtime.subject("a"))","period":"total"}"#)
        let row = (usage[path: "result.rows"] as? [[String: Any]])?.first
        #expect(row?.int("rx_bytes") == a1.rx + a2.rx && row?.int("tx_bytes") == a1.tx + a2.tx, "\(usage)")

        // `ifmeter containers`: this month of each, whose, and up.
        let listed = try Command.check([CLIBinary.path, "--socket", daemon.socket, "containers", "--json"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [String: Any])
        let rows = Dictionary(((json["containers"] as? [[String: Any]]) ?? []).map { ($0["name"] as? String ?? "", $0) }) { first, _ in first }
        for (label, truth) in [("b", (b1.rx + b2.rx, b1.tx + b2.tx)), ("c", (c1.rx, c1.tx))] {
            let row = try #require(rows[runtime.subject(label)], "\(label) not in ifmeter containers: \(rows.keys.sorted())")
            let month = row["this_month"] as? [String: Any]
            #expect(month?.int("rx_bytes") == truth.0 && month?.int("tx_bytes") == truth.1, "\(row)")
            #expect((row["owner"] as? [String: Any])?["kind"] as? String == runtime.kind && row["state"] as? String == "up", "\(row)")
        }

        // The same figures in /metrics, with the owner's label.
        let metrics = try Command.check([CLIBinary.path, "--socket", daemon.socket, "metrics"])
        let line = metrics.split(separator: "\n").first {
            $0.hasPrefix("ifmeter_interface_transmit_bytes_total{interface=\"\(runtime.subject("a"))\",class=\"virtual\",")
        }
        #expect(line.map { $0.hasSuffix(" \(a1.tx + a2.tx)") } == true, "\(String(describing: line))")
    }
}
