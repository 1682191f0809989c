import Foundation
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A user who makes cgroups at will (docs/APPS.md, "Hostile users"; docs/SECURITY.md), against
/// the real binaries: the map fills, and nobody's counts are pushed out or lost.
@Suite("Applications under a flood of cgroups", .enabled(if: AppsHost.available, AppsHost.skipReason), .serialized, .ownThread,
       .timeLimit(.minutes(5)))
final class AppsHostileTests {
    typealias Expected = AppsTests.Expected
    let helper = AppsTests()

    /// One process that, for each of `count` cgroups it makes under application `name`'s,
    /// moves itself there, opens a UDP socket in `left` and sends one datagram of `payload`
    /// bytes to a peer socket in `right`; then, with `moves`, opens one socket in `name`'s
    /// cgroup and sends `moves` datagrams, moving itself to `movedTo`'s cgroup before each.
    func flood(_ host: AppsHost, from name: String, cgroups count: Int, payload: Int, moves: Int = 0,
               movedTo: String? = nil) throws {
        let script = AppsHost.scriptPreamble + """
            peer_ns, own_ns, base, address, count, payload, moves, moved_to = sys.argv[1:9]
            enter(peer_ns)
            peer = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            peer.bind((address, 0))
            peer.settimeout(30)
            port = peer.getsockname()[1]
            enter(own_ns)
            data = b"\\x5a" * int(payload)
            for n in range(int(count)):
                path = "%s/c%d" % (base, n)
                os.mkdir(path)
                join(path)
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                s.sendto(data, (address, port))
                s.close()
                if len(peer.recv(65536)) != len(data): sys.exit("a datagram arrived short")
            join(base)
            if int(moves):
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                for n in range(int(moves)):
                    join(moved_to if n % 2 == 0 else base)
                    s.sendto(data, (address, port))
                    if len(peer.recv(65536)) != len(data): sys.exit("a datagram arrived short")
                join(base)
            """
        try Command.check([AppsHost.python, "-c", script, "/run/netns/\(host.right.name)", "/run/netns/\(host.left.name)",
                           try #require(host.cgroupPath(name)), host.pair.rightAddress, String(count), String(payload),
                           String(moves), movedTo.flatMap(host.cgroupPath) ?? "-"], timeout: 120)
    }

    @Test("1500 cgroups against a 1024-entry map: the rest is remainder:va#unnamed (labelled), the victim keeps counting exactly, a socket moved between cgroups counts where it was made, and the sums meet")
    func mapFull() throws {
        let host = try AppsHost(applications: ["victim", "flood", "mover"], subnet: 161)
        let daemon = try DaemonProcess(namespace: host.left, config: "interval = 3600\napps_pins = \(host.pins)\napps_map_entries = 1024\n")
        daemon.withinNamespace = AppsHost.mountingCgroup2
        defer { _ = try? daemon.stop(SIGKILL); host.close() }
        try host.attach(config: daemon.config)
        try daemon.start()
        // An entry is a cgroup's on a link in one scope (docs/SCOPES.md): until the daemon has
        // written the local prefixes the victim's packets are unknown, after it local, a second
        // entry, which a full map would count as unnamed. Its traffic starts once they are.
        _ = try eventually("the local prefixes written", seconds: 30) { () -> Bool? in
            try helper.request(daemon, #"{"v":1,"cmd":"status"}"#)[path: "scopes.prefixes"] != nil ? true : nil
        }
        try host.exchange(from: "victim", count: 5, payload: 100, answer: 100)
        _ = try helper.awaitApps(daemon, [host.subject("victim"): Expected.exchange(count: 5, payload: 100, answer: 100)])

        // The flood: 1500 cgroups, a datagram each, then 40 datagrams of one socket made in
        // the flood's cgroup while its process moves to the mover's and back, each one.
        try flood(host, from: "flood", cgroups: 1500, payload: 10, moves: 40, movedTo: "mover")
        try host.exchange(from: "victim", count: 3, payload: 100, answer: 100)
        let victim = Expected.exchange(count: 8, payload: 100, answer: 100)
        let seen = try helper.awaitApps(daemon, [host.subject("victim"): victim])
        let status = try helper.request(daemon, #"{"v":1,"cmd":"status"}"#)
        let detail = (status["apps"] as? [String: Any])?["detail"] as? String ?? ""
        #expect(detail.contains("of 1024 entries"), "\(detail)")

        let flooded = Expected(seen[host.subject("flood")]?["all_time"] as? [String: Any])
        let unnamed = Expected(seen["remainder:va#unnamed"]?["all_time"] as? [String: Any])
        // Every flood datagram is counted once: under its cgroup's name, or as va's unnamed.
        #expect(flooded.txPackets + unnamed.txPackets == 1540, "flood \(flooded), unnamed \(unnamed)")
        #expect(flooded.txBytes + unnamed.txBytes == 1540 * 52, "flood \(flooded), unnamed \(unnamed)")
        #expect(unnamed.txPackets > 0, "the map was full: some went unnamed")
        #expect((seen["remainder:va#unnamed"]?["labels"] as? [String] ?? []).contains("unnamed-apps"), "\(seen["remainder:va#unnamed"] ?? [:])")
        // Moving the process moved no socket: nothing is the mover's.
        #expect(seen[host.subject("mover")] == nil, "\(seen[host.subject("mover")] ?? [:])")

        // Applications and both remainders are the link, exactly.
        let link = Expected(try #require(try daemon.figuresAfterSample()["va"]))
        let sum = seen.filter { $0.key.hasPrefix("service:") || $0.key.hasPrefix("remainder:va") }.values
            .reduce(Expected()) { $0 + Expected($1["all_time"] as? [String: Any]) }
        #expect(sum == link, "applications and remainders \(sum); va \(link)")
    }

    @Test("a socket whose cgroup its user removed before the daemon read its name still counts as that user's, by the cgroup's ancestor")
    func removedBeforeNamed() throws {
        let host = try AppsHost(applications: ["outer"], subnet: 162)
        let daemon = try DaemonProcess(namespace: host.left, config: "interval = 3600\napps_pins = \(host.pins)\n")
        daemon.withinNamespace = AppsHost.mountingCgroup2
        defer { _ = try? daemon.stop(SIGKILL); host.close() }
        try host.attach(config: daemon.config)
        try daemon.start()
        // Two levels below the root, as user-UID.slice is; the socket's own cgroup a level below.
        let outer = try #require(host.cgroupPath("outer"))
        let script = AppsHost.scriptPreamble + """
            peer_ns, own_ns, outer, address = sys.argv[1:5]
            enter(peer_ns)
            peer = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            peer.bind((address, 0))
            peer.settimeout(30)
            port = peer.getsockname()[1]
            enter(own_ns)
            os.mkdir(outer + "/user")
            os.mkdir(outer + "/user/hidden")
            join(outer + "/user/hidden")
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            join(outer + "/user")
            os.rmdir(outer + "/user/hidden")
            for _ in range(25):
                s.sendto(b"\\x5a" * 100, (address, port))
                if len(peer.recv(65536)) != 100: sys.exit("a datagram arrived short")
            """
        try Command.check([AppsHost.python, "-c", script, "/run/netns/\(host.right.name)", "/run/netns/\(host.left.name)", outer,
                           host.pair.rightAddress], timeout: 60)
        let seen = try helper.awaitApps(daemon, [host.subject("outer"): Expected(txBytes: 25 * 142, txPackets: 25)])
        #expect(seen["remainder:va#unnamed"] == nil, "\(seen.keys.sorted())")
    }
}
