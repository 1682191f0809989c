import Foundation
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// systemd's own stand-in for a socket unit, from the systemd package.
let socketActivate = ["/usr/bin/systemd-socket-activate", "/bin/systemd-socket-activate"]
    .first { FileManager.default.isExecutableFile(atPath: $0) }

/// Local and internet traffic through the real binaries (docs/SCOPES.md, #62): a LAN, a router
/// that NATs it and an "internet" (``ScopesHost``); on the router `ifmeterd --attach-apps`,
/// the attach helper as systemd runs it per connection (`ifmeterd-attach.socket`, `Accept=yes`,
/// here `systemd-socket-activate`), and the daemon as the unit runs it, unprivileged. Each
/// scope is asserted exactly against the datagrams sent, and the three against the kernel's
/// counters.
@Suite("Local and internet traffic end to end", .enabled(if: AppsHost.available, AppsHost.skipReason),
       .enabled(if: socketActivate != nil, "needs systemd-socket-activate (the systemd package)"),
       .serialized, .ownThread, .timeLimit(.minutes(8)))
final class ScopesTests {
    /// A subject's four counters.
    struct Figures: Equatable, CustomStringConvertible {
        var rxBytes: UInt64 = 0, txBytes: UInt64 = 0, rxPackets: UInt64 = 0, txPackets: UInt64 = 0

        init(rxBytes: UInt64 = 0, txBytes: UInt64 = 0, rxPackets: UInt64 = 0, txPackets: UInt64 = 0) {
            (self.rxBytes, self.txBytes, self.rxPackets, self.txPackets) = (rxBytes, txBytes, rxPackets, txPackets)
        }

        init(_ row: [String: Any]?) {
            func value(_ key: String) -> UInt64 { (row?[key] as? NSNumber)?.uint64Value ?? 0 }
            self.init(rxBytes: value("rx_bytes"), txBytes: value("tx_bytes"), rxPackets: value("rx_packets"), txPackets: value("tx_packets"))
        }

        /// `count` datagrams of `payload` bytes to `destination`, sent (`tx`) or received.
        static func datagrams(_ count: Int, _ payload: Int, to destination: String, tx: Bool) -> Figures {
            let bytes = UInt64(count) * ScopesHost.frameBytes(payload: payload, to: destination)
            return tx ? Figures(txBytes: bytes, txPackets: UInt64(count)) : Figures(rxBytes: bytes, rxPackets: UInt64(count))
        }

        static func + (a: Figures, b: Figures) -> Figures {
            Figures(rxBytes: a.rxBytes + b.rxBytes, txBytes: a.txBytes + b.txBytes, rxPackets: a.rxPackets + b.rxPackets,
                    txPackets: a.txPackets + b.txPackets)
        }

        static func - (a: Figures, b: Figures) -> Figures {
            Figures(rxBytes: a.rxBytes &- b.rxBytes, txBytes: a.txBytes &- b.txBytes, rxPackets: a.rxPackets &- b.rxPackets,
                    txPackets: a.txPackets &- b.txPackets)
        }

        var description: String { "rx \(rxBytes) B / \(rxPackets) p, tx \(txBytes) B / \(txPackets) p" }
    }

    /// The attach helper as `ifmeterd-attach.socket` (`Accept=yes`) and `ifmeterd-attach@.service`
    /// run it: `systemd-socket-activate --accept --inetd` in the router's namespace, as root,
    /// starting `ifmeterd --attach-link-stdin` for each connection. Stopped when released.
    final class AttachSocket {
        let path: String
        private let process = Process()

        /// Returns once the activator says it listens (its own "Listening on" line): the socket
        /// is there to connect to. With umask 0 the socket is the daemon's to connect to, as
        /// `SocketUser=ifmeter` makes it the unit's.
        init(_ host: ScopesHost, config: String, path: String) throws {
            self.path = path
            process.executableURL = URL(fileURLWithPath: try Command.resolve("ip"))
            process.arguments = ["netns", "exec", host.router.name, "/bin/sh", "-c", #"umask 0 && exec "$0" "$@""#,
                                 socketActivate!, "--accept", "--inetd", "-l", path,
                                 DaemonProcess.binary, "--attach-link-stdin", "--config", config]
            let said = Pipe()
            process.standardOutput = FileHandle.nullDevice
            process.standardError = said
            try process.run()
            var text = ""
            while !text.contains("Listening on") {
                let data = said.fileHandleForReading.availableData
                guard !data.isEmpty else {
                    throw CommandFailed(command: process.arguments ?? [], result: CommandResult(status: 1, stdout: "", stderr: text))
                }
                text += String(decoding: data, as: UTF8.self)
            }
        }

        // SIGKILL: started by Foundation's Process, the activator ignored SIGTERM, and each test
        // waited out the 30 s exit deadline. It holds nothing a kill could leave behind.
        deinit { process.end(SIGKILL) }
    }

    /// The router with its pins attached, the attach socket serving, and the daemon as the
    /// unit runs it, counting wan0 and lan0 as the Ethernet links they stand for.
    func setUp(_ host: ScopesHost, extraConfig: String = "") throws -> (DaemonProcess, AttachSocket) {
        let daemon = try DaemonProcess(namespace: host.router, config: """
            interval = 3600
            apps_pins = \(host.pins)
            classify = wan0 = ethernet
            classify = wan1 = ethernet
            classify = lan0 = ethernet
            \(extraConfig)
            """)
        daemon.withinNamespace = AppsHost.mountingCgroup2
        let config = try String(contentsOfFile: daemon.config, encoding: .utf8)
        try (config + "\nattach_socket = \(daemon.directory)/attach.sock\n").write(toFile: daemon.config, atomically: true, encoding: .utf8)
        try Command.check(["ip", "netns", "exec", host.router.name] + AppsHost.mountingCgroup2
            + [DaemonProcess.binary, "--attach-apps", "--config", daemon.config, "--apps-user", "nobody"])
        let socket = try AttachSocket(host, config: daemon.config, path: "\(daemon.directory)/attach.sock")
        try daemon.startAsTheUnit()
        return (daemon, socket)
    }

    /// What the daemon has recorded of scopes (`status`'s `scopes`), once `covered` holds every
    /// one of `links`.
    @discardableResult
    func awaitCovered(_ daemon: DaemonProcess, _ links: Set<String>) throws -> [String: Any] {
        var last: [String: Any] = [:]
        return try eventually("\(links.sorted()) covered", seconds: 60, seen: { "\(last)" }) { () -> [String: Any]? in
            _ = try daemon.client().request(#"{"v":1,"cmd":"sample"}"#)
            last = try daemon.client().request(#"{"v":1,"cmd":"status"}"#)[path: "result.scopes"] as? [String: Any] ?? [:]
            let covered = Set(last["covered"] as? [String] ?? [])
            return links.isSubset(of: covered) ? last : nil
        }
    }

    /// After a sample: each of `subjects`' all-time figures, and each of their scope subjects';
    /// a subject not counted yet is absent.
    func figures(_ daemon: DaemonProcess, _ subjects: [String]) throws -> [String: Figures] {
        _ = try daemon.client().request(#"{"v":1,"cmd":"sample"}"#)
        var out: [String: Figures] = [:]
        let names = subjects.map { "\"\($0)\"" }.joined(separator: ",")
        // One name at a time: a name not counted yet is `unknown_interface`, which ends a query.
        let requests = subjects.map { #"{"v":1,"cmd":"query","interfaces":["\#($0)"],"usage":[{"period":"total"}]}"# }
            + [#"{"v":1,"cmd":"query","interfaces":[\#(names)],"select":"scopes","usage":[{"period":"total"}]}"#]
        for request in requests {
            let reply = try daemon.client().request(request)
            if reply[path: "error.code"] as? String == "unknown_interface" { continue }
            let result = try #require(reply["result"] as? [String: Any], "\(reply)")
            let chosen = try #require(result["subjects"] as? [[String: Any]], "\(reply)")
            let tables = try #require(result["usage"] as? [[String: Any]], "\(reply)")
            for (subject, table) in zip(chosen, tables) {
                out[subject["name"] as? String ?? "?"] = Figures((table["rows"] as? [[String: Any]])?.first)
            }
        }
        return out
    }

    func scope(_ scope: String, _ subject: String) -> String { "scope:\(scope)/\(subject)" }

    /// `figures[name]`, zero when the daemon has none.
    func of(_ figures: [String: Figures], _ name: String) -> Figures { figures[name] ?? Figures() }

    @Test("a router's own and its LAN's traffic, IPv4 and IPv6: internet exactly the datagrams that left for the internet, local the rest, and the three each link's counters")
    func router() throws {
        let host = try ScopesHost()
        defer { host.close() }
        let (daemon, socket) = try setUp(host)
        defer { _ = try? daemon.stop(SIGKILL); withExtendedLifetime(socket) {} }
        try awaitCovered(daemon, ["wan0", "lan0"])
        let said = try Command.run([CLIBinary.path, "--socket", daemon.socket, "status"]).stdout
        #expect(said.contains("split on lan0, wan0"), "\(said)")
        let subjects = ["wan0", "lan0", host.applicationSubject]
        let before = try figures(daemon, subjects)
        typealias A = ScopesHost.Address
        var expected: [String: Figures] = [:]
        func expect(_ subject: String, _ figures: Figures) { expected[subject, default: Figures()] = expected[subject, default: Figures()] + figures }
        for (server, gateway, lanHost, routerWAN, routerLAN) in [
            (A.server4, A.gateway4, A.lanHost4, A.routerWAN4, A.routerLAN4), (A.server6, A.gateway6, A.lanHost6, A.routerWAN6, A.routerLAN6),
        ] {
            // The router's own application, to the internet: internet on wan0, and the application's.
            try host.send(count: 20, payload: 1000, from: host.router, source: routerWAN, to: host.internet, destination: server, asApplication: true)
            expect(scope("internet", "wan0"), .datagrams(20, 1000, to: server, tx: true))
            expect(scope("internet", host.applicationSubject), .datagrams(20, 1000, to: server, tx: true))
            // The router to its ISP's gateway, on wan0's own prefix: local.
            try host.send(count: 10, payload: 500, from: host.router, source: routerWAN, to: host.internet, destination: gateway)
            expect(scope("local", "wan0"), .datagrams(10, 500, to: gateway, tx: true))
            // The router to a LAN host: local on lan0.
            try host.send(count: 12, payload: 700, from: host.router, source: routerLAN, to: host.lan, destination: lanHost)
            expect(scope("local", "lan0"), .datagrams(12, 700, to: lanHost, tx: true))
            // A LAN host to the internet, forwarded (and masqueraded over IPv4): internet on both.
            try host.send(count: 15, payload: 900, from: host.lan, source: lanHost, to: host.internet, destination: server)
            expect(scope("internet", "wan0"), .datagrams(15, 900, to: server, tx: true))
            expect(scope("internet", "lan0"), .datagrams(15, 900, to: server, tx: false))
        }
        // A new cgroup's traffic is its application's once a walk of the hierarchy has named it
        // (docs/APPS.md): until then it is its link's unnamed remainder.
        var after: [String: Figures] = [:]
        let application = of(expected, scope("internet", host.applicationSubject))
        _ = try? eventually("the application named", seconds: 30, seen: { "\(after)" }) { () -> Bool? in
            after = try figures(daemon, subjects)
            return of(after, host.applicationSubject).txPackets >= application.txPackets ? true : nil
        }
        func moved(_ name: String) -> Figures { (after[name] ?? Figures()) - (before[name] ?? Figures()) }
        #expect(moved(scope("internet", "wan0")) == of(expected, scope("internet", "wan0")), "wan0's internet")
        #expect(moved(scope("internet", "lan0")) == of(expected, scope("internet", "lan0")), "lan0's internet")
        #expect(moved(scope("internet", host.applicationSubject)) == of(expected, scope("internet", host.applicationSubject)))
        #expect(moved(scope("local", host.applicationSubject)) == Figures(), "the application sent nothing local")
        for link in ["wan0", "lan0"] {
            // The link's own figures are its kernel counters (the daemon's other tests hold it
            // to them); its split is them, divided.
            #expect(moved(scope("local", link)) + moved(scope("internet", link)) + moved(scope("unknown", link)) == moved(link),
                    "\(link): local + internet + unknown is the link")
            #expect(moved(scope("unknown", link)) == Figures(), "\(link) was covered throughout")
            // Local is the datagrams sent to local ends, and whatever else the link carried then
            // (an MLD report): never less.
            let local = moved(scope("local", link)), sent = of(expected, scope("local", link))
            #expect(local.txBytes >= sent.txBytes && local.txPackets >= sent.txPackets, "\(link)'s local: \(local)")
        }
    }

    @Test("a link that appears while the daemon runs (a second uplink) is covered at its request, without a restart, and split from then on; moved away with a link here taking its name and number at once, the new one gets programs of its own")
    func linkAppearing() throws {
        let host = try ScopesHost()
        defer { host.close() }
        let (daemon, socket) = try setUp(host)
        defer { _ = try? daemon.stop(SIGKILL); withExtendedLifetime(socket) {} }
        try awaitCovered(daemon, ["wan0", "lan0"])
        try host.router.ip("link", "add", "wan1", "type", "veth", "peer", "name", "isp1", "netns", host.internet.name)
        try host.router.ip("address", "add", "100.64.1.2/30", "dev", "wan1")
        try host.internet.ip("address", "add", "100.64.1.1/30", "dev", "isp1")
        try host.router.ip("link", "set", "wan1", "up")
        try host.internet.ip("link", "set", "isp1", "up")
        try host.router.waitForOperstate("wan1", "up")
        try awaitCovered(daemon, ["wan0", "lan0", "wan1"])
        let first = try figures(daemon, ["wan1"])
        // A host route to the internet's server through the new link: it is not on its prefix.
        try host.router.ip("route", "add", "\(ScopesHost.Address.server4)/32", "via", "100.64.1.1", "dev", "wan1")
        try host.send(count: 9, payload: 400, from: host.router, source: "100.64.1.2", to: host.internet, destination: ScopesHost.Address.server4)
        try host.send(count: 6, payload: 400, from: host.router, source: "100.64.1.2", to: host.internet, destination: "100.64.1.1")
        let second = try figures(daemon, ["wan1"])
        #expect(of(second, scope("internet", "wan1")) - of(first, scope("internet", "wan1"))
                    == .datagrams(9, 400, to: ScopesHost.Address.server4, tx: true))
        let local = of(second, scope("local", "wan1")) - of(first, scope("local", "wan1"))
        #expect(local.txPackets >= 6 && local.txBytes >= 6 * ScopesHost.frameBytes(payload: 400, to: "100.64.1.1"), "\(local)")
        #expect(of(second, "wan1") - of(first, "wan1") == local + (of(second, scope("internet", "wan1")) - of(first, scope("internet", "wan1")))
                    + (of(second, scope("unknown", "wan1")) - of(first, scope("unknown", "wan1"))))

        // Moved to another namespace, its programs count on there under its number; and at once
        // another link here takes its name and its number: the daemon has the helper remove the
        // programs that left, and cover the new link with its own.
        let ifindex = try host.router.exec(["cat", "/sys/class/net/wan1/ifindex"]).trimmingCharacters(in: .whitespacesAndNewlines)
        try host.router.ip("link", "set", "wan1", "netns", host.lan.name)
        try host.router.ip("link", "add", "wan1", "index", ifindex, "type", "veth", "peer", "name", "isp2", "netns", host.internet.name)
        try host.router.ip("address", "add", "100.64.2.2/30", "dev", "wan1")
        try host.internet.ip("address", "add", "100.64.2.1/30", "dev", "isp2")
        try host.router.ip("link", "set", "wan1", "up")
        try host.internet.ip("link", "set", "isp2", "up")
        try host.router.waitForOperstate("wan1", "up")
        try host.router.ip("route", "replace", "\(ScopesHost.Address.server4)/32", "via", "100.64.2.1", "dev", "wan1")
        // Covered once a datagram over it is counted as the internet's: then exactly.
        var probe = try figures(daemon, ["wan1"])
        _ = try eventually("the new wan1 covered", seconds: 30) { () -> Bool? in
            try host.send(count: 1, payload: 100, from: host.router, source: "100.64.2.2", to: host.internet, destination: ScopesHost.Address.server4)
            let now = try figures(daemon, ["wan1"])
            defer { probe = now }
            return of(now, scope("internet", "wan1")).txPackets > of(probe, scope("internet", "wan1")).txPackets ? true : nil
        }
        try host.send(count: 7, payload: 300, from: host.router, source: "100.64.2.2", to: host.internet, destination: ScopesHost.Address.server4)
        let last = try figures(daemon, ["wan1"])
        #expect(of(last, scope("internet", "wan1")) - of(probe, scope("internet", "wan1"))
                    == .datagrams(7, 300, to: ScopesHost.Address.server4, tx: true), "the new wan1's own programs count it")
    }

    @Test("a prefix added to local_prefixes while the daemon runs: the next datagrams to it are local, what was counted stays internet")
    func localPrefixesReload() throws {
        let host = try ScopesHost()
        defer { host.close() }
        let (daemon, socket) = try setUp(host)
        defer { _ = try? daemon.stop(SIGKILL); withExtendedLifetime(socket) {} }
        let covered = try awaitCovered(daemon, ["wan0"])
        typealias A = ScopesHost.Address
        let first = try figures(daemon, ["wan0"])
        try host.send(count: 8, payload: 600, from: host.router, source: A.routerWAN4, to: host.internet, destination: A.server4)
        try host.send(count: 8, payload: 600, from: host.router, source: A.routerWAN6, to: host.internet, destination: A.server6)
        let second = try figures(daemon, ["wan0"])
        let both = Figures.datagrams(8, 600, to: A.server4, tx: true) + .datagrams(8, 600, to: A.server6, tx: true)
        #expect(of(second, scope("internet", "wan0")) - of(first, scope("internet", "wan0")) == both)
        let config = try String(contentsOfFile: daemon.config, encoding: .utf8)
        try (config + "local_prefixes = 198.51.100.0/24\nlocal_prefixes = 2001:db8:beef::/48\n")
            .write(toFile: daemon.config, atomically: true, encoding: .utf8)
        #expect(try daemon.client().request(#"{"v":1,"cmd":"reload"}"#)["ok"] as? Bool == true)
        // The reload wrote them: two more prefixes in the map than before it.
        let prefixes = try #require(covered["prefixes"] as? Int, "\(covered)")
        _ = try eventually("the two prefixes written", seconds: 30) { () -> Bool? in
            let scopes = try daemon.client().request(#"{"v":1,"cmd":"status"}"#)[path: "result.scopes"] as? [String: Any]
            return scopes?["prefixes"] as? Int == prefixes + 2 ? true : nil
        }
        try host.send(count: 5, payload: 300, from: host.router, source: A.routerWAN4, to: host.internet, destination: A.server4)
        try host.send(count: 5, payload: 300, from: host.router, source: A.routerWAN6, to: host.internet, destination: A.server6)
        let third = try figures(daemon, ["wan0"])
        #expect(of(third, scope("internet", "wan0")) == of(second, scope("internet", "wan0")), "nothing more to the internet")
        let local = of(third, scope("local", "wan0")) - of(second, scope("local", "wan0"))
        let now = Figures.datagrams(5, 300, to: A.server4, tx: true) + .datagrams(5, 300, to: A.server6, tx: true)
        #expect(local.txBytes >= now.txBytes && local.txPackets >= now.txPackets, "now local: \(local)")
    }

    @Test("a plan on traffic = internet fires on internet bytes only, once per threshold; local bytes beyond its limit never move it")
    func internetPlan() throws {
        let host = try ScopesHost()
        defer { host.close() }
        let (daemon, socket) = try setUp(host, extraConfig: """
            plan[paid] = wan0
            plan[paid].traffic = internet
            plan[paid].limit = 100K
            plan[paid].period = month
            plan[paid].direction = tx
            plan[paid].thresholds = 50%, 100%
            """)
        defer { _ = try? daemon.stop(SIGKILL); withExtendedLifetime(socket) {} }
        try awaitCovered(daemon, ["wan0"])
        typealias A = ScopesHost.Address
        func fired() throws -> [Double] {
            _ = try daemon.client().request(#"{"v":1,"cmd":"sample"}"#)
            let reply = try daemon.client().request(#"{"v":1,"cmd":"events","kind":"plan-threshold"}"#)
            let events = try #require(reply[path: "result.events"] as? [[String: Any]], "\(reply)")
            return events.compactMap { ($0["plan"] as? [String: Any])?["threshold"] as? Double }
        }
        // 200 KB to the gateway, twice the limit: local.
        try host.send(count: 200, payload: 1000, from: host.router, source: A.routerWAN4, to: host.internet, destination: A.gateway4)
        #expect(try fired() == [], "local bytes never move a plan on the internet")
        // 60 datagrams of 1000 bytes to the internet: 62,520 bytes with their headers, past 50 % of 100 KiB.
        try host.send(count: 60, payload: 1000, from: host.router, source: A.routerWAN4, to: host.internet, destination: A.server4)
        #expect(try fired() == [0.5])
        try host.send(count: 200, payload: 1000, from: host.router, source: A.routerWAN4, to: host.internet, destination: A.gateway4)
        #expect(try fired() == [0.5], "once per threshold, and local bytes still do not count")
        let plans = try daemon.client().request(#"{"v":1,"cmd":"plans"}"#)
        let plan = try #require((plans[path: "result.plans"] as? [[String: Any]])?.first, "\(plans)")
        #expect(plan["traffic"] as? String == "internet")
        let view = try Command.run([CLIBinary.path, "--socket", daemon.socket, "plans"])
        #expect(view.stdout.contains("paid: counts only what went to and came from the internet"), "\(view.stdout)")
        #expect((plan["used_bytes"] as? NSNumber)?.uint64Value == 60 * ScopesHost.frameBytes(payload: 1000, to: A.server4), "\(plan)")
    }

    @Test("with no attach helper to answer, Ethernet links' traffic is unknown, never left out, and status says why")
    func unknownUntilCovered() throws {
        let host = try ScopesHost()
        defer { host.close() }
        let daemon = try DaemonProcess(namespace: host.router, config: """
            interval = 3600
            apps_pins = \(host.pins)
            classify = wan0 = ethernet
            classify = lan0 = ethernet
            attach_socket = /nonexistent/attach.sock
            """)
        daemon.withinNamespace = AppsHost.mountingCgroup2
        try Command.check(["ip", "netns", "exec", host.router.name] + AppsHost.mountingCgroup2
            + [DaemonProcess.binary, "--attach-apps", "--config", daemon.config, "--apps-user", "nobody"])
        try daemon.startAsTheUnit()
        defer { _ = try? daemon.stop(SIGKILL) }
        typealias A = ScopesHost.Address
        let status = try eventually("the attach request's failure recorded", seconds: 60) { () -> [String: Any]? in
            _ = try daemon.client().request(#"{"v":1,"cmd":"sample"}"#)
            let scopes = try daemon.client().request(#"{"v":1,"cmd":"status"}"#)[path: "result.scopes"] as? [String: Any]
            return scopes?["attach_error"] != nil ? scopes : nil
        }
        #expect((status["attach_error"] as? String)?.contains("/nonexistent/attach.sock") == true, "\(status)")
        #expect(Set(status["uncovered"] as? [String] ?? []) == ["lan0", "wan0"], "\(status)")
        let said = try Command.run([CLIBinary.path, "--socket", daemon.socket, "status"]).stdout
        #expect(said.contains("not covered: lan0, wan0") && said.contains("attach: "), "\(said)")
        let first = try figures(daemon, ["wan0"])
        try host.send(count: 10, payload: 800, from: host.router, source: A.routerWAN4, to: host.internet, destination: A.server4)
        let second = try figures(daemon, ["wan0"])
        let sent = Figures.datagrams(10, 800, to: A.server4, tx: true)
        let unknown = of(second, scope("unknown", "wan0")) - of(first, scope("unknown", "wan0"))
        #expect(unknown.txBytes >= sent.txBytes, "not covered: unknown, \(unknown)")
        #expect(of(second, scope("internet", "wan0")) == of(first, scope("internet", "wan0")))
        #expect(of(second, "wan0") - of(first, "wan0") == unknown + (of(second, scope("local", "wan0")) - of(first, scope("local", "wan0"))),
                "the unknown and the local it could still tell are the link")
    }
}
