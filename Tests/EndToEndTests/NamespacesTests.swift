import Foundation
import IfMeterTestSupport
import Testing

/// Host-side veths into a bound namespace and into a systemd-nspawn machine, and a thousand
/// namespaces churned, through the real daemon (docs/NAMESPACES.md).
@Suite("Namespaces and machines", .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason), .serialized, .ownThread, .timeLimit(.minutes(10)))
final class NamespacesTests {
    let host: NetworkNamespace
    let daemon: DaemonProcess

    init() throws {
        host = try NetworkNamespace()
        daemon = try DaemonProcess(namespace: host, config: "interval = 3600\nmetrics_keep_absent = 0\nattribute_owners = all\n")
    }

    deinit {
        _ = try? daemon.stop(SIGKILL)
        host.delete()
    }

    func request(_ line: String) throws -> [String: Any] {
        let reply = try daemon.client().request(line)
        return try #require(reply["result"] as? [String: Any], "\(reply)")
    }

    /// The daemon's figures, after a sample unless `sampling` is false (then only what link
    /// events have told it since its last sample).
    func interfaces(sampling: Bool = true) throws -> [String: [String: Any]] {
        if sampling { _ = try request(#"{"v":1,"cmd":"sample"}"#) }
        let list = try #require(try request(#"{"v":1,"cmd":"interfaces"}"#)["interfaces"] as? [[String: Any]])
        return Dictionary(list.map { ($0["name"] as? String ?? "", $0) }) { first, _ in first }
    }

    func waitUntilAbsent(_ subject: String, sampling: Bool = true) throws {
        let deadline = Date().addingTimeInterval(60)
        while try interfaces(sampling: sampling)[subject]?["operstate"] as? String != "absent" {
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

    @Test("a veth into a bound namespace is netns:NAME, exact to the last frame after the namespace is deleted; an nspawn machine's ve-NAME is container:NAME")
    func boundNamespaceAndMachine() throws {
        try daemon.start()
        let blue = try NetworkNamespace()
        try host.ip("link", "add", "hb", "type", "veth", "peer", "name", "eth0", "netns", blue.name)
        try host.ip("link", "set", "hb", "up")
        try blue.ip("link", "set", "eth0", "up")
        // Until the kernel has seen the carrier (operstate up), a veth's queue drops every frame.
        try host.waitForOperstate("hb", "up")
        try blue.waitForOperstate("eth0", "up")
        var figures = try interfaces()
        let subject = "netns:\(blue.name)"
        let entry = try #require(figures[subject], "\(figures.keys.sorted())")
        #expect((entry["owner"] as? [String: Any])?["kind"] as? String == "netns")
        #expect((entry["owner"] as? [String: Any])?["alias"] as? String == "hb")
        #expect(figures["hb"] == nil)

        // Sent from inside after the last sample: counted only through the peer's own counters,
        // which it reports as it is deleted (as Podman and Docker delete a container's end).
        try blue.sendFrames(40, from: "eth0")
        try host.sendFrames(25, from: "hb")
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
        try host.waitForOperstate("hg", "up")
        try green.waitForOperstate("eth0", "up")
        try green.sendFrames(10, from: "eth0")
        let sampled = try #require(try interfaces()["netns:\(green.name)"])
        try green.sendFrames(20, from: "eth0")
        try host.sendFrames(5, from: "hg")
        let greenInside = (rx: try green.sysfsCounter("eth0", "rx_bytes"), tx: try green.sysfsCounter("eth0", "tx_bytes"))
        // `ip netns delete` returns before the kernel tears the namespace down (its cleanup is
        // queued work); a sample in between still reads the host end with its peer attached and
        // counts everything, so the wait asks without sampling: only the deletion's events speak.
        green.delete()
        try waitUntilAbsent("netns:\(green.name)", sampling: false)
        let greenGone = try #require(try interfaces(sampling: false)["netns:\(green.name)"])
        #expect(greenGone.int("rx_bytes") == greenInside.rx, "\(greenGone) vs \(greenInside)")
        #expect(greenInside.tx > (sampled.int("tx_bytes") ?? 0))
        #expect(greenGone.int("tx_bytes") == sampled.int("tx_bytes"),
                "sent since the sample: sampled \(sampled.int("tx_bytes") ?? 0), inside \(greenInside.tx), counted \(greenGone.int("tx_bytes") ?? 0)")

        guard NspawnMachine.available else { return }
        let machineName = "ifmt\(getpid() % 100000)"
        let machine = try NspawnMachine(name: machineName, in: host)
        let hostSide = String(("ve-" + machineName).prefix(15))
        try host.ip("link", "set", hostSide, "up")
        let payload = try #require(machine.payload)
        _ = try Command.check(["nsenter", "-t", String(payload), "-n", "ip", "link", "set", "host0", "up"])
        // Until the kernel has seen the carrier (operstate up), a veth's queue drops every frame.
        try host.waitForOperstate(hostSide, "up")
        try host.sendFrames(30, from: hostSide)
        // host0 has IPv6 (the machine's namespace is nspawn's): its reports and solicitations
        // would move the counters between the sample and the read.
        try host.exec(EgressDrop.command(hostSide))
        _ = try Command.check(["nsenter", "-t", String(payload), "-n"] + EgressDrop.command("host0"))
        figures = try interfaces()
        let box = try #require(figures["container:\(machineName)"], "\(figures.keys.sorted())")
        #expect((box["owner"] as? [String: Any])?["kind"] as? String == "nspawn")
        let host0 = try counters("host0", inNamespaceOf: payload)
        #expect(host0.rx >= 30 * 100)
        #expect(box.int("rx_bytes") == host0.rx && box.int("tx_bytes") == host0.tx, "\(box) vs \(host0)")
    }

    /// The own socket and the peers socket are read one after the other (docs/NAMESPACES.md,
    /// "Two sockets"): several ends deleted while the daemon reads nothing come back in one
    /// read, each host end's going down merged after its end's deletion.
    @Test("three namespaces' ends deleted while the daemon is stopped, read in one go: each exact to the last frame")
    func endsDeletedTogether() throws {
        try daemon.start()
        let namespaces = try (0..<3).map { _ in try NetworkNamespace() }
        for (index, namespace) in namespaces.enumerated() {
            try host.ip("link", "add", "ht\(index)", "type", "veth", "peer", "name", "eth0", "netns", namespace.name)
            try host.ip("link", "set", "ht\(index)", "up")
            try namespace.ip("link", "set", "eth0", "up")
            try host.waitForOperstate("ht\(index)", "up")
            try namespace.waitForOperstate("eth0", "up")
        }
        let before = try interfaces()
        for namespace in namespaces { #expect(before["netns:\(namespace.name)"] != nil, "\(before.keys.sorted())") }
        var inside: [(rx: UInt64, tx: UInt64)] = []
        for (index, namespace) in namespaces.enumerated() {
            try namespace.sendFrames(30 + 10 * index, from: "eth0")
            inside.append((try namespace.sysfsCounter("eth0", "rx_bytes"), try namespace.sysfsCounter("eth0", "tx_bytes")))
        }
        kill(daemon.pid, SIGSTOP)
        for namespace in namespaces { try namespace.ip("link", "delete", "eth0") }
        kill(daemon.pid, SIGCONT)
        for namespace in namespaces { try waitUntilAbsent("netns:\(namespace.name)") }
        let after = try interfaces()
        for (index, namespace) in namespaces.enumerated() {
            let gone = try #require(after["netns:\(namespace.name)"])
            #expect(inside[index].tx >= UInt64(30 + 10 * index) * 100)
            #expect(gone.int("rx_bytes") == inside[index].rx && gone.int("tx_bytes") == inside[index].tx,
                    "netns \(index): \(gone) vs \(inside[index])")
        }
    }

    /// The daemon's anonymous memory (`Pss_Anon` of smaps_rollup), in bytes.
    func anonymousMemory() throws -> Int {
        let rollup = try String(contentsOfFile: "/proc/\(daemon.pid)/smaps_rollup", encoding: .utf8)
        let line = try #require(rollup.split(separator: "\n").first { $0.hasPrefix("Pss_Anon:") })
        return try #require(Int(line.split(separator: " ").dropFirst().first ?? "")) * 1024
    }

    @Test("1000 namespaces churned: 1000 subjects in the store and no veth names, no series of absent ones in /metrics, memory within the stated bound")
    func churn() throws {
        try daemon.start()
        _ = try interfaces()
        let before = try anonymousMemory()
        let prefix = "ifmt-\(getpid())-churn"
        var subjects: Set<String> = []
        defer { _ = try? Command.run(["sh", "-c", "ip netns list | cut -d' ' -f1 | grep '^\(prefix)' | sed 's/^/netns delete /' | ip -batch -"]) }
        for round in 0..<10 {
            let names = (0..<100).map { "\(prefix)\(round * 100 + $0)" }
            try Command.check(["ip", "-batch", "-"], stdin: names.map { "netns add \($0)\n" }.joined())
            try host.ipBatch(names.enumerated().map { "link add hc\(round * 100 + $0.offset) type veth peer name eth0 netns \($0.element)" })
            let present = try interfaces()
            for name in names {
                #expect(present["netns:\(name)"]?["operstate"] != nil, "netns:\(name) not attributed within one sample")
            }
            try Command.check(["ip", "-batch", "-"], stdin: names.map { "netns delete \($0)\n" }.joined())
            for name in names { subjects.insert("netns:\(name)") }
            let deadline = Date().addingTimeInterval(120)
            while try interfaces().filter({ subjects.contains($0.key) && $0.value["operstate"] as? String != "absent" }).count > 0 {
                guard Date() < deadline else { throw CancellationError() }
                usleep(50_000)
            }
        }
        let owners = try request(#"{"v":1,"cmd":"query","select":"owners"}"#)
        let names = Set((owners["subjects"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String })
        #expect(names == subjects, "\(names.count) subjects in the store for \(subjects.count) namespaces")
        let every = try request(#"{"v":1,"cmd":"query","select":"every"}"#)
        let veths = (every["subjects"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }.filter { $0.hasPrefix("hc") }
        #expect(veths.isEmpty, "veth names kept as histories of their own: \(veths.prefix(5))")
        let metrics = try Command.run([CLIBinary.path, "--socket", daemon.socket, "metrics"]).stdout
        #expect(!metrics.contains("netns=\"\(prefix)"), "absent namespaces' series stay past metrics_keep_absent = 0")
        // The stated bound (docs/NAMESPACES.md): an absent subject costs the daemon under 3 KiB
        // (its record, total and first sight, and what the allocator keeps around them).
        let grown = try anonymousMemory() - before
        #expect(grown < 1000 * 3072, "anonymous memory grew \(grown) bytes for 1000 absent subjects")
    }

    @Test("retention_owners: a namespace gone longer than it is forgotten at a save, history and all; one present stays")
    func ownerRetention() throws {
        let namespace = try NetworkNamespace()
        let daemon = try DaemonProcess(namespace: namespace, config: "interval = 3600\nsave_interval = 1\nfold_interval = 0\nretention_owners = 1\nattribute_owners = all\n")
        defer { _ = try? daemon.stop(SIGKILL) }
        try daemon.start()
        let gone = try NetworkNamespace()
        let stays = try NetworkNamespace()
        try namespace.ip("link", "add", "hg", "type", "veth", "peer", "name", "eth0", "netns", gone.name)
        try namespace.ip("link", "add", "hs", "type", "veth", "peer", "name", "eth0", "netns", stays.name)
        func owners() throws -> Set<String> {
            _ = try daemon.client().request(#"{"v":1,"cmd":"sample"}"#)
            let reply = try daemon.client().request(#"{"v":1,"cmd":"query","select":"owners"}"#)
            return Set((reply[path: "result.subjects"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String })
        }
        #expect(try owners() == ["netns:\(gone.name)", "netns:\(stays.name)"])
        gone.delete()
        let deadline = Date().addingTimeInterval(60)
        while try owners().contains("netns:\(gone.name)") {
            guard Date() < deadline else {
                Issue.record("netns:\(gone.name) not forgotten within 60 s")
                return
            }
            usleep(50_000)
        }
        #expect(try owners() == ["netns:\(stays.name)"])
        let usage = try daemon.client().request(#"{"v":1,"cmd":"usage","interface":"netns:\#(gone.name)","period":"total"}"#)
        #expect(usage[path: "error.code"] as? String == "unknown_interface", "\(usage)")
        #expect(daemon.stderrText.contains("gone longer than retention_owners"))
    }

    @Test("meter_inside: a tun inside a namespace is netns:NAME/IFACE, counted from inside, its deletion banked; the host's links as before")
    func insideNamespace() throws {
        let vpn = try NetworkNamespace()
        let daemon = try DaemonProcess(namespace: host, config: "interval = 3600\nmeter_inside = \(vpn.name), no-such-namespace-here\n")
        defer { _ = try? daemon.stop(SIGKILL) }
        try daemon.start()
        #expect(daemon.stderrText.contains("namespace no-such-namespace-here is not metered"))
        let tun = try vpn.inside { try TunDevice(name: "tunv0") }
        func figures() throws -> [String: [String: Any]] {
            _ = try daemon.client().request(#"{"v":1,"cmd":"sample"}"#)
            let list = try daemon.client().request(#"{"v":1,"cmd":"interfaces"}"#)[path: "result.interfaces"] as? [[String: Any]] ?? []
            return Dictionary(list.map { ($0["name"] as? String ?? "", $0) }) { first, _ in first }
        }
        let subject = "netns:\(vpn.name)/tunv0"
        let seen = try figures()
        var entry = try #require(seen[subject], "\(seen.keys.sorted())")
        #expect(entry["class"] as? String == "tunnel" && entry["kind"] as? String == "tun")
        #expect((entry["labels"] as? [String])?.contains("host-side-veth") == false)
        #expect(seen["lo"] != nil, "the host's own links are metered as before")

        // Traffic, then the tun deleted before the next sample: counted from its delete message.
        try TunTraffic.push(through: tun, in: vpn, written: 12, writtenPayload: 500, read: 7, readPayload: 300)
        let final = (rx: try vpn.sysfsCounter("tunv0", "rx_bytes"), tx: try vpn.sysfsCounter("tunv0", "tx_bytes"))
        #expect(final.rx == 12 * 528 && final.tx == 7 * 328)
        tun.close()
        let deadline = Date().addingTimeInterval(60)
        repeat {
            entry = try figures()[subject] ?? [:]
            if entry["operstate"] as? String == "absent" { break }
            usleep(20_000)
        } while Date() < deadline
        #expect(entry["operstate"] as? String == "absent")
        #expect(entry.int("rx_bytes") == final.rx && entry.int("tx_bytes") == final.tx, "deleted between samples: \(entry) vs \(final)")
        let metrics = try Command.run([CLIBinary.path, "--socket", daemon.socket, "metrics"]).stdout
        #expect(metrics.contains("ifmeter_interface_receive_bytes_total{interface=\"\(subject)\",class=\"tunnel\",netns=\"\(vpn.name)\"} \(final.rx)\n"))
    }
}
