import FoundationEssentials
import IfMeterCore
import IfMeterHistory
import IfMeterStore
#if canImport(Glibc)
import Glibc
#endif

/// The vnStat import's targets: a vnStat file of arbitrary bytes, and a real one whose schema
/// and values a fuzzer edits.
extension FuzzTargets {
    // MARK: vnstat

    /// A vnStat database file of arbitrary bytes (seeded with a real one), read as an import
    /// reads it. Invariants: no trap; either an error naming the file, or interfaces whose rows
    /// have the resolutions vnStat has.
    public static func vnstat(_ bytes: [UInt8]) {
        var template = Array("/tmp/ifmeter-fuzz-vnstat-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        guard fd >= 0 else { return }
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { unlink(path) }
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        do {
            let database = try VnStatDatabase(path: path, utc: bytes.first.map { $0 & 1 == 1 } ?? false)
            for interface in database.interfaces where interface.rows.count != VnStatDatabase.tables.count {
                fatalError("\(interface.name) has rows for \(interface.rows.count) resolutions")
            }
        } catch {
            guard error.path == path else { fatalError("the error names \(error.path), not the file read") }
        }
    }

    // MARK: vnstat-schema

    /// The database the real vnstatd 2.10 wrote (the `vnstat` corpus's seed).
    static let vnStatSeed = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("corpus/vnstat/seed-vnstat-2.10.db").path

    /// The real vnStat file edited by a script of SQL statements the input chooses: views,
    /// triggers, generated columns, virtual and unknown tables, expression indexes, dropped
    /// tables, and times, byte counts and names of any value and type. Then read and imported
    /// into a new store, which is opened and loaded again. Invariants: no trap; a read that
    /// fails names the vnStat file; what is read has times in 1970…9999, counts in 0…2^60 and
    /// interface names; and the store starts from whatever the import wrote.
    public static func vnstatSchema(_ bytes: [UInt8]) {
        var input = ByteReader(bytes)
        var template = Array("/tmp/ifmeter-fuzz-schema-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { return }
        let directory = String(cString: made)
        defer { _ = try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/vnstat.db"
        guard (try? FileManager.default.copyItem(atPath: vnStatSeed, toPath: path)) != nil else { fatalError("no seed at \(vnStatSeed)") }
        if let editor = try? SQLiteConnection(path: path, create: false) {
            for _ in 0..<Int(input.byte() % 8) where !input.isEmpty { try? editor.execute(schemaEdit(&input), "edit") }
        }
        let database: VnStatDatabase
        do {
            database = try VnStatDatabase(path: path, utc: input.byte() & 1 == 1)
        } catch {
            guard error.path == path else { fatalError("the error names \(error.path), not the file read") }
            return
        }
        for interface in database.interfaces {
            guard VnStatDatabase.isInterfaceName(interface.name) else { fatalError("read a name \(interface.name.debugDescription)") }
            let times = [interface.created, interface.updated] + interface.rows.values.flatMap { $0.map { Double($0.start) } }
            guard times.allSatisfy(Statement.acceptedTimes.contains) else { fatalError("read a time out of range for \(interface.name)") }
            let counts = [interface.rxTotal, interface.txTotal] + interface.rows.values.flatMap { $0.flatMap { [$0.rx, $0.tx] } }
            guard counts.allSatisfy({ $0 <= UInt64(VnStatDatabase.Limits.bytesPerValue) }) else { fatalError("read a count out of range") }
        }
        let storePath = directory + "/ifmeter.db"
        do {
            _ = try Store(path: storePath).imports.vnStat(database, dryRun: false)
            let reopened = try Store(path: storePath)
            guard reopened.repairs.isEmpty else { fatalError("the import wrote what the store had to repair: \(reopened.repairs)") }
            _ = try reopened.loader.history()
            _ = try reopened.queries.usage(.interfaceClass(.other), resolution: .day)
        } catch {
            fatalError("the store does not start from what the import wrote: \(error)")
        }
    }

    /// One SQL statement against a vnStat file, as `input` chooses it.
    static func schemaEdit(_ input: inout ByteReader) -> String {
        let tables = ["fiveminute", "hour", "day", "month", "year", "top", "interface", "info"]
        let table = tables[Int(input.byte()) % tables.count]
        let value = sqlValue(&input), other = sqlValue(&input)
        let n = input.byte()
        switch input.byte() % 16 {
        case 0: return "UPDATE interface SET created = \(value)"
        case 1: return "UPDATE interface SET updated = \(value)"
        case 2: return "UPDATE \(table) SET date = \(value) WHERE id = (SELECT min(id) FROM \(table))"
        case 3: return "UPDATE \(table) SET rx = \(value), tx = \(other)"
        case 4: return "UPDATE interface SET name = \(value)"
        case 5: return "UPDATE interface SET rxtotal = \(value), txtotal = \(other)"
        case 6: return "CREATE VIEW v\(n) AS SELECT * FROM \(table)"
        case 7: return "CREATE TRIGGER t\(n) BEFORE UPDATE ON \(table) BEGIN SELECT RAISE(ABORT, 'no'); END"
        case 8: return "ALTER TABLE \(table) ADD COLUMN g\(n) AS (length(hex(zeroblob(\(Int(n) << 20)))))"
        case 9: return n & 1 == 0 ? "CREATE VIRTUAL TABLE x\(n) USING fts5(a)" : "CREATE VIRTUAL TABLE x\(n) USING rtree(id, a, b)"
        case 10: return "CREATE TABLE \(n & 1 == 0 ? "extra\(n)" : "sqlite_stat1x") (a)"
        case 11: return """
            INSERT INTO interface (name, active, created, updated, rxcounter, txcounter, rxtotal, txtotal)
            VALUES (\(value), 1, \(other), \(sqlValue(&input)), 0, 0, \(sqlValue(&input)), \(sqlValue(&input)))
            """
        case 12: return "INSERT INTO \(table) (interface, date, rx, tx) VALUES (\(Int(n % 3)), \(value), \(other), \(sqlValue(&input)))"
        case 13: return "UPDATE info SET value = \(value) WHERE name = 'dbversion'"
        case 14: return "DROP TABLE \(table)"
        default: return "CREATE INDEX i\(n) ON \(table) (length(hex(zeroblob(\(Int(n) << 20)))))"
        }
    }

    /// A literal of any SQL type: dates real and impossible, integers at the edges, text with
    /// control bytes, reals, blobs, NULL.
    static func sqlValue(_ input: inout ByteReader) -> String {
        let dates = ["'1960-01-01 00:00:00'", "'1970-01-01'", "'2026-03-29 02:30:00'", "'9999-12-31 23:59:59'", "'10000-01-01'",
                     "'2026-13-45'", "''", "'now'", "'yesterday'"]
        switch input.byte() % 8 {
        case 0: return dates[Int(input.byte()) % dates.count]
        case 1: return String(Int64(bitPattern: input.counter()))
        case 2: return ["-1", "0", "1", "9223372036854775807", "-9223372036854775808", "1152921504606846977"][Int(input.byte()) % 6]
        case 3: return ["1e300", "-1e300", "0.5", "'NaN'"][Int(input.byte()) % 4]
        case 4:
            var blob = "x'"
            for _ in 0..<Int(input.byte() % 8) {
                let byte = input.byte()
                blob += String(byte >> 4, radix: 16) + String(byte & 0xf, radix: 16)
            }
            return blob + "'"
        case 6:
            var text = "'eth"
            for _ in 0..<Int(input.byte() % 20) {
                let scalar = Unicode.Scalar(input.byte() % 0x7f + 1)
                text += scalar == "'" ? "''" : String(scalar)
            }
            return text + "'"
        default: return "char(\(input.byte()), \(input.byte()))"
        }
    }
}
