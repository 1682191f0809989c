import IfMeterCore
import IfMeterWire

/// One period's traffic of a subject by scope (docs/SCOPES.md): local, internet and unknown, as
/// its scope subjects (`scope:SCOPE/SUBJECT`) counted them.
public struct SplitRow: Hashable, Sendable {
    /// Indexed by ``TrafficScope/rawValue``.
    public var rx: [UInt64] = [0, 0, 0]
    public var tx: [UInt64] = [0, 0, 0]

    public init() {}

    /// Received and transmitted bytes of `scope`.
    public func bytes(_ scope: TrafficScope) -> UInt64 { rx[Int(scope.rawValue)] &+ tx[Int(scope.rawValue)] }

    /// All three scopes' bytes.
    public var counted: UInt64 { TrafficScope.allCases.reduce(0) { $0 &+ bytes($1) } }

    /// What a row of `total` bytes shows as unknown: what the scopes counted as unknown, and
    /// what they did not count at all (a period that began before the daemon counted scopes);
    /// never a byte the row does not have.
    public func unknown(ofTotal total: UInt64) -> UInt64 {
        let known = bytes(.local) &+ bytes(.internet)
        return total > known ? total - known : bytes(.unknown)
    }

    /// Whether part of a row of `total` bytes was counted before its scopes were.
    public func isPartial(ofTotal total: UInt64) -> Bool { counted < total }

    public static func + (lhs: SplitRow, rhs: SplitRow) -> SplitRow {
        var sum = lhs
        for index in 0..<3 {
            sum.rx[index] &+= rhs.rx[index]
            sum.tx[index] &+= rhs.tx[index]
        }
        return sum
    }
}

/// The tables of a `query` answer for scope subjects (`select: "scopes"`), by the subject
/// each splits: its rows by table and period start, summed over the three scopes.
public struct ScopeTables: Sendable {
    /// Why an answer cannot be read as scope tables.
    public enum Problem: Error, Equatable {
        /// Not `tables` tables for each subject.
        case tableCount(tables: Int, subjects: Int)
        /// A subject that is no scope subject: a daemon without scopes answered the names.
        case notScope(String)
    }

    /// The subjects split, in the order the answer first names each.
    public private(set) var subjects: [String] = []
    /// Subject, then table (in the order asked), then a period's start (0 for all time).
    private var rows: [String: [[Double: SplitRow]]] = [:]
    private var tableCount = 0

    public init() {}

    /// From `answer`, whose subjects each have `tables` tables.
    public init(_ answer: QueryResult, tables: Int) throws(Problem) {
        guard answer.usage.count == tables * answer.subjects.count else {
            throw .tableCount(tables: answer.usage.count, subjects: answer.subjects.count)
        }
        tableCount = tables
        for (index, subject) in answer.subjects.enumerated() {
            guard let (scope, inner) = subject.name.flatMap(ScopeKind.parse) else { throw .notScope(subject.name ?? "") }
            if rows[inner] == nil { subjects.append(inner) }
            var tablesOf = rows[inner] ?? Array(repeating: [:], count: tables)
            for table in 0..<tables {
                let usage = answer.usage[index * tables + table]
                let isTotal = usage.period == UsagePeriod.total.rawValue
                for row in usage.rows {
                    let start = isTotal ? 0 : row.start
                    var split = tablesOf[table][start] ?? SplitRow()
                    split.rx[Int(scope.rawValue)] &+= row.rxBytes
                    split.tx[Int(scope.rawValue)] &+= row.txBytes
                    tablesOf[table][start] = split
                }
            }
            rows[inner] = tablesOf
        }
    }

    /// The split of `members` (one name, a merge's names or a class's members) summed, in
    /// table `table` for the period starting at `start` (nil: the table's all-time row); nil
    /// when none of them has scope figures for it: not split.
    public func row(of members: [String], table: Int, start: Double?) -> SplitRow? {
        guard table < tableCount else { return nil }
        var sum: SplitRow?
        for member in members {
            guard let found = rows[member]?[table][start ?? 0] else { continue }
            sum = (sum ?? SplitRow()) + found
        }
        return sum
    }
}
