import CSQLite
import IfMeterCore
#if canImport(Glibc)
import Glibc
#endif

/// Opening the database file: what is checked before anything is written, the connection's
/// settings, the migrations, and the one repair ever made to the file's contents.
enum StoreOpening {
    /// The page cache of the store's connection, in KiB.
    private static let pageCacheKiB = 64

    /// Opens (or creates) the database at `path`, checked, configured and migrated, with what
    /// was repaired. Refuses, without writing anything, a file that is not an ifmeter
    /// database, fails its integrity check, or has a newer schema.
    static func open(_ path: String) throws(StoreError) -> (connection: SQLiteConnection, repairs: [String]) {
        let exists = access(path, F_OK) == 0
        let connection = try SQLiteConnection(path: path, create: !exists)
        try check(connection)
        try configure(connection)
        try migrate(connection)
        return (connection, try repairImportedTimes(connection))
    }

    /// Reads the header and schema before anything is written.
    private static func check(_ connection: SQLiteConnection) throws(StoreError) {
        let application = try connection.scalarInt("PRAGMA application_id", "open")
        let version = Int(try connection.scalarInt("PRAGMA user_version", "open"))
        let objects = try connection.scalarInt("SELECT count(*) FROM sqlite_master", "open")
        if application != Schema.applicationID && !(application == 0 && version == 0 && objects == 0) {
            throw StoreError(kind: .corrupt, path: connection.path, operation: "open",
                             message: "it is not an ifmeter database (application_id \(application)); "
                                 + "it was left untouched")
        }
        if version > Schema.version {
            throw StoreError(kind: .newerSchema(found: version, supported: Schema.version),
                             path: connection.path, operation: "open",
                             message: "it has schema version \(version), written by a newer ifmeter; "
                                 + "this one knows up to \(Schema.version). It was left untouched")
        }
        let integrity = try connection.scalarText("PRAGMA quick_check", "open")
        guard integrity == "ok" else {
            throw StoreError(kind: .corrupt, path: connection.path, operation: "open",
                             message: "integrity check failed (\(integrity ?? "no answer")); "
                                 + "it was left untouched")
        }
    }

    /// Imports before ifmeter checked vnStat's values could write times the store cannot
    /// hold: a vnStat `created` of 1960 became `first_seen`, and rows dated before 1970 became
    /// buckets, and the next start refused the whole store. Those values are the import's (the
    /// daemon writes only its own clock's), so they are repaired in one transaction rather
    /// than stop metering: the buckets are deleted and `first_seen` becomes the name's earliest
    /// remaining bucket (else its `last_seen`, else now). Nothing else is ever rewritten.
    private static func repairImportedTimes(_ connection: SQLiteConnection) throws(StoreError) -> [String] {
        func outOf(_ column: String) -> String { "NOT (\(column) BETWEEN 0 AND \(Int64(Statement.acceptedTimes.upperBound)))" }
        let names = try connection.prepare("SELECT name, first_seen FROM interfaces WHERE \(outOf("first_seen"))", "repair")
        var repairs: [String] = []
        while try names.step() {
            repairs.append("interface \(InterfaceName.printable(names.text(0) ?? "")): first_seen \(names.double(1)) is no time "
                + "from 1970 to 9999 (an unchecked vnStat import wrote it); set to its earliest history")
        }
        let buckets = try connection.scalarInt("SELECT count(*) FROM buckets WHERE \(outOf("start"))", "repair")
        if buckets > 0 { repairs.append("\(buckets) buckets dated outside 1970 to 9999 (an unchecked vnStat import wrote them): deleted") }
        guard !repairs.isEmpty else { return [] }
        try connection.transaction("repair") { () throws(StoreError) in
            try connection.execute("DELETE FROM buckets WHERE \(outOf("start"))", "repair")
            try connection.execute("""
                UPDATE interfaces SET first_seen = COALESCE(
                    (SELECT min(start) FROM buckets WHERE buckets.name = interfaces.name),
                    CASE WHEN \(outOf("last_seen")) THEN NULL ELSE last_seen END,
                    CAST(strftime('%s', 'now') AS REAL))
                WHERE \(outOf("first_seen"))
                """, "repair")
        }
        return repairs
    }

    private static func configure(_ connection: SQLiteConnection) throws(StoreError) {
        let mode = try connection.scalarText("PRAGMA journal_mode = WAL", "configure")
        guard mode == "wal" else {
            throw StoreError(kind: .other, path: connection.path, operation: "configure",
                             message: "cannot switch to WAL journaling (got \(mode ?? "nothing"))")
        }
        try connection.execute("PRAGMA synchronous = FULL", "configure")
        // SQLite's default page cache (2 MB) would be the daemon's largest allocation, growing
        // with the interfaces up to that size; the kernel's page cache holds the file anyway,
        // so a page read again costs a pread, not a disk access. 64 KiB keeps a B-tree's upper
        // levels, which is what a save touches again (ifmeter-bench store measures it).
        try connection.execute("PRAGMA cache_size = -\(pageCacheKiB)", "configure")
    }

    private static func migrate(_ connection: SQLiteConnection) throws(StoreError) {
        var version = Int(try connection.scalarInt("PRAGMA user_version", "read"))
        while version < Schema.version {
            let next = version + 1
            try connection.transaction("migrate") { () throws(StoreError) in
                try connection.execute(Schema.migrations[version], "migrate")
                try connection.execute("PRAGMA user_version = \(next)", "migrate")
                try connection.execute("PRAGMA application_id = \(Schema.applicationID)", "migrate")
            }
            version = next
        }
    }
}
