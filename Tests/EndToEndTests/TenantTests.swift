import Foundation
import IfMeterTestSupport
import Testing

/// What root inside a namespace with `CAP_NET_ADMIN` there can try against the figures of its
/// own subject and of others, run against the real daemon (docs/SECURITY.md, "Tenants"). Each
/// attack is asserted to change nothing but what the attacker's own link really carried.
@Suite("Hostile tenants", .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason), .serialized, .ownThread, .timeLimit(.minutes(10)))
final class TenantTests {
    let host: NetworkNamespace
    let daemon: DaemonProcess

    init() throws {
        host = try NetworkNamespace()
        daemon = try DaemonProcess(namespace: host, config: "interval = 3600\nattribute_owners = all\n")
    }

    deinit {
        _ = try? daemon.stop(SIGKILL)
        host.delete()
    }

    /// A link's field in `ip -j link show` inside `namespace`.
    func linkField(_ field: String, of interface: String, in namespace: NetworkNamespace) throws -> Int? {
        let text = try namespace.ip("-j", "link", "show", interface)
        let links = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])
        return (links.first?[field] as? NSNumber)?.intValue
    }

    func up(_ hostEnd: String, _ peer: String, in namespace: NetworkNamespace) throws {
        try host.ip("link", "set", hostEnd, "up")
        try namespace.ip("link", "set", peer, "up")
        // Until the kernel has seen the carrier (operstate up), a veth's queue drops every frame.
        try host.waitForOperstate(hostEnd, "up")
        try namespace.waitForOperstate(peer, "up")
    }

    @Test("nsid reuse: a tenant that moves its end away and lets its namespace die never has the next namespace's link counted as its own")
    func nsidReuse() throws {
        try daemon.start()
        let evil = try NetworkNamespace()
        let hideout = try NetworkNamespace()
        try host.ip("link", "add", "hevil", "type", "veth", "peer", "name", "eth0", "netns", evil.name)
        #expect(try daemon.figuresAfterSample()["netns:\(evil.name)"] != nil)
        let number = try #require(try linkField("link_netnsid", of: "hevil", in: host))

        try evil.ip("link", "set", "eth0", "netns", hideout.name)
        _ = try daemon.figuresAfterSample()
        evil.delete()
        // The kernel deletes the number in the namespace's cleanup, queued after `ip netns delete`.
        let deadline = Date().addingTimeInterval(60)
        while try host.ip("netns", "list-id").split(separator: "\n").contains(where: { $0.hasPrefix("nsid \(number) ") }) {
            guard Date() < deadline else { Issue.record("nsid \(number) still listed after 60 s"); return }
            usleep(20_000)
        }

        let victim = try NetworkNamespace()
        try host.ip("link", "add", "hvictim", "type", "veth", "peer", "name", "eth0", "netns", victim.name)
        try #require(try linkField("link_netnsid", of: "hvictim", in: host) == number, "the kernel gives the freed number to the next namespace")
        try up("hvictim", "eth0", in: victim)
        try victim.sendFrames(50, from: "eth0")
        let figures = try daemon.figuresAfterSample()
        let victimFigures = try #require(figures["netns:\(victim.name)"], "\(figures.keys.sorted())")
        #expect((victimFigures["owner"] as? [String: Any])?["alias"] as? String == "hvictim")
        #expect((victimFigures.int("tx_bytes") ?? 0) >= 50 * 100)
        #expect(figures.keys.filter { $0.hasPrefix("netns:\(evil.name)") } == ["netns:\(evil.name)"], "\(figures.keys.sorted())")
        let evilFigures = try #require(figures["netns:\(evil.name)"])
        let heard = try host.sysfsCounter("hevil", "rx_bytes")
        #expect(evilFigures.int("tx_bytes") == heard, "\(evilFigures)")
    }

    @Test("an impostor at the index of a tenant's moved end: its traffic, MTU changes and deletion move nothing, the tenant's figure is its host end's to the byte")
    func impostorAtTheEndsIndex() throws {
        try daemon.start()
        let evil = try NetworkNamespace()
        let hideout = try NetworkNamespace()
        try host.ip("link", "add", "hevil", "type", "veth", "peer", "name", "eth0", "netns", evil.name)
        try up("hevil", "eth0", in: evil)
        try evil.sendFrames(20, from: "eth0")
        try host.sendFrames(10, from: "hevil")
        let index = try #require(try linkField("ifindex", of: "eth0", in: evil))
        #expect(try daemon.figuresAfterSample()["netns:\(evil.name)"] != nil)

        // The host end sends nothing more, and the moved end goes down as it leaves.
        try host.exec(EgressDrop.command("hevil"))
        try evil.ip("link", "set", "eth0", "netns", hideout.name)
        _ = try daemon.figuresAfterSample()
        try evil.ip("link", "add", "d0", "index", String(index), "type", "veth", "peer", "name", "d1")
        try evil.ip("link", "set", "d1", "up")
        try evil.ip("link", "set", "d0", "up")
        try evil.waitForOperstate("d0", "up")
        try evil.sendFrames(300, from: "d0")
        try evil.sendFrames(300, from: "d1")
        for mtu in 1400..<1405 { try evil.ip("link", "set", "d0", "mtu", String(mtu)) }
        _ = try daemon.figuresAfterSample()
        let final = (rx: try host.sysfsCounter("hevil", "rx_bytes"), tx: try host.sysfsCounter("hevil", "tx_bytes"))
        try evil.ip("link", "delete", "d0")
        try hideout.ip("link", "delete", "eth0")

        let deadline = Date().addingTimeInterval(60)
        var gone = try #require(try daemon.figuresAfterSample()["netns:\(evil.name)"])
        while gone["operstate"] as? String != "absent" {
            guard Date() < deadline else { Issue.record("netns:\(evil.name) still present after 60 s"); return }
            usleep(20_000)
            gone = try #require(try daemon.figuresAfterSample()["netns:\(evil.name)"])
        }
        #expect(final.rx >= 20 * 100 && final.tx >= 10 * 100)
        #expect(gone.int("tx_bytes") == final.rx && gone.int("rx_bytes") == final.tx, "\(gone) vs the host end's \(final)")
        let resets = try daemon.client().request(#"{"v":1,"cmd":"events","kind":"reset"}"#)
        #expect((resets[path: "result.events"] as? [Any])?.isEmpty == true, "\(resets)")
    }

    @Test("an impostor behind a down end moved away silently: brought to the end's index, filled and deleted, then the end deleted where it went; the tenant's figure is its host end's to the byte")
    func impostorBehindADownEnd() throws {
        try daemon.start()
        let evil = try NetworkNamespace()
        let hideout = try NetworkNamespace()
        try host.ip("link", "add", "hevil", "type", "veth", "peer", "name", "eth0", "netns", evil.name)
        try up("hevil", "eth0", in: evil)
        try evil.sendFrames(20, from: "eth0")
        let index = try #require(try linkField("ifindex", of: "eth0", in: evil))
        #expect(try daemon.figuresAfterSample()["netns:\(evil.name)"] != nil)
        // Prepared at leisure in the tenant's other namespace: a veth at the end's index, filled.
        try hideout.ip("link", "add", "z", "index", String(index), "type", "veth", "peer", "name", "zz", "index", String(index + 40))
        try hideout.ip("link", "set", "zz", "up")
        try hideout.ip("link", "set", "z", "up")
        try hideout.waitForOperstate("z", "up")
        try hideout.sendFrames(3000, from: "z")

        // Down first: moving a down end makes the kernel say nothing about the host end.
        try host.exec(EgressDrop.command("hevil"))
        try evil.ip("link", "set", "eth0", "down")
        try host.waitForOperstate("hevil", "down")
        let final = (rx: try host.sysfsCounter("hevil", "rx_bytes"), tx: try host.sysfsCounter("hevil", "tx_bytes"))
        try evil.ip("link", "set", "eth0", "netns", hideout.name)
        try hideout.ip("link", "set", "z", "netns", evil.name)
        #expect(try linkField("ifindex", of: "z", in: evil) == index)
        try evil.ip("link", "delete", "z")
        try hideout.ip("link", "delete", "eth0")

        let deadline = Date().addingTimeInterval(60)
        var gone = try #require(try daemon.figuresAfterSample()["netns:\(evil.name)"])
        while gone["operstate"] as? String != "absent" {
            guard Date() < deadline else { Issue.record("netns:\(evil.name) still present after 60 s"); return }
            usleep(20_000)
            gone = try #require(try daemon.figuresAfterSample()["netns:\(evil.name)"])
        }
        #expect(final.rx >= 20 * 100)
        #expect(gone.int("tx_bytes") == final.rx && gone.int("rx_bytes") == final.tx, "\(gone) vs the host end's \(final)")
    }

    @Test("a tenant's forged multicast flood to its namespace's link group, against the daemon as its unit runs it: only the peers socket overflows; the host's links and the quiet tenant carry no events-lost, the owner removed meanwhile does",
          .enabled(if: UnitResources.available, "needs root and the memory and pids cgroups, to run the daemon as its unit does"))
    func forgedMulticastFlood() throws {
        // As the unit runs it: nobody with its two capabilities (its own sockets' buffers capped
        // at net.core.rmem_max), in cgroups with its MemoryMax= and TasksMax=.
        let resources = try UnitResources(name: "tenant-flood")
        let daemon = try DaemonProcess(namespace: host, config: "interval = 3600\nattribute_owners = all\n")
        defer { _ = try? daemon.stop(SIGKILL) }
        try daemon.startAsTheUnit(resources: resources)
        let evil = try NetworkNamespace()
        let quiet = try NetworkNamespace()
        let victim = try NetworkNamespace()
        try host.ip("link", "add", "hevil", "type", "veth", "peer", "name", "eth0", "netns", evil.name)
        try host.ip("link", "add", "hquiet", "type", "veth", "peer", "name", "eth0", "netns", quiet.name)
        try host.ip("link", "add", "hvictim", "type", "veth", "peer", "name", "eth0", "netns", victim.name)
        try host.ip("link", "set", "lo", "up")
        try up("hquiet", "eth0", in: quiet)
        let before = try daemon.figuresAfterSample()
        for name in [evil, quiet, victim].map({ "netns:\($0.name)" }) { #expect(before[name] != nil, "\(before.keys.sorted())") }

        // Stopped, the daemon reads nothing: 39 MB of forged RTM_DELLINK datagrams fill the
        // peers socket past its buffer, then the host's links change and the victim's link goes.
        kill(daemon.pid, SIGSTOP)
        try evil.exec(["python3", "-c", """
            import socket, struct
            s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
            s.bind((0, 0))
            forged = struct.pack("=LHHLL", 65000, 17, 0, 0, 0) + struct.pack("=BxHiII", 0, 1, 2, 0, 0) + bytes(65000 - 32)
            for _ in range(600): s.sendto(forged, (0, 1))
            """])
        try host.ip("link", "add", "mark0", "type", "bridge")
        try host.ip("link", "delete", "hvictim")
        kill(daemon.pid, SIGCONT)
        _ = try host.exec(["python3", "-c", "import socket; socket.socket(2, 2).sendto(b'x' * 1000, ('127.0.0.1', 9))"])
        try quiet.sendFrames(20, from: "eth0")

        let figures = try daemon.figuresAfterSample()
        let status = try daemon.client().request(#"{"v":1,"cmd":"status"}"#)
        #expect(status.int("result.link_events.peers.losses") ?? 0 > 0, "the flood did not overflow the peers socket: \(status)")
        #expect(figures["mark0"] != nil, "the own socket lost the host's links: \(figures.keys.sorted())")
        let lost = try daemon.client().request(#"{"v":1,"cmd":"events","kind":"events-lost"}"#)
        let scopes = (lost[path: "result.events"] as? [[String: Any]] ?? []).map { $0["interface"] as? String }
        #expect(scopes == ["netns:\(victim.name)"], "\(lost)")
        func labels(_ name: String) -> [String] { figures[name]?["labels"] as? [String] ?? [] }
        for name in ["lo", "mark0", "netns:\(quiet.name)", "netns:\(evil.name)"] {
            #expect(figures[name] != nil && !labels(name).contains("events-lost"), "\(name): \(figures[name] ?? [:])")
        }
        #expect(labels("netns:\(victim.name)").contains("events-lost"), "\(figures["netns:\(victim.name)"] ?? [:])")
        #expect((figures["netns:\(quiet.name)"]?.int("tx_bytes") ?? 0) >= 20 * 100)
        #expect(resources.oomKills == 0)
    }

    @Test("meter_inside: root inside creating and deleting 300 veth pairs leaves meter_inside_names subjects, said once")
    func insideChurn() throws {
        let vpn = try NetworkNamespace()
        let daemon = try DaemonProcess(namespace: host, config: "interval = 3600\nmeter_inside = \(vpn.name)\nmeter_inside_names = 8\n")
        defer { _ = try? daemon.stop(SIGKILL) }
        try daemon.start()
        try vpn.ipBatch((0..<300).map { "link add c\($0) type veth peer name d\($0)" })
        _ = try daemon.client().request(#"{"v":1,"cmd":"sample"}"#)
        try vpn.ipBatch((0..<300).map { "link delete c\($0)" })
        // The deletions are heard once the daemon has nothing present of them.
        let deadline = Date().addingTimeInterval(60)
        var inside: [[String: Any]] = []
        repeat {
            _ = try daemon.client().request(#"{"v":1,"cmd":"sample"}"#)
            let list = try daemon.client().request(#"{"v":1,"cmd":"interfaces"}"#)[path: "result.interfaces"] as? [[String: Any]] ?? []
            inside = list.filter { ($0["name"] as? String)?.hasPrefix("netns:\(vpn.name)/") == true }
            if !inside.contains(where: { ($0["name"] as? String)?.hasPrefix("netns:\(vpn.name)/c") == true && $0["operstate"] as? String != "absent" }) { break }
            usleep(20_000)
        } while Date() < deadline
        let names = inside.compactMap { $0["name"] as? String }
        #expect(names.count == 8, "\(names)")
        #expect(names.contains("netns:\(vpn.name)/lo"))
        let every = try daemon.client().request(#"{"v":1,"cmd":"query","select":"every"}"#)
        let stored = (every[path: "result.subjects"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(stored.filter { $0.hasPrefix("netns:\(vpn.name)/") }.count == 8, "\(stored)")
        let said = daemon.stderrText.components(separatedBy: "meter_inside_names").count - 1
        #expect(said == 1, "said \(said) times: \(daemon.stderrText)")
    }
}
