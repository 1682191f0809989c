import CSQLite
#if canImport(Glibc)
import Glibc
#endif
import IfMeterCore

/// A vnStat 2.x database (`vnstat.db`), read without disturbing a running vnstatd: opened
/// read-only, or immutable when it cannot be locked. Only what an import needs is read.
public struct VnStatDatabase: Sendable {
    /// One interface's history as vnStat kept it.
    public struct Interface: Hashable, Sendable {
        public var name: String
        /// When vnStat began and last counted it (Unix seconds).
        public var created: Double
        public var updated: Double
        public var rxTotal: UInt64
        public var txTotal: UInt64
        /// Rows by resolution: each period's start (Unix seconds) and bytes.
        public var rows: [Resolution: [(start: Int64, rx: UInt64, tx: UInt64)]]

        public static func == (lhs: Interface, rhs: Interface) -> Bool {
            lhs.name == rhs.name && lhs.created == rhs.created && lhs.updated == rhs.updated
                && lhs.rxTotal == rhs.rxTotal && lhs.txTotal == rhs.txTotal
                && Resolution.allCases.allSatisfy { resolution in
                    lhs.rows[resolution, default: []].elementsEqual(rhs.rows[resolution, default: []]) { $0 == $1 }
                }
        }

        public func hash(into hasher: inout Hasher) { hasher.combine(name) }
    }

    /// The `dbversion` values this reader knows: vnStat 2.0 to 2.12 write 1.
    public static let knownVersions: Set<String> = ["1"]

    /// vnStat's tables and the resolution each one is.
    static let tables: [(table: String, resolution: Resolution)] = [
        ("fiveminute", .fiveMinutes), ("hour", .hour), ("day", .day), ("month", .month), ("year", .year),
    ]

    public let path: String
    public internal(set) var interfaces: [Interface]

    /// No interfaces: what tests fill in by hand.
    static func empty() -> VnStatDatabase {
        VnStatDatabase(path: "", interfaces: [])
    }

    private init(path: String, interfaces: [Interface]) {
        self.path = path
        self.interfaces = interfaces
    }

    /// Reads `path`. vnStat writes local time unless it ran with `UseUTC 1`: `utc` says so.
    /// A file that is not a vnStat database, of a version this reader does not know, or
    /// corrupt, is an error naming the file and what is wrong.
    public init(path: String, utc: Bool) throws(StoreError) {
        self.path = path
        func refuse(_ message: String) -> StoreError {
            StoreError(kind: .corrupt, path: path, operation: "import from", message: message)
        }
        let connection: SQLiteConnection
        let check: String?
        do {
            let candidate = try SQLiteConnection(readingOnly: path, immutable: false)
            // A file someone holds locked (vnstatd mid-write) is read as it is on disk.
            connection = (try? candidate.scalarInt("SELECT count(*) FROM sqlite_master", "read")) != nil
                ? candidate : try SQLiteConnection(readingOnly: path, immutable: true)
            check = try connection.scalarText("PRAGMA quick_check", "read")
        } catch where access(path, F_OK) != 0 {
            throw StoreError(kind: .cannotOpen, path: path, operation: "import from", message: "no such file")
        } catch {
            throw refuse("not an SQLite database, or damaged (\(error.message))")
        }
        guard check == "ok" else { throw refuse("damaged: \(check ?? "quick_check failed")") }
        let tables = Set(try Self.strings(connection, "SELECT name FROM sqlite_master WHERE type = 'table'"))
        let needed = ["info", "interface"] + Self.tables.map(\.table)
        guard needed.allSatisfy(tables.contains) else {
            throw refuse("not a vnStat database (no \(needed.filter { !tables.contains($0) }.joined(separator: ", ")) table)")
        }
        let version = try Self.strings(connection, "SELECT value FROM info WHERE name = 'dbversion'").first
        guard let version, Self.knownVersions.contains(version) else {
            throw refuse("vnStat database version \(version ?? "missing") is not one this ifmeter knows (\(Self.knownVersions.sorted().joined(separator: ", ")))")
        }
        // vnStat's dates are text; SQLite turns local time into Unix seconds with 'utc'.
        let seconds = { (column: String) in utc ? "CAST(strftime('%s', \(column)) AS INTEGER)" : "CAST(strftime('%s', \(column), 'utc') AS INTEGER)" }
        let list = try connection.prepare("""
            SELECT id, name, \(seconds("created")), \(seconds("updated")), rxtotal, txtotal FROM interface ORDER BY name
            """, "import from")
        var found: [(id: Int64, interface: Interface)] = []
        while try list.step() {
            found.append((list.int64(0), Interface(
                name: list.text(1) ?? "", created: Double(list.int64(2)), updated: Double(list.int64(3)),
                rxTotal: list.uint64(4), txTotal: list.uint64(5), rows: [:])))
        }
        for index in found.indices {
            for (table, resolution) in Self.tables {
                let rows = try connection.prepare("""
                    SELECT \(seconds("date")), rx, tx FROM \(table) WHERE interface = ?1 ORDER BY date
                    """, "import from")
                rows.bind([.int(found[index].id)])
                var collected: [(start: Int64, rx: UInt64, tx: UInt64)] = []
                while try rows.step() {
                    guard !rows.isNull(0) else { throw refuse("a \(table) row of \(found[index].interface.name) has a date that is not a date") }
                    collected.append((rows.int64(0), rows.uint64(1), rows.uint64(2)))
                }
                found[index].interface.rows[resolution] = collected
            }
        }
        interfaces = found.map(\.interface)
    }

    private static func strings(_ connection: SQLiteConnection, _ sql: String) throws(StoreError) -> [String] {
        let statement = try connection.prepare(sql, "import from")
        var values: [String] = []
        while try statement.step() { values.append(statement.text(0) ?? "") }
        return values
    }
}
