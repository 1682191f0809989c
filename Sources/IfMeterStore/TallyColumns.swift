import IfMeterCore
import IfMeterHistory

/// The columns every bucket and total row has, in this order: one definition for the schema,
/// the upserts, the reads and the values bound.
enum TallyColumns {
    static let names = ["rx_bytes", "tx_bytes", "rx_packets", "tx_packets", "resets", "gaps", "implausible"]
    static var count: Int32 { Int32(names.count) }

    /// The column definitions, one per line, as the schema's `CREATE TABLE`s have them.
    static let definitions = names.map { "    \($0) INTEGER NOT NULL DEFAULT 0" }.joined(separator: ",\n")

    /// `?first, ?first+1, …` for an `INSERT`.
    static func placeholders(from first: Int) -> String {
        names.indices.map { "?\(first + $0)" }.joined(separator: ", ")
    }

    /// The columns of table alias `alias`, summed when `summed`, for a `SELECT`.
    static func select(_ alias: String, summed: Bool = false) -> String {
        names.map { summed ? "sum(\(alias).\($0))" : "\(alias).\($0)" }.joined(separator: ", ")
    }

    /// An upsert's `SET`: unsigned and saturating (`ifm_add`); a row whose sum would pass
    /// 2^64 − 1 is held there and counted implausible, so the figure is labelled
    /// (SQLiteConnection defines both functions).
    static let sums: String = {
        let counters = names.prefix(4)
        let added = counters.map { "\($0) = ifm_add(\($0), excluded.\($0))" }
        let counted = ["resets", "gaps"].map { "\($0) = \($0) + excluded.\($0)" }
        let overflows = counters.map { "\($0), excluded.\($0)" }.joined(separator: ", ")
        return (added + counted + ["implausible = implausible + excluded.implausible + ifm_overflows(\(overflows))"])
            .joined(separator: ", ")
    }()

    static func values(_ tally: BucketTally) -> [SQLValue] {
        [.uint(tally.traffic.rxBytes), .uint(tally.traffic.txBytes), .uint(tally.traffic.rxPackets),
         .uint(tally.traffic.txPackets), .int(Int64(tally.resets)), .int(Int64(tally.gaps)),
         .int(Int64(tally.implausible))]
    }

    /// The tally in a row whose columns from `column` on are ``names``, in order, with the
    /// `imported` flag (schema 2, outside the seven: a released migration is never edited) at
    /// `imported` when the query selects it.
    static func tally(_ statement: Statement, from column: Int32, imported: Int32? = nil) -> BucketTally {
        BucketTally(
            traffic: Traffic(rxBytes: statement.uint64(column), txBytes: statement.uint64(column + 1),
                             rxPackets: statement.uint64(column + 2), txPackets: statement.uint64(column + 3)),
            resets: Int(statement.int64(column + 4)), gaps: Int(statement.int64(column + 5)),
            implausible: Int(statement.int64(column + 6)), imported: imported.map { statement.int64($0) != 0 } ?? false)
    }
}
