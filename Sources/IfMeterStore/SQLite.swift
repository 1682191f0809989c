import IfMeterCore
import IfMeterHistory
import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// A thin owner of one `sqlite3` connection: prepared statements, transactions, typed errors.
package final class SQLiteConnection {
    let handle: OpaquePointer
    let path: String
    /// Progress-handler calls left before a statement is interrupted (``distrust(steps:)``).
    private var progressBudget: UnsafeMutablePointer<Int>?

    /// Opens `path`; creates it only when `create` is true (an existing file is never replaced).
    package convenience init(path: String, create: Bool) throws(StoreError) {
        // NOFOLLOW: the database, like the lock, is never reached through a symlink.
        try self.init(name: path, path: path, flags: SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0)
            | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW)
    }

    /// Opens another program's database read-only (`mode=ro`); `immutable` also tells SQLite
    /// the file cannot change, so it takes no lock at all (for a file it cannot lock).
    convenience init(readingOnly path: String, immutable: Bool) throws(StoreError) {
        // By Unicode scalar: U+0600 followed by "?" is one Character, which equals no "?".
        var escaped = ""
        for scalar in path.unicodeScalars {
            switch scalar {
            case "%", "?", "#": escaped += "%" + String(scalar.value, radix: 16, uppercase: true)
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        try self.init(name: "file:\(escaped)?mode=ro\(immutable ? "&immutable=1" : "")", path: path,
                      flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX)
    }

    private init(name: String, path: String, flags: Int32) throws(StoreError) {
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(name, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            var message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_close_v2(handle)
            // SQLite says only "unable to open database file" when NOFOLLOW met a symlink.
            var info = stat()
            if flags & SQLITE_OPEN_NOFOLLOW != 0, lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK {
                message += " (it is a symbolic link, and ifmeterd opens its database only as a file of its own)"
            }
            throw StoreError(kind: Self.kind(code), path: path, operation: "open", message: message)
        }
        self.handle = handle
        self.path = path
        sqlite3_extended_result_codes(handle, 1)
        // Another program may hold the file briefly (a backup, the sqlite3 shell): wait for it
        // rather than fail, from the very first read.
        sqlite3_busy_timeout(handle, 10_000)
        Self.registerCounterFunctions(handle)
    }

    /// Counters are 64-bit unsigned, stored as SQLite's signed integers bit for bit, and
    /// SQLite's `+` turns a sum past 2^63 into a float. `ifm_add(a, b)` adds them as unsigned
    /// and holds a sum past 2^64 − 1 there; `ifm_overflows(a1, b1, …)` is 1 when any pair
    /// would, so the row can be counted implausible (labelled) in the same statement.
    private static func registerCounterFunctions(_ handle: OpaquePointer) {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS
        sqlite3_create_function_v2(handle, "ifm_add", 2, flags, nil, { context, _, values in
            let (sum, overflow) = unsigned(values![0]).addingReportingOverflow(unsigned(values![1]))
            sqlite3_result_int64(context, Int64(bitPattern: overflow ? UInt64.max : sum))
        }, nil, nil, nil)
        sqlite3_create_function_v2(handle, "ifm_overflows", -1, flags, nil, { context, count, values in
            var overflows = false
            for pair in stride(from: 0, to: Int(count) - 1, by: 2) {
                overflows = overflows || unsigned(values![pair]).addingReportingOverflow(unsigned(values![pair + 1])).overflow
            }
            sqlite3_result_int64(context, overflows ? 1 : 0)
        }, nil, nil, nil)
    }

    /// Hardens this connection for a file another program wrote: SQLite's defensive mode,
    /// schema functions only if innocuous, no attachments, small limits on values, columns and
    /// expressions, and at most `steps` thousand virtual-machine steps for all its statements
    /// together, after which each is interrupted. A hostile schema or value then costs a
    /// bounded amount of time and memory, not the store's thread.
    func distrust(steps: Int) throws(StoreError) {
        guard ifm_sqlite3_defensive(handle) == SQLITE_OK, ifm_sqlite3_untrusted_schema(handle) == SQLITE_OK else {
            throw StoreError(kind: .other, path: path, operation: "open", message: "cannot put SQLite in defensive mode")
        }
        for (limit, value) in [(SQLITE_LIMIT_LENGTH, 1 << 20), (SQLITE_LIMIT_COLUMN, 64), (SQLITE_LIMIT_EXPR_DEPTH, 64),
                               (SQLITE_LIMIT_COMPOUND_SELECT, 8), (SQLITE_LIMIT_FUNCTION_ARG, 8), (SQLITE_LIMIT_ATTACHED, 0),
                               (SQLITE_LIMIT_TRIGGER_DEPTH, 1), (SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 64)] as [(Int32, Int32)] {
            sqlite3_limit(handle, limit, value)
        }
        let budget = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        budget.initialize(to: steps)
        progressBudget = budget
        sqlite3_progress_handler(handle, 1000, { context in
            let left = context!.assumingMemoryBound(to: Int.self)
            left.pointee -= 1
            return left.pointee < 0 ? 1 : 0
        }, budget)
    }

    deinit {
        sqlite3_close_v2(handle)
        progressBudget?.deallocate()
    }

    static func kind(_ code: Int32) -> StoreError.Kind {
        switch code & 0xff {
        case SQLITE_CORRUPT, SQLITE_NOTADB: .corrupt
        case SQLITE_FULL: .full
        case SQLITE_READONLY, SQLITE_PERM: .readOnly
        case SQLITE_CANTOPEN: .cannotOpen
        case SQLITE_IOERR: .io
        case SQLITE_BUSY, SQLITE_LOCKED: .locked(byPID: nil)
        default: .other
        }
    }

    func error(_ code: Int32, _ operation: String) -> StoreError {
        StoreError(kind: Self.kind(code), path: path, operation: operation,
                   message: String(cString: sqlite3_errmsg(handle)))
    }

    /// Runs one or more statements that return no rows.
    package func execute(_ sql: String, _ operation: String) throws(StoreError) {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw error(code, operation) }
    }

    func prepare(_ sql: String, _ operation: String) throws(StoreError) -> Statement {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else { throw error(code, operation) }
        return Statement(statement, connection: self, operation: operation)
    }

    /// `BEGIN IMMEDIATE` … `COMMIT`, rolled back if `body` or the commit fails, or — a dry
    /// run — when `commit` is false.
    func transaction<T>(_ operation: String, commit: Bool = true, _ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try execute("BEGIN IMMEDIATE", operation)
        do {
            let result = try body()
            try execute(commit ? "COMMIT" : "ROLLBACK", operation)
            return result
        } catch {
            // After SQLITE_FULL and some I/O errors SQLite has already rolled back.
            if sqlite3_get_autocommit(handle) == 0 { _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
            throw error
        }
    }

    /// Rows the last statement inserted, updated or deleted.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// A single value from a pragma or query.
    func scalarText(_ sql: String, _ operation: String) throws(StoreError) -> String? {
        let statement = try prepare(sql, operation)
        return try statement.step() ? statement.text(0) : nil
    }

    func scalarInt(_ sql: String, _ operation: String) throws(StoreError) -> Int64 {
        let statement = try prepare(sql, operation)
        return try statement.step() ? statement.int64(0) : 0
    }
}

/// One prepared statement. Reset before every use, so it can be kept and reused.
package final class Statement {
    private let handle: OpaquePointer
    private unowned let connection: SQLiteConnection
    private let operation: String

    /// Tells SQLite to copy bound text (the Swift buffer does not outlive the call).
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    fileprivate init(_ handle: OpaquePointer, connection: SQLiteConnection, operation: String) {
        self.handle = handle
        self.connection = connection
        self.operation = operation
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Resets the statement and binds `values` to parameters 1…n.
    @discardableResult
    func bind(_ values: [SQLValue]) -> Statement {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            switch value {
            case .null: sqlite3_bind_null(handle, index)
            case .int(let number): sqlite3_bind_int64(handle, index, number)
            case .double(let number): sqlite3_bind_double(handle, index, number)
            // By its length: a name a peer sent may hold a NUL, and read up to it `lo\0x`
            // would be `lo`, whose history a `forget` would then delete.
            case .text(let text): sqlite3_bind_text(handle, index, text, Int32(clamping: text.utf8.count), Self.transient)
            }
        }
        return self
    }

    /// Advances; true when a row is available.
    func step() throws(StoreError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.error(code, operation)
        }
    }

    /// Runs a statement that returns no rows.
    func run(_ values: [SQLValue]) throws(StoreError) {
        bind(values)
        _ = try step()
    }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    /// A wall time in Unix seconds; one outside 1970…9999 (a hand-edited row) is a store error,
    /// so no conversion further in can trap on it.
    func time(_ column: Int32) throws(StoreError) -> Double {
        let value = double(column)
        guard Self.acceptedTimes.contains(value) else {
            let name = sqlite3_column_name(handle, column).map { String(cString: $0) } ?? "column \(column)"
            throw StoreError(kind: .corrupt, path: connection.path, operation: operation,
                             message: "\(name) holds \(value), not a time from 1970 to 9999; was the file edited by hand?")
        }
        return value
    }

    package static let acceptedTimes: ClosedRange<Double> = 0...253_402_300_799

    /// An ifindex or other 32-bit value; a hand-edited row out of range is a store error, not a trap.
    func int32(_ column: Int32) throws(StoreError) -> Int32 {
        let value = int64(column)
        guard let narrow = Int32(exactly: value) else {
            let name = sqlite3_column_name(handle, column).map { String(cString: $0) } ?? "column \(column)"
            throw StoreError(kind: .corrupt, path: connection.path, operation: operation,
                             message: "\(name) holds \(value), outside the 32-bit range it must be in; "
                                 + "was the file edited by hand?")
        }
        return narrow
    }
    /// A namespace number, checked like ``int32(_:)``: a file edited by hand is refused, not trapped on.
    func namespace(_ column: Int32) throws(StoreError) -> NamespaceID {
        let value = int64(column)
        guard let number = UInt32(exactly: value) else {
            throw StoreError(kind: .corrupt, path: connection.path, operation: operation,
                             message: "namespace holds \(value), outside 0…\(UInt32.max); was the file edited by hand?")
        }
        return NamespaceID(rawValue: number)
    }
    func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }
    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
    /// The whole text, NUL bytes included (its length asked after the text, as SQLite says).
    func text(_ column: Int32) -> String? {
        guard let text = sqlite3_column_text(handle, column) else { return nil }
        return String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, column))), as: UTF8.self)
    }
    /// Counters are stored as SQLite's signed 64-bit integers, bit for bit.
    func uint64(_ column: Int32) -> UInt64 { UInt64(bitPattern: int64(column)) }
}

private func unsigned(_ value: OpaquePointer?) -> UInt64 {
    UInt64(bitPattern: sqlite3_value_int64(value))
}

enum SQLValue {
    case null
    case int(Int64)
    case double(Double)
    case text(String)

    static func uint(_ value: UInt64) -> SQLValue { .int(Int64(bitPattern: value)) }
    static func optionalText(_ value: String?) -> SQLValue { value.map(SQLValue.text) ?? .null }
}
