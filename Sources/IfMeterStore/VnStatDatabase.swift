import CSQLite
#if canImport(Glibc)
import Glibc
#endif
import IfMeterCore
import IfMeterHistory

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
    package static let tables: [(table: String, resolution: Resolution)] = [
        ("fiveminute", .fiveMinutes), ("hour", .hour), ("day", .day), ("month", .month), ("year", .year),
    ]

    public let path: String
    /// Whether its dates were read as UTC (vnStat's `UseUTC 1`) rather than local time.
    public internal(set) var utc: Bool
    public internal(set) var interfaces: [Interface]

    /// No interfaces: what tests fill in by hand.
    static func empty() -> VnStatDatabase {
        VnStatDatabase(path: "", interfaces: [])
    }

    private init(path: String, interfaces: [Interface]) {
        self.path = path
        self.utc = false
        self.interfaces = interfaces
    }

    /// What a vnStat database holds at most, by what vnStat itself keeps (its default retention
    /// is a few hundred rows an interface; a year of a 100 Gbit/s link is under 2^59 bytes).
    /// Past any of these the file is refused: it is not one vnStat wrote.
    public enum Limits {
        public static let fileBytes: Int64 = 1 << 30
        public static let interfaces = 1024
        public static let rows = 1_000_000
        public static let bytesPerValue: Int64 = 1 << 60
        /// SQLite steps, in thousands, for reading the whole file.
        public static let steps = 200_000
    }

    /// vnStat 2.x's tables; a file with any other table, a view, a trigger, a virtual table or
    /// a generated or hidden column is refused before anything in it is read.
    static let knownTables: Set<String> = ["info", "interface", "fiveminute", "hour", "day", "month", "year", "top",
                                           "sqlite_sequence", "sqlite_stat1", "sqlite_stat4"]

    /// Reads `path`. vnStat writes local time unless it ran with `UseUTC 1`: `utc` says so.
    /// A file that is not a vnStat database, of a version this reader does not know, corrupt,
    /// or holding a value vnStat never writes (a time outside 1970 to 9999, a negative or
    /// impossible byte count, a name no interface can have) is an error naming the file and
    /// what is wrong, and nothing is imported from it.
    public init(path: String, utc: Bool) throws(StoreError) {
        self.path = path
        self.utc = utc
        func refuse(_ message: String) -> StoreError {
            StoreError(kind: .corrupt, path: path, operation: "import from", message: message)
        }
        let file = try Self.openRegularFile(path)
        let connection: SQLiteConnection
        let check: String?
        do throws(StoreError) {
            let candidate = try SQLiteConnection(readingOnly: path, immutable: false)
            try candidate.distrust(steps: Limits.steps)
            // A file someone holds locked (vnstatd mid-write) is read as it is on disk.
            if (try? candidate.scalarInt("SELECT count(*) FROM sqlite_master", "read")) != nil {
                connection = candidate
            } else {
                connection = try SQLiteConnection(readingOnly: path, immutable: true)
                try connection.distrust(steps: Limits.steps)
            }
            var now = stat()
            // The file SQLite opened is the one checked above, not one put in its place since.
            guard stat(path, &now) == 0, now.st_dev == file.info.st_dev, now.st_ino == file.info.st_ino else {
                throw refuse("it was replaced while being opened")
            }
            try Self.checkSchema(connection, refuse)
            check = try connection.scalarText("PRAGMA quick_check", "read")
        } catch let error where error.operation == "import from" {
            throw error
        } catch {
            throw refuse("not an SQLite database, or damaged (\(error.message))")
        }
        guard check == "ok" else { throw refuse("damaged: \(check ?? "quick_check failed")") }
        let version = try Self.strings(connection, "SELECT value FROM info WHERE name = 'dbversion'").first
        guard let version, Self.knownVersions.contains(version) else {
            throw refuse("vnStat database version \(version.map { InterfaceName.printable($0) } ?? "missing") is not one this ifmeter knows (\(Self.knownVersions.sorted().joined(separator: ", ")))")
        }
        // vnStat's dates are text; SQLite turns local time into Unix seconds with 'utc'. A date
        // SQLite cannot read is NULL.
        let seconds = { (column: String) in utc ? "CAST(strftime('%s', \(column)) AS INTEGER)" : "CAST(strftime('%s', \(column), 'utc') AS INTEGER)" }
        let list = try connection.prepare("""
            SELECT id, name, \(seconds("created")), \(seconds("updated")), rxtotal, txtotal FROM interface ORDER BY name
            """, "import from")
        var found: [(id: Int64, interface: Interface)] = []
        while try list.step() {
            guard found.count < Limits.interfaces else { throw refuse("more than \(Limits.interfaces) interfaces") }
            let name = list.text(1) ?? ""
            guard Self.isInterfaceName(name) else {
                throw refuse("\"\(InterfaceName.printable(name))\" is not an interface name (1 to 15 bytes, no /, :, space or control character)")
            }
            let what = "interface \(name)"
            found.append((list.int64(0), Interface(
                name: name, created: try Self.time(list, 2, what + ": created", refuse),
                updated: try Self.time(list, 3, what + ": updated", refuse),
                rxTotal: try Self.bytes(list, 4, what + ": rxtotal", refuse), txTotal: try Self.bytes(list, 5, what + ": txtotal", refuse),
                rows: [:])))
        }
        var rowCount = 0
        for index in found.indices {
            let name = found[index].interface.name
            for (table, resolution) in Self.tables {
                let rows = try connection.prepare("""
                    SELECT \(seconds("date")), rx, tx FROM \(table) WHERE interface = ?1 ORDER BY date
                    """, "import from")
                rows.bind([.int(found[index].id)])
                var collected: [(start: Int64, rx: UInt64, tx: UInt64)] = []
                while try rows.step() {
                    rowCount += 1
                    guard rowCount <= Limits.rows else { throw refuse("more than \(Limits.rows) rows") }
                    let what = "a \(table) row of \(name)"
                    collected.append((Int64(try Self.time(rows, 0, what, refuse)),
                                      try Self.bytes(rows, 1, what + ": rx", refuse), try Self.bytes(rows, 2, what + ": tx", refuse)))
                }
                found[index].interface.rows[resolution] = collected
            }
        }
        interfaces = found.map(\.interface)
    }

    /// Opens `path` without following a symlink and without blocking (a FIFO would hold the
    /// store's thread until someone wrote to it), and refuses anything but a regular file of a
    /// vnStat database's size. The descriptor is kept while SQLite opens the same path.
    private static func openRegularFile(_ path: String) throws(StoreError) -> OpenedFile {
        func refuse(_ message: String, kind: StoreError.Kind = .corrupt) -> StoreError {
            StoreError(kind: kind, path: path, operation: "import from", message: message)
        }
        guard let fd = FileDescriptor(adopting: open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)) else {
            let error = errno
            switch error {
            case ENOENT: throw refuse("no such file", kind: .cannotOpen)
            case ELOOP: throw refuse("it is a symbolic link; give the file it points to", kind: .cannotOpen)
            default: throw refuse(Errno(error).description, kind: .cannotOpen)
            }
        }
        var info = stat()
        guard fstat(fd.rawValue, &info) == 0 else {
            throw refuse(Errno(errno).description, kind: .cannotOpen)
        }
        let type = info.st_mode & S_IFMT
        guard type == S_IFREG else {
            let what = switch type {
            case S_IFIFO: "a FIFO"
            case S_IFDIR: "a directory"
            case S_IFCHR, S_IFBLK: "a device"
            case S_IFSOCK: "a socket"
            default: "not a regular file"
            }
            throw refuse("it is \(what), not a vnStat database file", kind: .cannotOpen)
        }
        guard Int64(info.st_size) <= Limits.fileBytes else {
            throw refuse("\(info.st_size) bytes, larger than any vnStat database (at most \(Limits.fileBytes))")
        }
        return OpenedFile(fd: fd, info: info)
    }

    /// A file ``openRegularFile(_:)`` opened, and what it was then.
    private struct OpenedFile: ~Copyable {
        let fd: FileDescriptor
        let info: stat
    }

    /// Refuses a schema vnStat never writes, before any of it runs: views, triggers, virtual
    /// tables, tables of other names, generated or hidden columns.
    private static func checkSchema(_ connection: SQLiteConnection, _ refuse: (String) -> StoreError) throws(StoreError) {
        // "read": SQLite's own errors here (a damaged file) are reported as damage by the caller.
        let objects = try connection.prepare("SELECT type, name, coalesce(sql, '') FROM sqlite_master", "read")
        var tables: Set<String> = []
        while try objects.step() {
            let (type, name, sql) = (objects.text(0) ?? "", objects.text(1) ?? "", objects.text(2) ?? "")
            let shown = InterfaceName.printable(String(name.prefix(64)))
            switch type {
            case "table":
                guard knownTables.contains(name) else { throw refuse("not a vnStat database: it has a table \"\(shown)\" that vnStat does not write") }
                guard !sql.uppercased().hasPrefix("CREATE VIRTUAL") else { throw refuse("not a vnStat database: table \(shown) is a virtual table") }
                tables.insert(name)
            case "index": continue
            default: throw refuse("not a vnStat database: it has a \(InterfaceName.printable(String(type.prefix(16)))) (\"\(shown)\"), which vnStat does not write")
            }
        }
        let needed = ["info", "interface"] + Self.tables.map(\.table)
        guard needed.allSatisfy(tables.contains) else {
            throw refuse("not a vnStat database (no \(needed.filter { !tables.contains($0) }.joined(separator: ", ")) table)")
        }
        for table in tables.sorted() where !table.hasPrefix("sqlite_") {
            let columns = try connection.prepare("SELECT name, hidden FROM pragma_table_xinfo(?1)", "read")
            columns.bind([.text(table)])
            while try columns.step() {
                guard columns.int64(1) == 0 else {
                    throw refuse("not a vnStat database: column \(InterfaceName.printable(columns.text(0) ?? "")) of table \(table) is generated or hidden")
                }
            }
        }
    }

    /// A name a kernel interface can have: 1 to 15 bytes, none of NUL, `/`, `:`, white space
    /// or a control character.
    package static func isInterfaceName(_ name: String) -> Bool {
        (1...15).contains(name.utf8.count) && !name.unicodeScalars.contains {
            $0 == "/" || $0 == ":" || $0.properties.isWhitespace || $0.value < 0x20 || (0x7f...0x9f).contains($0.value)
        }
    }

    private static func time(_ statement: Statement, _ column: Int32, _ what: String, _ refuse: (String) -> StoreError) throws(StoreError) -> Double {
        guard !statement.isNull(column) else { throw refuse("\(what) is not a date") }
        let value = Double(statement.int64(column))
        guard Statement.acceptedTimes.contains(value) else {
            throw refuse("\(what) is \(statement.int64(column)) in Unix seconds, not a time from 1970 to 9999")
        }
        return value
    }

    private static func bytes(_ statement: Statement, _ column: Int32, _ what: String, _ refuse: (String) -> StoreError) throws(StoreError) -> UInt64 {
        let value = statement.int64(column)
        guard (0...Limits.bytesPerValue).contains(value) else {
            throw refuse("\(what) is \(value) bytes, not a count vnStat writes (0 to 2^60)")
        }
        return UInt64(value)
    }

    private static func strings(_ connection: SQLiteConnection, _ sql: String) throws(StoreError) -> [String] {
        let statement = try connection.prepare(sql, "import from")
        var values: [String] = []
        while try statement.step() { values.append(statement.text(0) ?? "") }
        return values
    }
}
