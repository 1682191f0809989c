import Foundation
import IfMeterTestSupport
import Testing

enum EstimateFootnote {
    static let text = "Estimates from interface counters: they include protocol overhead, are not per-application, "
        + "and tunnel traffic is counted again on the link beneath it."
}

/// `ifmeter live` on a terminal (tmux), driven by traffic the test generates.
@Suite("ifmeter live", .enabled(if: NetworkNamespace.available && (try? Command.resolve("tmux")) != nil,
                                "needs root (a network namespace) and tmux (make test installs it)"), .ownThread, .timeLimit(.minutes(10)))
struct CLILiveTests {
    @Test("rates redrawn in place as traffic changes; Ctrl-C prints the session summary and exits 0")
    func live() throws {
        let pair = try VethPair(subnet: 87)
        let daemon = try DaemonProcess(namespace: pair.left, config: "interval = 1\n")
        try daemon.start()
        let server = "ifmeter-test-\(getpid())-\(UUID().uuidString)"
        let tmux = ["tmux", "-L", server]
        defer {
            _ = try? Command.run(tmux + ["kill-server"])
            unlink("/tmp/tmux-\(getuid())/\(server)")
        }
        // The pane stays after ifmeter exits (the shell waits), so its last screen can be read.
        // Spawned and waited for directly: the tmux server it forks inherits Foundation's
        // process-monitoring descriptor, so Process would never see this client exit.
        #expect(try spawnAndWait(tmux + ["new-session", "-d", "-x", "160", "-y", "40",
                                         "\(CLIBinary.path) --socket \(daemon.socket) live -i va; echo EXIT=$?; sleep 600"]) == 0)
        func screen() throws -> String { try Command.check(tmux + ["capture-pane", "-p"]) }

        var seen = Set<String>()
        var sent = 0
        // Ceilings only a stalled daemon or client misses; a loaded machine takes more rounds.
        let deadline = Date().addingTimeInterval(120)
        var round = 0
        while seen.count < 3 && Date() < deadline {
            round += 1
            let count = 20 * (round % 4 + 1)
            try pair.sendLeftToRight(count: count, payload: 500)
            sent += count * 542
            usleep(250_000)
            let text = try screen()
            let rows = text.split(separator: "\n").filter { $0.hasPrefix("va ") }
            #expect(rows.count <= 1, "redrawn in place, not scrolled:\n\(text)")
            let cells = rows.first?.split(separator: " ", omittingEmptySubsequences: true).map(String.init) ?? []
            // va  <rx> <unit>  <tx> <unit>
            if cells.count == 5, cells[3] != "0" { seen.insert(cells[3] + " " + cells[4]) }
        }
        #expect(seen.count >= 3, "tx rates seen in 120 s: \(seen)")

        try Command.check(tmux + ["send-keys", "C-c"])
        var final = ""
        let exitDeadline = Date().addingTimeInterval(60)
        repeat {
            final = try screen()
            if final.contains("EXIT=") { break }
            usleep(50_000)
        } while Date() < exitDeadline
        #expect(final.contains("EXIT=0"), "\(final)")
        #expect(final.contains("session: "))
        let summary = final.split(separator: "\n").first { $0.hasPrefix("  va ") }
        let cells = summary?.split(separator: " ").map(String.init) ?? []
        // "  va  <rx> <unit>  <tx> <unit> …": tx during the session is counted, at most what was sent.
        #expect(cells.count >= 5 && cells[3] != "0", "\(final)")
    }
}

/// `live` writing to a pipe: a line per interface and update, or JSON lines, ending on its own.
@Suite("ifmeter live, not on a terminal", .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason), .ownThread, .timeLimit(.minutes(10)))
struct CLILivePipeTests {
    @Test("--count ends it; lines carry each update's rates; --json the watch results and the session")
    func pipe() throws {
        let pair = try VethPair(subnet: 89)
        let daemon = try DaemonProcess(namespace: pair.left, config: "interval = 1\n")
        try daemon.start()
        try pair.sendLeftToRight(count: 100, payload: 1000)
        let text = try Command.run([CLIBinary.path, "--socket", daemon.socket, "live", "-i", "va", "--count", "2"])
        #expect(text.status == 0, "\(text.stderr)")
        let updates = text.stdout.split(separator: "\n").filter { $0.contains("  va  rx ") }
        #expect(updates.count == 3, "the first rates line, then two updates:\n\(text.stdout)")
        #expect(text.stdout.contains("session: ") && text.stdout.hasSuffix(EstimateFootnote.text + "\n"))

        let json = try Command.run([CLIBinary.path, "--socket", daemon.socket, "live", "-i", "va", "--count", "1", "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let objects = try json.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(objects.count == 3)
        #expect(objects.prefix(2).allSatisfy { ($0["interfaces"] as? [[String: Any]])?.first?["name"] as? String == "va" })
        #expect(objects.last?["session"] != nil)
    }
}

/// Runs a program with standard streams on /dev/null, its signals reset (the tmux server's
/// panes die when the server is killed only with every signal at its default), and returns its
/// exit status; one still running after `seconds` is killed and the test fails saying so.
func spawnAndWait(_ arguments: [String], seconds: Double = Command.defaultTimeout) throws -> Int32 {
    let pid = try SpawnWithSignals.start([try Command.resolve(arguments[0])] + arguments.dropFirst(), output: "/dev/null")
    guard let status = SpawnWithSignals.wait(pid, within: seconds) else {
        throw CommandTimedOut(command: arguments, seconds: seconds, result: CommandResult(status: -1, stdout: "", stderr: ""), threads: "")
    }
    return status
}
