import Foundation
import IfMeterTestSupport
import Testing

/// `ifmeter log` reads the estimate log files itself.
@Suite("ifmeter log", .ownThread, .timeLimit(.minutes(10)))
struct CLILogTests {
    static func estimate(_ name: String, _ start: Int, rx: Int, class interfaceClass: String = "ethernet") -> String {
        #"{"class":"\#(interfaceClass)","continuity":{"gaps":0,"implausible_dropped":0,"resets":0},"end":\#(start + 60),"epoch":{"boot_id":"b1","generation":0,"ifindex":2,"since":\#(start)},"interface":"\#(name)","labels":["estimate"],"rx_bytes":\#(rx),"rx_packets":1,"start":\#(start),"tx_bytes":10,"tx_packets":1,"type":"estimate"}"#
    }

    static func event(_ name: String, _ at: Int, kind: String) -> String {
        #"{"at":\#(at),"detail":"counters went backwards","interface":"\#(name)","kind":"\#(kind)","type":"event"}"#
    }

    /// A log directory with two rotated files and a current one whose last record is torn.
    func rotatedDirectory() throws -> (String, [String]) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ifmeter-log-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let oldest = [Self.estimate("eth0", 1000, rx: 1), Self.estimate("wwan0", 1000, rx: 2, class: "cellular")]
        let older = [Self.event("wwan0", 1100, kind: "reset"), Self.estimate("eth0", 1200, rx: 3)]
        let current = [Self.estimate("wwan0", 1300, rx: 4, class: "cellular"), Self.event("eth0", 1400, kind: "gap")]
        try (oldest.joined(separator: "\n") + "\n").write(toFile: directory + "/estimates.jsonl.2", atomically: true, encoding: .utf8)
        try (older.joined(separator: "\n") + "\nthis line is not a record\n").write(toFile: directory + "/estimates.jsonl.1", atomically: true, encoding: .utf8)
        try (current.joined(separator: "\n") + "\n" + String(Self.estimate("eth0", 1500, rx: 5).prefix(40)))
            .write(toFile: directory + "/estimates.jsonl", atomically: true, encoding: .utf8)
        return (directory, oldest + older + current)
    }

    @Test("rotated files oldest first, the torn last line skipped, junk reported; --json passes records through")
    func order() throws {
        let (directory, records) = try rotatedDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try Command.run([CLIBinary.path, "log", "--log-dir", directory, "--json"])
        #expect(result.status == 0)
        #expect(result.stdout == records.joined(separator: "\n") + "\n")
        #expect(result.stderr == "ifmeter log: skipped 1 line that are not log records\n")
    }

    @Test("a file seen twice during a rotation (the same inode under two names) is read once")
    func sameFileTwice() throws {
        let (directory, records) = try rotatedDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // As if the listing saw estimates.jsonl.1 both before and after a rotation moved it.
        try FileManager.default.linkItem(atPath: directory + "/estimates.jsonl.1", toPath: directory + "/estimates.jsonl.3")
        let result = try Command.run([CLIBinary.path, "log", "--log-dir", directory, "--json"])
        #expect(result.status == 0)
        #expect(result.stdout == records.joined(separator: "\n") + "\n")
    }

    @Test("filters: interface, class, kind, time")
    func filters() throws {
        let (directory, _) = try rotatedDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func run(_ arguments: [String]) throws -> [String] {
            let result = try Command.run([CLIBinary.path, "log", "--log-dir", directory, "--json"] + arguments)
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdout.split(separator: "\n").map { line in
                let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
                return "\(object?["interface"] ?? "")/\(object?["kind"] ?? object?["type"] ?? "")"
            }
        }
        #expect(try run(["-i", "wwan0"]) == ["wwan0/estimate", "wwan0/reset", "wwan0/estimate"])
        #expect(try run(["--class", "ethernet"]) == ["eth0/estimate", "eth0/estimate", "eth0/gap"])
        #expect(try run(["--kind", "event"]) == ["wwan0/reset", "eth0/gap"])
        #expect(try run(["--kind", "reset"]) == ["wwan0/reset"])
        #expect(try run(["--from", "@1100", "--to", "@1300"]) == ["wwan0/reset", "eth0/estimate"])
    }

    @Test("human lines: time, interface, figures or what the event means")
    func text() throws {
        let (directory, _) = try rotatedDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try Command.run([CLIBinary.path, "log", "--log-dir", directory, "-i", "wwan0"], environment: ["TZ": "UTC"])
        #expect(result.stdout == """
            1970-01-01 00:16:40  wwan0         cellular   rx 2 B          tx 10 B         over 60 s
            1970-01-01 00:18:20  wwan0         event reset: counters went back; counting goes on from zero (counters went backwards)
            1970-01-01 00:21:40  wwan0         cellular   rx 4 B          tx 10 B         over 60 s
            Estimates from interface counters: they include protocol overhead, are not per-application, and tunnel traffic is counted again on the link beneath it.

            """)
    }

    @Test("no log: where it looked, exit 66")
    func missing() throws {
        let result = try Command.run([CLIBinary.path, "log", "--log-dir", "/nonexistent/ifmeter"])
        #expect(result.status == 66)
        #expect(result.stderr.hasPrefix("ifmeter: no estimate log in /nonexistent/ifmeter;"))
    }
}

/// `log --follow` while the real daemon writes and rotates its log.
@Suite("ifmeter log --follow", .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason), .ownThread, .timeLimit(.minutes(10)))
struct CLILogFollowTests {
    @Test("follows the daemon across rotations: every record once, in order")
    func follow() throws {
        let pair = try VethPair(subnet: 86)
        let daemon = try DaemonProcess(namespace: pair.left, config: """
            interval = 1
            save_interval = 1
            fold_interval = 0
            log_max_size = 4096
            log_files = 100
            """)
        try daemon.start()
        let follower = Process()
        follower.executableURL = URL(fileURLWithPath: CLIBinary.path)
        follower.arguments = ["log", "--follow", "--json", "--log-dir", daemon.logDirectory]
        let output = Pipe()
        follower.standardOutput = output
        try follower.run()
        defer { if follower.isRunning { kill(follower.processIdentifier, SIGKILL) } }

        // Traffic every round, until the log has rotated and the new file has records too.
        let current = daemon.logDirectory + "/estimates.jsonl"
        func rotatedAndWritten() -> Bool {
            FileManager.default.fileExists(atPath: current + ".1")
                && ((try? String(contentsOfFile: current, encoding: .utf8))?.filter { $0 == "\n" }.count ?? 0) >= 2
        }
        let deadline = Date().addingTimeInterval(60)
        while !rotatedAndWritten() && Date() < deadline {
            try pair.sendLeftToRight(count: 20, payload: 200)
            usleep(200_000)
        }
        #expect(rotatedAndWritten())
        #expect(try daemon.stop() == 0)
        // Everything the daemon wrote, oldest file first.
        var files = (1...100).map { "\(daemon.logDirectory)/estimates.jsonl.\($0)" }.filter { FileManager.default.fileExists(atPath: $0) }
        files = files.reversed() + [daemon.logDirectory + "/estimates.jsonl"]
        let written = try files.flatMap { try String(contentsOfFile: $0, encoding: .utf8).split(separator: "\n").map(String.init) }
        // The follower has read all of it once it printed as many lines; then Ctrl-C ends it.
        let reader = LineReader(output.fileHandleForReading.fileDescriptor)
        var followed: [String] = []
        let readDeadline = Date().addingTimeInterval(60)
        while followed.count < written.count, let line = reader.next(until: readDeadline) { followed.append(line) }
        kill(follower.processIdentifier, SIGINT)
        while let line = reader.next(until: Date().addingTimeInterval(30)) { followed.append(line) }
        #expect(try follower.awaitExit("ifmeter log --follow after SIGINT") == 0)
        #expect(written.count > 10)
        #expect(followed == written)
    }
}

/// Lines from a descriptor, each waited for no later than a deadline (nil then, or at EOF).
final class LineReader {
    private let fd: Int32
    private var buffer: [UInt8] = []

    init(_ fd: Int32) { self.fd = fd }

    func next(until deadline: Date) -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let remaining = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, remaining) > 0 else { return nil }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = read(fd, &chunk, chunk.count)
            guard count > 0 else { return nil }
            buffer += chunk[..<count]
        }
    }
}
