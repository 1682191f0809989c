import Foundation
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The application counter through the real binaries (docs/APPS.md, #59): `ifmeterd
/// --attach-apps` run inside the daemon's namespace, the daemon reading the pins there, and the
/// `ifmeter apps --json` client. Each test has its own namespaces, bpffs, cgroups and daemon
/// (``AppsHost``); every figure is asserted exactly.
@Suite("Applications end to end", .enabled(if: AppsHost.available, AppsHost.skipReason), .serialized, .ownThread, .timeLimit(.minutes(5)))
final class AppsTests {
    /// One application's expected all-time figures, in its link's terms (14 bytes of Ethernet
    /// a frame on a veth): `count` datagrams of `payload` bytes out, as many answers of `answer`
    /// bytes back, each a UDP datagram over IPv4 (8 + 20 bytes of headers).
    struct Expected: Equatable, CustomStringConvertible {
        var rxBytes: UInt64 = 0, rxPackets: UInt64 = 0, txBytes: UInt64 = 0, txPackets: UInt64 = 0

        static func exchange(count: Int, payload: Int, answer: Int) -> Expected {
            let count = UInt64(count)
            return Expected(rxBytes: count * UInt64(answer + 42), rxPackets: count,
                            txBytes: count * UInt64(payload + 42), txPackets: count)
        }

        init(rxBytes: UInt64 = 0, rxPackets: UInt64 = 0, txBytes: UInt64 = 0, txPackets: UInt64 = 0) {
            (self.rxBytes, self.rxPackets, self.txBytes, self.txPackets) = (rxBytes, rxPackets, txBytes, txPackets)
        }

        /// A row's four figures (an `all_time` row, or an interface's entry).
        init(_ row: [String: Any]?) {
            func value(_ key: String) -> UInt64 { (row?[key] as? NSNumber)?.uint64Value ?? 0 }
            self.init(rxBytes: value("rx_bytes"), rxPackets: value("rx_packets"), txBytes: value("tx_bytes"),
                      txPackets: value("tx_packets"))
        }

        static func + (a: Expected, b: Expected) -> Expected {
            Expected(rxBytes: a.rxBytes + b.rxBytes, rxPackets: a.rxPackets + b.rxPackets,
                     txBytes: a.txBytes + b.txBytes, txPackets: a.txPackets + b.txPackets)
        }

        var description: String { "rx \(rxBytes) B / \(rxPackets) p, tx \(txBytes) B / \(txPackets) p" }
    }

    /// A host, and a daemon in its `left` namespace reading its pins, sampling only when asked.
    func setUp(applications: [String], subnet: Int) throws -> (AppsHost, DaemonProcess) {
        let host = try AppsHost(applications: applications, subnet: subnet)
        let daemon = try DaemonProcess(namespace: host.left, config: "interval = 3600\napps_pins = \(host.pins)\n")
        daemon.withinNamespace = AppsHost.mountingCgroup2
        return (host, daemon)
    }

    func request(_ daemon: DaemonProcess, _ line: String) throws -> [String: Any] {
        let reply = try daemon.client().request(line)
        return try #require(reply["result"] as? [String: Any], "\(reply)")
    }

    /// `ifmeter apps` by the real client on the daemon's socket.
    func ifmeterApps(_ daemon: DaemonProcess, json: Bool = true) throws -> CommandResult {
        try Command.run([CLIBinary.path, "--socket", daemon.socket, "apps"] + (json ? ["--json"] : []))
    }

    /// `ifmeter apps --json`'s entries by name.
    func apps(_ daemon: DaemonProcess) throws -> [String: [String: Any]] {
        let result = try ifmeterApps(daemon)
        guard result.status == 0 else { throw CommandFailed(command: ["ifmeter", "apps", "--json"], result: result) }
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout)")
        let list = try #require(object["apps"] as? [[String: Any]], "\(result.stdout)")
        return Dictionary(list.map { ($0["name"] as? String ?? "", $0) }) { first, _ in first }
    }

    /// Samples and reads `ifmeter apps --json` until every subject in `expected` shows exactly
    /// its all-time figures (a new cgroup's count arrives once a walk has named it), or 30 s
    /// pass; returns the last entries either way, having recorded an issue when they never matched.
    @discardableResult
    func awaitApps(_ daemon: DaemonProcess, _ expected: [String: Expected],
                   sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: [String: Any]] {
        let deadline = Date().addingTimeInterval(30)
        var last: [String: [String: Any]] = [:]
        while true {
            _ = try request(daemon, #"{"v":1,"cmd":"sample"}"#)
            last = try apps(daemon)
            let seen = Dictionary(uniqueKeysWithValues: expected.keys.map { ($0, Expected(last[$0]?["all_time"] as? [String: Any])) })
            if seen == expected { return last }
            guard Date() < deadline else {
                Issue.record("after 30 s: \(seen.sorted { $0.key < $1.key }), expected \(expected.sorted { $0.key < $1.key }); all: \(last.mapValues { Expected($0["all_time"] as? [String: Any]) })",
                             sourceLocation: sourceLocation)
                return last
            }
            usleep(100_000)
        }
    }

    @Test("two cgroups, each exact both ways in ifmeter apps --json: tx N × (P + 42), rx N × (answer + 42), N packets each way")
    func exactByCgroup() throws {
        let (host, daemon) = try setUp(applications: ["a", "b"], subnet: 151)
        defer { _ = try? daemon.stop(SIGKILL); host.close() }
        try host.attach(config: daemon.config)
        try daemon.start()
        try host.exchange(from: "a", count: 6, payload: 100, answer: 60)
        try host.exchange(from: "b", count: 4, payload: 300, answer: 1000)
        let expected = [host.subject("a"): Expected.exchange(count: 6, payload: 100, answer: 60),
                        host.subject("b"): Expected.exchange(count: 4, payload: 300, answer: 1000)]
        let seen = try awaitApps(daemon, expected)
        for subject in expected.keys {
            let entry = try #require(seen[subject], "\(seen.keys.sorted())")
            #expect(entry["kind"] as? String != nil, "\(entry)")
            let today = Expected(entry["today"] as? [String: Any]), month = Expected(entry["this_month"] as? [String: Any])
            #expect(today == expected[subject] && month == expected[subject], "\(subject): today \(today), month \(month)")
        }
        // The live view asks for samples and reads the same figures: a frame of valid JSON, and
        // nothing moved between its two samples that was not sent (nothing was).
        let live = try Command.run([CLIBinary.path, "--socket", daemon.socket, "apps", "--now", "--count", "1", "--interval", "1", "--json"])
        #expect(live.status == 0, "\(live)")
        let frame = try #require(try JSONSerialization.jsonObject(with: Data(live.stdout.utf8)) as? [String: Any], "\(live.stdout)")
        #expect((frame["apps"] as? [Any])?.isEmpty == true && (frame["seconds"] as? Double ?? 0) > 0, "\(frame)")
    }

    @Test("the applications on va plus remainder:va are va's own all-time figures, exactly, also after raw frames both ways")
    func applicationsPlusRemainder() throws {
        let (host, daemon) = try setUp(applications: ["a", "b"], subnet: 152)
        defer { _ = try? daemon.stop(SIGKILL); host.close() }
        try host.attach(config: daemon.config)
        try daemon.start()
        try host.exchange(from: "a", count: 5, payload: 200, answer: 20)
        try host.exchange(from: "b", count: 3, payload: 50, answer: 700)
        let expected = [host.subject("a"): Expected.exchange(count: 5, payload: 200, answer: 20),
                        host.subject("b"): Expected.exchange(count: 3, payload: 50, answer: 700)]
        try awaitApps(daemon, expected)
        try checkSum(daemon, onlyApplications: Set(expected.keys))
        // No socket's: raw frames out of va and into it (from vb) are the remainder's.
        try host.left.sendFrames(20, from: "va")
        try host.right.sendFrames(15, from: "vb")
        try awaitApps(daemon, expected)
        let remainder = try checkSum(daemon, onlyApplications: Set(expected.keys))
        #expect(remainder.txPackets >= 20 && remainder.rxPackets >= 15 && remainder.txBytes >= 20 * 100 && remainder.rxBytes >= 15 * 100,
                "remainder:va \(remainder)")
    }

    /// After a sample: every application's all-time figures plus `remainder:va` against the
    /// daemon's own all-time figures of `va` (there are no other links with traffic in the
    /// namespace: lo carries nothing). Returns the remainder (zero when it has no subject).
    @discardableResult
    func checkSum(_ daemon: DaemonProcess, onlyApplications: Set<String>,
                  sourceLocation: SourceLocation = #_sourceLocation) throws -> Expected {
        _ = try request(daemon, #"{"v":1,"cmd":"sample"}"#)
        let entries = try apps(daemon)
        let interfaces = try daemon.figuresAfterSample()
        let link = Expected(try #require(interfaces["va"], "\(interfaces.keys.sorted())"))
        // No subject until the link carried something no application did: zero until then.
        let remainder = Expected(entries["remainder:va"]?["all_time"] as? [String: Any])
        let applications = entries.filter { !$0.key.hasPrefix("remainder:") }
        #expect(Set(applications.keys) == onlyApplications, "applications counted: \(applications.keys.sorted())", sourceLocation: sourceLocation)
        let sum = applications.values.reduce(remainder) { $0 + Expected($1["all_time"] as? [String: Any]) }
        #expect(sum == link, "applications + remainder:va = \(sum); va = \(link); remainder \(remainder)", sourceLocation: sourceLocation)
        #expect(entries.keys.filter { $0.hasPrefix("remainder:") && $0 != "remainder:va" }.allSatisfy { name in
            Expected(entries[name]?["all_time"] as? [String: Any]) == Expected()
        }, "\(entries.keys.sorted())", sourceLocation: sourceLocation)
        return remainder
    }

    @Test("datagrams sent while the daemon is stopped are counted once it is back: all time is everything sent, exactly")
    func nothingLostAcrossAStop() throws {
        let (host, daemon) = try setUp(applications: ["a"], subnet: 153)
        defer { _ = try? daemon.stop(SIGKILL); host.close() }
        try host.attach(config: daemon.config)
        try daemon.start()
        try host.exchange(from: "a", count: 7, payload: 80, answer: 40)
        let first = Expected.exchange(count: 7, payload: 80, answer: 40)
        try awaitApps(daemon, [host.subject("a"): first])
        #expect(try daemon.stop(SIGTERM) == 0, "\(daemon.stderrText)")
        try host.exchange(from: "a", count: 9, payload: 500, answer: 10)
        try daemon.start()
        let both = first + Expected.exchange(count: 9, payload: 500, answer: 10)
        try awaitApps(daemon, [host.subject("a"): both])
        try checkSum(daemon, onlyApplications: [host.subject("a")])
        // Killed, not stopped: it resumes from its last save, and the map has kept counting.
        try host.exchange(from: "a", count: 2, payload: 64, answer: 64)
        try daemon.stop(SIGKILL)
        try host.exchange(from: "a", count: 3, payload: 900, answer: 1)
        try daemon.start()
        let all = both + Expected.exchange(count: 2, payload: 64, answer: 64) + Expected.exchange(count: 3, payload: 900, answer: 1)
        try awaitApps(daemon, [host.subject("a"): all])
        try checkSum(daemon, onlyApplications: [host.subject("a")])
    }

    @Test("a cgroup removed after it sent keeps its count, exactly, once a walk (a new cgroup's) finds it gone; the sums still meet")
    func goneCgroup() throws {
        let (host, daemon) = try setUp(applications: ["a", "b"], subnet: 156)
        defer { _ = try? daemon.stop(SIGKILL); host.close() }
        try host.attach(config: daemon.config)
        try daemon.start()
        try host.exchange(from: "a", count: 4, payload: 150, answer: 250)
        let a = Expected.exchange(count: 4, payload: 150, answer: 250)
        try awaitApps(daemon, [host.subject("a"): a])
        try host.exchange(from: "a", count: 2, payload: 10, answer: 20)
        host.removeApplication("a")
        // b is new: its naming walks the tree, which finds a gone and takes a's entries.
        try host.exchange(from: "b", count: 5, payload: 40, answer: 30)
        let expected = [host.subject("a"): a + Expected.exchange(count: 2, payload: 10, answer: 20),
                        host.subject("b"): Expected.exchange(count: 5, payload: 40, answer: 30)]
        try awaitApps(daemon, expected)
        // b may have been read before a walk named it (within 2 s of a's): its traffic is then
        // the remainder's too until later unattributed traffic repays it (newCgroupBetweenWalks).
        // Raw frames both ways first, so the sums can meet whether it was or not.
        try host.left.sendFrames(20, from: "va")
        try host.right.sendFrames(20, from: "vb")
        try checkSum(daemon, onlyApplications: Set(expected.keys))
        // Across a restart too: the taken entries are not counted again, nor lost.
        try daemon.stop(SIGTERM)
        try daemon.start()
        try awaitApps(daemon, expected)
        try checkSum(daemon, onlyApplications: Set(expected.keys))
    }

    /// The reader names a new cgroup by a walk at most every 2 s; its entry is left out of the
    /// reads until then, while the link's counters already hold its traffic. Here b first sends
    /// right after a walk named a, so its first reads are between walks.
    @Test("a cgroup first read between walks: applications plus remainder still equal the link once it is named")
    func newCgroupBetweenWalks() throws {
        let (host, daemon) = try setUp(applications: ["a", "b"], subnet: 158)
        defer { _ = try? daemon.stop(SIGKILL); host.close() }
        try host.attach(config: daemon.config)
        try daemon.start()
        try host.exchange(from: "a", count: 2, payload: 100, answer: 100)
        let a = Expected.exchange(count: 2, payload: 100, answer: 100)
        try awaitApps(daemon, [host.subject("a"): a])
        try host.exchange(from: "b", count: 5, payload: 40, answer: 30)
        let expected = [host.subject("a"): a, host.subject("b"): Expected.exchange(count: 5, payload: 40, answer: 30)]
        try awaitApps(daemon, expected)
        try checkSum(daemon, onlyApplications: Set(expected.keys))
        // Unattributed traffic afterwards: the excess, held as the link's debt, comes off it.
        try host.left.sendFrames(20, from: "va")
        try host.right.sendFrames(20, from: "vb")
        try checkSum(daemon, onlyApplications: Set(expected.keys))
    }

    @Test("detached and attached again while the daemon runs: what the old map counted stays, the new map's adds to it; what went meanwhile is the remainder's")
    func attachedAgain() throws {
        let (host, daemon) = try setUp(applications: ["a"], subnet: 157)
        defer { _ = try? daemon.stop(SIGKILL); host.close() }
        try host.attach(config: daemon.config)
        try daemon.start()
        try host.exchange(from: "a", count: 3, payload: 100, answer: 100)
        let first = Expected.exchange(count: 3, payload: 100, answer: 100)
        try awaitApps(daemon, [host.subject("a"): first])
        let detached = try host.detach()
        #expect(detached.status == 0, "\(detached)")
        try host.exchange(from: "a", count: 6, payload: 30, answer: 30)
        _ = try request(daemon, #"{"v":1,"cmd":"sample"}"#)
        try host.attach(config: daemon.config)
        // A second attach names the new map: "attached already (map ID, …)".
        let again = try host.attach(config: daemon.config).stdout
        let newMap = again.components(separatedBy: "(map ").dropFirst().first?.prefix { $0.isNumber } ?? ""
        try host.exchange(from: "a", count: 2, payload: 700, answer: 5)
        let expected = [host.subject("a"): first + Expected.exchange(count: 2, payload: 700, answer: 5)]
        try awaitApps(daemon, expected)
        let remainder = try checkSum(daemon, onlyApplications: Set(expected.keys))
        #expect(remainder == Expected.exchange(count: 6, payload: 30, answer: 30), "remainder:va \(remainder)")
        let health = try #require(try request(daemon, #"{"v":1,"cmd":"status"}"#)["apps"] as? [String: Any])
        #expect(!newMap.isEmpty && (health["detail"] as? String ?? "").contains("map \(newMap) "),
                "the new map is \(newMap) (\(again)); status apps: \(health)")
    }

    @Test("as the unit runs it (nobody, CAP_DAC_READ_SEARCH and CAP_NET_BROADCAST), with pins attached for nobody: counting, exact")
    func asTheUnit() throws {
        let (host, daemon) = try setUp(applications: ["a"], subnet: 154)
        defer { _ = try? daemon.stop(SIGKILL); host.close() }
        let attached = try host.attach(config: daemon.config, user: "nobody")
        #expect(attached.stdout.contains("for uid 65534"), "\(attached.stdout)")
        try daemon.startAsTheUnit()
        _ = try request(daemon, #"{"v":1,"cmd":"sample"}"#)
        let status = try request(daemon, #"{"v":1,"cmd":"status"}"#)
        let health = try #require(status["apps"] as? [String: Any], "\(status)")
        #expect(health["counting"] as? Bool == true, "status apps: \(health); pins: \(Self.modes(host.pins)); stderr: \(daemon.stderrText)")
        try host.exchange(from: "a", count: 8, payload: 120, answer: 90)
        try awaitApps(daemon, [host.subject("a"): Expected.exchange(count: 8, payload: 120, answer: 90)])
        try checkSum(daemon, onlyApplications: [host.subject("a")])
    }

    /// `ls -ln` of the pin directory and its parent: who may reach the pins.
    static func modes(_ pins: String) -> String {
        let parent = String(pins[..<(pins.lastIndex(of: "/") ?? pins.endIndex)])
        return ((try? Command.run(["ls", "-lnd", parent, pins]))?.stdout ?? "") + ((try? Command.run(["ls", "-ln", pins]))?.stdout ?? "")
    }

    @Test("with no program attached the daemon runs, status says apps not counted and why, and ifmeter apps says so")
    func notAttached() throws {
        let (host, daemon) = try setUp(applications: ["a"], subnet: 155)
        defer { _ = try? daemon.stop(SIGKILL); host.close() }
        try daemon.start()
        try host.exchange(from: "a", count: 3, payload: 100, answer: 100)
        let figures = try daemon.figuresAfterSample()
        #expect(Expected(figures["va"]).txPackets == 3, "\(figures["va"] ?? [:])")
        let status = try request(daemon, #"{"v":1,"cmd":"status"}"#)
        let health = try #require(status["apps"] as? [String: Any], "\(status)")
        #expect(health["counting"] as? Bool == false, "\(health)")
        #expect((health["detail"] as? String)?.isEmpty == false, "\(health)")
        #expect(daemon.isRunning)
        let text = try ifmeterApps(daemon, json: false)
        #expect(text.status == 0 && text.stdout.contains("Applications are not counted"), "\(text)")
        let entries = try apps(daemon)
        #expect(entries.isEmpty, "\(entries.keys.sorted())")
        // ifmeter apps says why, as status does; so does ifmeterd --probe.
        #expect(text.stdout.contains(health["detail"] as? String ?? "-"), "\(text)")
        let probe = try host.left.run(AppsHost.mountingCgroup2 + [DaemonProcess.binary, "--probe", "--config", daemon.config])
        #expect(probe.status == 0, "\(probe)")
        let detail = health["detail"] as? String ?? ""
        #expect(probe.stdout.contains(host.pins) || probe.stdout.contains(detail) || probe.stderr.contains(host.pins),
                "ifmeterd --probe says nothing of why applications are not counted (status: \(detail)): \(probe.stdout) \(probe.stderr)")
    }
}
