import Foundation
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The HTTP listener under the attacks that once broke it (issue #46), each against the real
/// daemon run as the shipped unit runs it: as nobody with the unit's two capabilities, in
/// cgroups with its `MemoryMax=` and `TasksMax=` (``UnitResources``), and watched by a
/// stand-in for systemd's watchdog: `WATCHDOG_USEC` is 2 s, so a ping is due every second and
/// gaps are seen, and none may reach half the unit's `WatchdogSec=`. The attackers
/// (Tests/tools/http-attack) run as nobody too. The history holds 100 absent interfaces with 72
/// hour rows each, so one query of 27 tables is answered with 194,400 rows (50 MB).
/// scripts/bench-listener measures the same attacks.
@Suite("HTTP listener attacks", .enabled(if: NetworkNamespace.available && UnitResources.available,
                                         "needs root (a network namespace and cgroups)"),
       .serialized, .ownThread, .timeLimit(.minutes(10)))
struct ListenerAttackTests {
    static let port: UInt16 = 10961
    /// One query answered with 194,400 rows (50 MB), just inside the 200,000-row budget.
    static let hugeQuery = "/api/v1/query?select=every" + String(repeating: "&period=hour", count: 27)
    /// One query answered with 14,400 rows: inside every documented bound.
    static let largeQuery = "/api/v1/query?select=every&period=hour&period=hour"

    /// A duration of the shipped unit's, written in seconds ("60s").
    static func unitSeconds(_ key: String) throws -> Double {
        let value = UnitResources.unitValue(key)
        return try #require(value.flatMap { $0.hasSuffix("s") ? Double($0.dropLast()) : nil }, "\(key)=\(value ?? "") in seconds in the unit")
    }

    /// The daemon, as the unit runs it, over the seeded history; and what systemd's watchdog
    /// would have heard.
    final class AttackedDaemon {
        let namespace: NetworkNamespace
        let daemon: DaemonProcess
        let resources: UnitResources
        let watchdog: NotifyListener
        /// The longest gap allowed between pings: half the unit's `WatchdogSec=`, a margin
        /// below the restart systemd would make.
        let watchdogBound: Double

        init(name: String) throws {
            namespace = try NetworkNamespace()
            daemon = try DaemonProcess(namespace: namespace, config: "interval = 1\nmetrics_listen = 127.0.0.1:\(ListenerAttackTests.port)\n")
            // The schema, made by the daemon itself; then the history, written while it is stopped.
            try daemon.start()
            #expect(try daemon.stop() == 0)
            let now = Int(Date().timeIntervalSince1970)
            let seeded = try Command.run(["sqlite3", daemon.stateDirectory + "/ifmeter.db", """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100)
                INSERT INTO interfaces (name, class, kind, mac, alias, first_seen, last_seen)
                  SELECT 'gone' || i, 'virtual', 'veth', '', '', \(now) - 72 * 3600, \(now) - 3600 FROM n;
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100),
                               h(j) AS (SELECT 1 UNION ALL SELECT j + 1 FROM h WHERE j < 72)
                INSERT INTO buckets (name, resolution, start, rx_bytes, tx_bytes, rx_packets, tx_packets)
                  SELECT 'gone' || i, 'hour', (\(now) / 3600 - j) * 3600, i * j * 1000, j * 100, j, j FROM n, h;
                """])
            guard seeded.status == 0 else { throw CommandFailed(command: ["sqlite3"], result: seeded) }
            resources = try UnitResources(name: name)
            watchdogBound = try ListenerAttackTests.unitSeconds("WatchdogSec") / 2
            watchdog = try NotifyListener(path: daemon.directory + "/notify")
            try Command.check(["chmod", "0666", watchdog.path])
            // Read all along, as systemd reads it: a datagram socket nobody reads fills after
            // ten messages, and the daemon's sd_notify then blocks its loop (a test that paused
            // its reading for ten seconds once stopped the daemon that way).
            let (listener, stopped, lock, received) = (watchdog, self.stopped, pingLock, self.received)
            Thread.detachNewThread {
                while !lock.withLock({ stopped.value }) {
                    guard let (message, at) = try? listener.receiveStamped(timeoutMilliseconds: 100) else { continue }
                    if message.split(separator: "\n").contains("WATCHDOG=1") { lock.withLock { received.value.append(at) } }
                }
            }
            try daemon.startAsTheUnit(resources: resources, environment: [
                "NOTIFY_SOCKET": watchdog.path, "WATCHDOG_USEC": "2000000"])
        }

        deinit { pingLock.withLock { stopped.value = true } }

        private let pingLock = NSLock()
        private let stopped = Box(false)
        private let received = Box<[Double]>([])

        /// Every WATCHDOG=1 the daemon has sent since the last call, with when it was queued.
        func watchdogPings() -> [Double] {
            pingLock.withLock {
                defer { received.value = [] }
                return received.value
            }
        }

        func curl(_ arguments: [String]) throws -> CommandResult {
            try namespace.run(["curl", "-sS", "--max-time", "10", "-H", "Accept-Encoding: identity"] + arguments)
        }

        /// A scrape as Prometheus makes one, from 127.0.0.1: answered whole, or not.
        func scrape() throws -> Bool {
            let result = try curl(["http://127.0.0.1:\(ListenerAttackTests.port)/metrics"])
            return result.status == 0 && result.stdout.contains("\nifmeter_up 1\n")
        }

        /// Starts an attack (as nobody), which lasts until ``Attack/stop()``.
        func attack(_ arguments: [String]) throws -> Attack {
            try Attack(namespace: namespace, tool: try OtherUserCopy.of(Daemon.packageRoot + "/Tests/tools/http-attack", in: daemon.directory),
                       arguments: ["127.0.0.1:\(ListenerAttackTests.port)"] + arguments)
        }
    }

    /// A value shared with the thread that reads the notify socket, under its lock.
    final class Box<Value>: @unchecked Sendable {
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    /// One run of Tests/tools/http-attack.
    final class Attack {
        let process = Process()
        let output = Pipe()
        let input = Pipe()

        init(namespace: NetworkNamespace, tool: String, arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
            process.arguments = ["netns", "exec", namespace.name, "setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                                 "/usr/bin/python3", tool] + arguments
            process.standardOutput = output
            process.standardInput = input
            try process.run()
            guard output.fileHandleForReading.firstLine() == "attacking" else {
                process.end()
                throw CommandFailed(command: ["http-attack"] + arguments, result: CommandResult(status: 1, stdout: "", stderr: "it never said attacking"))
            }
        }

        /// Ends the attack; what it did (its JSON line).
        func stop() throws -> [String: Any] {
            defer { process.end() }
            // A line, not only the end of its input: a child another test spawns meanwhile may
            // hold a copy of the pipe's write end, and the end would never come.
            try input.fileHandleForWriting.write(contentsOf: Data("stop\n".utf8))
            try input.fileHandleForWriting.close()
            let line = output.fileHandleForReading.firstLine() ?? ""
            _ = try process.awaitExit("http-attack, told to stop")
            return try SocketClient.decode(line)
        }
    }

    /// What every attack must leave whole, checked while it goes on: ten scrapes answered in
    /// full, root's requests on the socket answered, no watchdog ping missed as systemd counts
    /// them, and the daemon alive inside the unit's memory.
    func checkServed(_ attacked: AttackedDaemon, rootRequest: String = #"{"v":1,"cmd":"status"}"#) throws {
        let root = try attacked.daemon.client()
        var previous = attacked.watchdogPings().last ?? Date().timeIntervalSince1970
        for scrape in 1...10 {
            #expect(try attacked.scrape(), "scrape \(scrape) of 10 answered whole")
            #expect(try root.request(rootRequest)["ok"] as? Bool == true, "root's \(rootRequest)")
            for ping in attacked.watchdogPings() {
                #expect(ping - previous < attacked.watchdogBound, "a watchdog gap of \(ping - previous) s")
                previous = ping
            }
        }
        #expect(Date().timeIntervalSince1970 - previous < attacked.watchdogBound, "no watchdog ping for \(Date().timeIntervalSince1970 - previous) s")
        #expect(attacked.daemon.isRunning, "\(attacked.daemon.stderrText)")
        #expect(attacked.resources.oomKills == 0)
        #expect(attacked.resources.peakBytes < attacked.resources.memoryLimit)
    }

    /// 32 slow readers once took the daemon from 20 to 645 MiB: libmicrohttpd held a copy of
    /// each answer, and nothing bounded what unsent answers held. Reconnecting as soon as they
    /// were ended, the same readers on the scraper's own address once ended every scrape.
    @Test("32 readers taking 50 MB answers a kilobyte a second, on the scraper's address and from four others: scrapes, root and the watchdog are served, inside MemoryMax")
    func slowReaders() throws {
        let attacked = try AttackedDaemon(name: "slow-readers")
        let sameAddress = try attacked.attack(["slow-readers", "32", Self.hugeQuery])
        try checkServed(attacked)
        let report = try sameAddress.stop()
        // 32 on one address with a share of 8: the surplus was ended, and reconnected.
        #expect(report["requests"] as? Int ?? 0 > 32, "\(report)")
        let others = try attacked.attack(["slow-readers", "32", Self.hugeQuery, "127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5"])
        try checkServed(attacked)
        _ = try others.stop()
        // What they held is let go: an answer is made again once they are gone (after the
        // answers already begun for them; curl takes the last --max-time).
        let after = try attacked.curl(["--max-time", "100", "-o", "/dev/null", "-w", "%{http_code} %{size_download}",
                                       "http://127.0.0.1:\(Self.port)\(Self.largeQuery)"])
        #expect(after.stdout.hasPrefix("200 ") && (Int(after.stdout.dropFirst(4)) ?? 0) > 1_000_000, "\(after.stdout) \(after.stderr)")
    }

    /// One GET whose 93 MB answer was parsed again on the loop held root's `status` for up to
    /// 19 s; three at once starved the watchdog for 62 s, and SIGTERM was not handled in 45 s.
    @Test("three clients asking 194,400 rows back to back: root, scrapes and the watchdog are served, SIGTERM saves and exits before the unit's TimeoutStopSec=")
    func hugeAnswers() throws {
        let attacked = try AttackedDaemon(name: "huge-answers")
        let attack = try attacked.attack(["store-flood", "3", Self.hugeQuery])
        try checkServed(attacked, rootRequest: #"{"v":1,"cmd":"usage","interface":"gone7","period":"hour"}"#)
        let stopSeconds = try ListenerAttackTests.unitSeconds("TimeoutStopSec")
        #expect(try attacked.daemon.stop(SIGTERM, within: stopSeconds) == 0, "\(attacked.daemon.stderrText)")
        #expect(!attacked.daemon.stderrText.contains("<3>"), "no error said, a failed final save among them: \(attacked.daemon.stderrText)")
        let report = try attack.stop()
        #expect((report["statuses"] as? [String: Int])?["200"] ?? 0 >= 1, "the attack got answers: \(report)")
    }

    /// A query past 200,000 rows by names asked again, totals and many tables once gave
    /// 401,000 rows and 445 MiB.
    @Test("a GET asking the same rows again, totals and tables past 200,000 rows is refused, and costs nothing")
    func rowBudget() throws {
        let attacked = try AttackedDaemon(name: "row-budget")
        // Each of the 100 names asked ten times, four tables of hours and one total: 289,000 rows
        // from a line of 14 KB.
        let names = (0..<1000).map { "\"gone\($0 % 100 + 1)\"" }.joined(separator: ",")
        let repeated = try #require("{\"v\":1,\"cmd\":\"query\",\"interfaces\":[\(names)],\"usage\":[\(String(repeating: "{\"period\":\"hour\"},", count: 4)){\"period\":\"total\"}]}"
            .addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        for path in [Self.hugeQuery + "&period=hour",
                     "/api/v1/query?request=" + repeated,
                     "/api/v1/query?select=every&period=total" + String(repeating: "&period=hour", count: 28)] {
            let refused = try attacked.curl(["-w", "\n%{http_code}", "http://127.0.0.1:\(Self.port)\(path)"])
            #expect(refused.stdout.hasSuffix("\n400") && refused.stdout.contains("pass 200000 in one answer"), "\(path.prefix(80)): \(refused.stdout.prefix(300))")
        }
        try checkServed(attacked)
    }

    /// 8 clients loading the page back to back once let 2–6 of 10 scrapes through, and 32
    /// clients asking 15,000 rows each delayed root's `usage` by seconds: one queue served them.
    @Test("8 clients loading the page and 32 asking 14,400 rows, back to back: scrapes and root's usage are served, and the attackers are answered too")
    func pagesAndQueries() throws {
        let attacked = try AttackedDaemon(name: "pages")
        let pages = try attacked.attack(["page-loop", "8", "/"])
        let queries = try attacked.attack(["store-flood", "32", Self.largeQuery, "127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5"])
        try checkServed(attacked, rootRequest: #"{"v":1,"cmd":"usage","interface":"gone7","period":"hour"}"#)
        let pageReport = try pages.stop()
        let queryReport = try queries.stop()
        #expect((pageReport["statuses"] as? [String: Int])?["200"] ?? 0 >= 1, "\(pageReport)")
        #expect((queryReport["statuses"] as? [String: Int])?["200"] ?? 0 >= 1, "\(queryReport)")
    }

    /// With every attack at once (72 connections, past twice the total), each newcomer was
    /// refused as it opened, scrapers with them: 5 of 10 scrapes were answered.
    @Test("every attack at once, 72 connections: scrapes, root and the watchdog are served, inside MemoryMax; SIGTERM saves and exits")
    func everythingAtOnce() throws {
        let attacked = try AttackedDaemon(name: "all")
        let others = "127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5"
        let attacks = [try attacked.attack(["slow-readers", "32", Self.hugeQuery]), try attacked.attack(["page-loop", "8", "/"]),
                       try attacked.attack(["store-flood", "32", Self.largeQuery, others])]
        try checkServed(attacked)
        let stopSeconds = try ListenerAttackTests.unitSeconds("TimeoutStopSec")
        #expect(try attacked.daemon.stop(SIGTERM, within: stopSeconds) == 0, "\(attacked.daemon.stderrText)")
        for attack in attacks { _ = try attack.stop() }
    }
}
