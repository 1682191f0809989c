import Foundation
@testable import IfMeterHistory
@testable import IfMeterStore
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// vnStat files an admin might be handed: a real vnStat 2.10 database (the fuzz seed) edited
/// into each shape vnStat never writes. Each is refused before anything is imported, with
/// what is wrong; none runs a hostile schema or blocks.
@Suite("vnStat files that vnStat did not write", .ownThread, .timeLimit(.minutes(3)))
struct VnStatHostileFileTests {
    static let seed = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/corpus/vnstat/seed-vnstat-2.10.db").path

    /// The seed with `sql` applied, in a directory of its own.
    func edited(_ sql: String) throws -> (TemporaryDirectory, String) {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/vnstat.db"
        try FileManager.default.copyItem(atPath: Self.seed, toPath: path)
        if !sql.isEmpty { try SQLiteConnection(path: path, create: false).execute(sql, "edit") }
        return (directory, path)
    }

    @Test("the unedited seed is read")
    func seedReads() throws {
        let (directory, path) = try edited("")
        #expect(try !VnStatDatabase(path: path, utc: true).interfaces.isEmpty)
        withExtendedLifetime(directory) {}
    }

    @Test("refused, saying why", arguments: [
        ("UPDATE interface SET created = '1960-01-01 00:00:00'", "created is -315619200"),
        ("UPDATE interface SET updated = 'yesterday'", "updated is not a date"),
        ("UPDATE day SET date = '1969-12-31'", "not a time from 1970 to 9999"),
        ("UPDATE day SET rx = -5", "rx is -5 bytes"),
        ("UPDATE interface SET rxtotal = 9223372036854775807", "rxtotal is 9223372036854775807 bytes"),
        ("UPDATE interface SET name = 'eth0' || char(27) || '[2J'", #"eth0\x1b[2J" is not an interface name"#),
        ("UPDATE interface SET name = 'abcdefghijklmnop'", "is not an interface name"),
        ("ALTER TABLE day ADD COLUMN burn INTEGER AS (length(hex(zeroblob(500000000))))", "column burn of table day is generated or hidden"),
        ("CREATE VIEW totals AS SELECT * FROM day", "it has a view"),
        ("CREATE TRIGGER t AFTER INSERT ON info BEGIN SELECT 1; END", "it has a trigger"),
        ("CREATE VIRTUAL TABLE notes USING fts5(body)", "table \"notes\" that vnStat does not write"),
        ("CREATE TABLE extra (x)", "table \"extra\" that vnStat does not write"),
        ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1025) INSERT INTO interface (name, active, created, updated, rxcounter, txcounter, rxtotal, txtotal) SELECT 'x' || i, 1, '2026-01-01', '2026-01-01', 0, 0, 0, 0 FROM n",
         "more than 1024 interfaces"),
    ] as [(String, String)])
    func refused(_ sql: String, _ problem: String) throws {
        let (directory, path) = try edited(sql)
        #expect {
            _ = try VnStatDatabase(path: path, utc: true)
        } throws: { error in
            "\(error)".contains(path) && "\(error)".contains(problem)
        }
        withExtendedLifetime(directory) {}
    }

    @Test("a FIFO, a symbolic link, a directory are refused at once, without opening what they lead to")
    func notRegularFiles() throws {
        let directory = try TemporaryDirectory()
        let fifo = directory.path + "/vnstat.db"
        #expect(mkfifo(fifo, 0o600) == 0)
        // On a thread with a deadline: a regression would block in open(2) until a writer came.
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var message = ""
        Thread.detachNewThread {
            do { _ = try VnStatDatabase(path: fifo, utc: true) } catch { message = "\(error)" }
            done.signal()
        }
        if done.wait(timeout: .now() + 10) == .timedOut {
            let writer = open(fifo, O_WRONLY | O_NONBLOCK)  // releases the blocked reader
            close(writer)
            Issue.record("opening a FIFO blocked")
            _ = done.wait(timeout: .now() + 10)
        }
        #expect(message.contains("it is a FIFO"), "\(message)")
        let link = directory.path + "/link.db"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: Self.seed)
        #expect { _ = try VnStatDatabase(path: link, utc: true) } throws: { "\($0)".contains("symbolic link") }
        #expect { _ = try VnStatDatabase(path: directory.path, utc: true) } throws: { "\($0)".contains("a directory") }
    }
}
