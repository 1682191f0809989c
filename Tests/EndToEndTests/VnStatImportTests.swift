import Foundation
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The real vnstatd (Debian `vnstat`) in a namespace, with a database of its own.
final class VnStatDaemon {
    let namespace: NetworkNamespace
    let directory: TemporaryDirectory
    private var process: Process?
    var database: String { directory.path + "/db/vnstat.db" }
    var config: String { directory.path + "/vnstat.conf" }

    static var available: Bool { (try? Command.resolve("vnstatd")) != nil && NetworkNamespace.available }

    init(in namespace: NetworkNamespace) throws {
        self.namespace = namespace
        directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path + "/db", withIntermediateDirectories: true)
        try """
            DatabaseDir "\(directory.path)/db"
            UseLogging 0
            Interface ""
            PollInterval 2
            UpdateInterval 2
            SaveInterval 1
            AlwaysAddNewInterfaces 1

            """.write(toFile: config, atomically: true, encoding: .utf8)
    }

    deinit { process?.end() }

    func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Command.resolve("ip"))
        // The test process's threads block signals, and a spawned child inherits the mask: vnstatd
        // (which handles SIGTERM with a handler, unlike ifmeterd's signalfd) would never see the
        // SIGTERM that makes it write its cache. A small exec wrapper clears the mask first.
        process.arguments = ["netns", "exec", namespace.name, try Command.resolve("python3"), "-c",
                             "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])",
                             try Command.resolve("vnstatd"), "--config", config, "--nodaemon"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
    }

    /// SIGTERM: vnstatd writes what it has cached. One that has not exited by the deadline is
    /// killed, and the test fails saying so.
    @discardableResult
    func stop() throws -> Int32 {
        guard let process, process.isRunning else { return -1 }
        self.process = nil
        process.terminate()
        return try process.awaitExit("vnstatd")
    }

    /// Makes the database and records `name` in it with vnStat's own commands, before vnstatd
    /// runs, and returns the counters recorded (rx, tx). vnstatd then counts everything past
    /// them, traffic sent before it started too. Left to vnstatd, an interface it adds is synced
    /// to the counters of its first poll, which on a loaded machine came after the test's traffic
    /// and made it part of the baseline, never counted.
    func add(_ name: String) throws -> (rx: UInt64, tx: UInt64) {
        _ = try namespace.exec(["vnstatd", "--config", config, "--initdb"])
        _ = try namespace.exec(["vnstat", "--config", config, "--add", "-i", name])
        return try #require(try recordedCounters(name), "vnstat --add -i \(name) recorded no row")
    }

    /// The counters vnstat recorded for `name` in its database (rx, tx); nil without a row.
    func recordedCounters(_ name: String) throws -> (rx: UInt64, tx: UInt64)? {
        guard FileManager.default.fileExists(atPath: database) else { return nil }
        let row = try Command.check(["sqlite3", "-readonly", "-cmd", ".timeout 5000", database,
                                     "SELECT rxcounter, txcounter FROM interface WHERE name = '\(name)'"])
        let fields = row.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "|").compactMap { UInt64($0) }
        return fields.count == 2 ? (fields[0], fields[1]) : nil
    }

    /// What `vnstat --json` says about `name`.
    func json(_ name: String) throws -> [String: Any] {
        let text = try Command.check(["vnstat", "--config", config, "--json", "-i", name])
        let reply = try SocketClient.decode(text)
        let interfaces = try #require(reply["interfaces"] as? [[String: Any]])
        return try #require(interfaces.first { $0["name"] as? String == name })
    }
}

@Suite("ifmeter import vnstat", .enabled(if: VnStatDaemon.available, "needs root (namespaces) and vnstatd (Debian vnstat)"), .ownThread, .timeLimit(.minutes(10)))
struct VnStatImportTests {
    /// Runs vnstatd over known traffic until its database holds exactly what the kernel counted
    /// on `va` since vnstatd recorded it.
    func vnStatDatabase(_ pair: VethPair, sending count: Int, payload: Int) throws -> VnStatDaemon {
        let vnstat = try VnStatDaemon(in: pair.left)
        let baseline = try vnstat.add("va")
        try pair.sendLeftToRight(count: count, payload: payload)
        // The kernel sends on its own too (MLD reports, router solicitations): held still from
        // here, so that vnstatd's total can be compared with the counters exactly.
        _ = try pair.left.exec(EgressDrop.command(pair.leftName))
        _ = try pair.right.exec(EgressDrop.command(pair.rightName))
        let rx = try pair.left.sysfsCounter(pair.leftName, "rx_bytes") - baseline.rx
        let tx = try pair.left.sysfsCounter(pair.leftName, "tx_bytes") - baseline.tx
        #expect(tx >= UInt64(count * (payload + 42)), "the kernel counted what was sent")
        try vnstat.start()
        // vnstatd reads the counters every 2 s and writes on SIGTERM; what one run missed the
        // next one counts from the counters it saved, so stop and look until all is there.
        // Each run is given twice as long as the one before (from 0.5 s, at most 8 s): on a
        // machine so loaded that vnstatd cannot read the counters within a fixed half second,
        // stopping it after that half second every time never let one run count.
        var run: useconds_t = 500_000
        var seen = "nothing"
        _ = try eventually("vnstat counted rx \(rx) and tx \(tx) bytes", seconds: 180, seen: { seen }) { () -> Bool? in
            try vnstat.stop()
            // No total yet when a run was stopped before it wrote `va` (a loaded machine): that
            // restarts vnstatd like any short count.
            let total = (try? vnstat.json("va"))?[path: "traffic.total"] as? [String: Any]
            let counted = ((total?["rx"] as? NSNumber)?.uint64Value ?? 0, (total?["tx"] as? NSNumber)?.uint64Value ?? 0)
            if counted == (rx, tx) { return true }
            seen = "rx \(counted.0), tx \(counted.1) after a run of \(Double(run) / 1e6) s; vnstatd's row: \((try? vnstat.recordedCounters("va")).map { "\($0)" } ?? "none")"
            // More than the kernel counted is no matter of waiting: fail now, saying so.
            guard counted.0 <= rx && counted.1 <= tx else {
                throw CommandFailed(command: ["vnstat", "--json", "-i", "va"], result: CommandResult(
                    status: 1, stdout: "", stderr: "counted rx \(counted.0), tx \(counted.1): more than the kernel's rx \(rx), tx \(tx)"))
            }
            try vnstat.start()
            usleep(run)
            run = min(run * 2, 8_000_000)
            return nil
        }
        return vnstat
    }

    func ifmeter(_ daemon: DaemonProcess, _ arguments: [String]) throws -> CommandResult {
        try Command.run([CLIBinary.path, "--socket", daemon.socket] + arguments)
    }

    @Test("after an import ifmeter's total, months, days, hours and 5 minutes equal vnstat --json; a second import adds nothing")
    func importsExactly() throws {
        let pair = try VethPair(subnet: 87)
        let vnstat = try vnStatDatabase(pair, sending: 40, payload: 800)
        let truth = try vnstat.json("va")
        // ifmeterd starts after vnstatd stopped, as in a migration; it samples too rarely to
        // count anything itself here.
        let daemon = try DaemonProcess(namespace: pair.left, config: "interval = 3600\n")
        try daemon.start()

        let dry = try ifmeter(daemon, ["import", "vnstat", vnstat.database, "--dry-run", "--json"])
        #expect(dry.status == 0, "\(dry.stderr)")
        let before = try ifmeter(daemon, ["--json", "days", "-i", "va"])
        #expect(!before.stdout.contains("imported-vnstat"), "a dry run changed the store")

        let imported = try ifmeter(daemon, ["import", "vnstat", vnstat.database])
        #expect(imported.status == 0 && imported.stdout.contains("imported"), "\(imported.stdout)\(imported.stderr)")
        let total = try #require(truth[path: "traffic.total"] as? [String: Any])
        let rows = try SocketClient.decode(try ifmeter(daemon, ["--json", "list", "-i", "va"]).stdout)
        let listed = try #require((rows["interfaces"] as? [[String: Any]])?.first { $0["name"] as? String == "va" })
        #expect(listed.int("rx_bytes") == (total["rx"] as? NSNumber)?.uint64Value)
        #expect(listed.int("tx_bytes") == (total["tx"] as? NSNumber)?.uint64Value)
        #expect((listed["labels"] as? [String])?.contains("imported-vnstat") == true)

        for (command, key) in [("months", "month"), ("days", "day"), ("hours", "hour"), ("5min", "fiveminute")] {
            let expected = try #require(truth[path: "traffic.\(key)"] as? [[String: Any]])
            let answer = try SocketClient.decode(try ifmeter(daemon, ["--json", command, "-i", "va"]).stdout)
            let usage = try #require((answer["usage"] as? [[String: Any]])?.first)
            let got = (usage["rows"] as? [[String: Any]] ?? []).filter { $0.int("rx_bytes")! > 0 || $0.int("tx_bytes")! > 0 }
            #expect(got.map { $0.int("tx_bytes") } == expected.map { ($0["tx"] as? NSNumber)?.uint64Value }, "\(command)")
            #expect(got.map { $0.int("rx_bytes") } == expected.map { ($0["rx"] as? NSNumber)?.uint64Value }, "\(command)")
            #expect(got.map { $0["start"] as? Double } == expected.map { ($0["timestamp"] as? NSNumber)?.doubleValue }, "\(command)")
        }

        let again = try ifmeter(daemon, ["import", "vnstat", vnstat.database, "--json"])
        let report = try SocketClient.decode(again.stdout)
        let interfaces = try #require(report["interfaces"] as? [[String: Any]])
        #expect(interfaces.contains { $0["name"] as? String == "va" }, "a second import reads va again: \(again.stdout)")
        #expect(interfaces.allSatisfy { ($0["buckets"] as? [String: Int])?.values.reduce(0, +) == 0 }, "\(again.stdout)")
        let after = try SocketClient.decode(try ifmeter(daemon, ["--json", "list", "-i", "va"]).stdout)
        let relisted = try #require((after["interfaces"] as? [[String: Any]])?.first { $0["name"] as? String == "va" })
        #expect(relisted.int("tx_bytes") == listed.int("tx_bytes"))
        #expect(try daemon.stop() == 0)
    }

    @Test("a vnStat file created in 1960 is refused and the daemon restarts on its state; a FIFO is refused at once while days answers")
    func refusesHostileFiles() throws {
        let pair = try VethPair(subnet: 95)
        let vnstat = try vnStatDatabase(pair, sending: 5, payload: 100)
        let daemon = try DaemonProcess(namespace: pair.left, config: "interval = 3600\n")
        try daemon.start()
        let old = vnstat.directory.path + "/1960.db"
        try FileManager.default.copyItem(atPath: vnstat.database, toPath: old)
        _ = try Command.check(["sqlite3", old, "UPDATE interface SET created = '1960-01-01 00:00:00'"])
        let refused = try ifmeter(daemon, ["import", "vnstat", old])
        #expect(refused.status != 0 && refused.stderr.contains(old) && refused.stderr.contains("created is -315619200"), "\(refused)")
        #expect(try daemon.stop() == 0)
        try daemon.start()
        #expect(try ifmeter(daemon, ["status"]).status == 0)

        let fifo = vnstat.directory.path + "/fifo.db"
        #expect(mkfifo(fifo, 0o600) == 0)
        let fromFIFO = try ifmeter(daemon, ["import", "vnstat", fifo])
        #expect(fromFIFO.status != 0 && fromFIFO.stderr.contains("it is a FIFO"), "\(fromFIFO)")
        #expect(try ifmeter(daemon, ["days"]).status == 0)
        #expect(try daemon.stop() == 0)
    }

    @Test("a truncated vnStat file and a foreign SQLite file are refused, naming the file; the store is unchanged")
    func refusesBadFiles() throws {
        let pair = try VethPair(subnet: 88)
        let vnstat = try vnStatDatabase(pair, sending: 5, payload: 100)
        let daemon = try DaemonProcess(namespace: pair.left, config: "interval = 3600\n")
        try daemon.start()
        let data = try Data(contentsOf: URL(fileURLWithPath: vnstat.database))
        let truncated = vnstat.directory.path + "/truncated.db"
        try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: truncated))
        let foreign = vnstat.directory.path + "/foreign.db"
        _ = try Command.check(["sqlite3", foreign, "CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('hello');"])
        for (path, problem) in [(truncated, "damaged"), (foreign, "not a vnStat database")] {
            let result = try ifmeter(daemon, ["import", "vnstat", path])
            #expect(result.status != 0)
            #expect(result.stderr.contains(path) && result.stderr.contains(problem), "\(result.stderr)")
        }
        // Only an admin may import: the same peer check as forget.
        let client = try OtherUserCopy.of(CLIBinary.path, in: daemon.directory)
        let refused = try Command.run(["runuser", "-u", "nobody", "--", client, "--socket", daemon.socket,
                                       "import", "vnstat", vnstat.database])
        #expect(refused.status == 77 && refused.stderr.contains("only root"), "\(refused.stderr)")
        let listed = try ifmeter(daemon, ["--json", "list"])
        #expect(!listed.stdout.contains("imported-vnstat"))
        #expect(try daemon.stop() == 0)
    }
}
