import IfMeterPresentation
import IfMeterCore
import IfMeterJSON
import IfMeterWire

extension SplitRow {
    /// `{"internet":{"rx_bytes","tx_bytes"},"local":…,"unknown":…,"split":true}`, or for a
    /// row with no scope figures `{"split":false}`.
    static func write(_ row: SplitRow?, start: Double?, to w: inout JSONWriter) {
        w.beginObject()
        if let row {
            for scope in [TrafficScope.internet, .local] {
                w.key(text: scope.name)
                writeBytes(row, scope, to: &w)
            }
        }
        w.key("split"); w.bool(row != nil)
        if let start { w.key("start"); w.number(start) }
        if let row { w.key(text: TrafficScope.unknown.name); writeBytes(row, .unknown, to: &w) }
        w.endObject()
    }

    private static func writeBytes(_ row: SplitRow, _ scope: TrafficScope, to w: inout JSONWriter) {
        w.beginObject()
        w.key("rx_bytes"); w.number(row.rx[Int(scope.rawValue)])
        w.key("tx_bytes"); w.number(row.tx[Int(scope.rawValue)])
        w.endObject()
    }
}

/// The scope subjects' tables of a view's subjects, asked for in one more request
/// (`select: "scopes"` with the subjects' names) with the same tables as the view.
enum ScopeSplit {
    /// The scope tables of `subjects` (names: interfaces, networks, applications), `usage`
    /// each, on the view's session.
    static func fetch(_ session: Session, of subjects: [String], usage: [UsageSpec]) throws(CLIError) -> ScopeTables {
        guard !subjects.isEmpty, !usage.isEmpty else { return ScopeTables() }
        var request = QueryRequest()
        request.interfaces = Array(Set(subjects)).sorted()
        request.select = QuerySelection.scopes.rawValue
        request.usage = usage
        return try tables(try session.client.call(request, reading: QueryResult.self), tables: usage.count)
    }

    /// `answer` read as scope tables, or why it cannot be.
    static func tables(_ answer: QueryResult, tables: Int) throws(CLIError) -> ScopeTables {
        do {
            return try ScopeTables(answer, tables: tables)
        } catch {
            switch error {
            case .tableCount(let count, let subjects):
                throw CLIError(.protocolMismatch, "ifmeterd answered \(count) tables for \(subjects) scope subjects, not \(tables) each")
            case .notScope:
                throw CLIError(.protocolMismatch, "this ifmeterd does not count traffic scopes (docs/SCOPES.md): upgrade it for --split")
            }
        }
    }

    /// The names of the subjects a view's tables stand for: a merge's members, a class's
    /// members (from the answer's `interfaces`), or the name itself.
    static func members(of subject: QuerySubject, classMembers: [String: [String]]) -> [String] {
        if let members = subject.members { return members }
        if let name = subject.name { return [name] }
        return classMembers[subject.class] ?? []
    }
}

/// The columns `--split` adds to a table: local, internet and, when a row has any, unknown.
struct SplitColumns {
    let units: Units
    /// Whether any row shows unknown bytes: the column is left out when none does.
    let showsUnknown: Bool
    /// What the rows written so far need explained.
    private(set) var notes = SplitNotes()
    /// Before each column's name: `month ` where the table has other periods' columns.
    let prefix: String

    init(units: Units, rows: [(split: SplitRow?, total: UInt64)], prefix: String = "") {
        (self.units, self.prefix) = (units, prefix)
        showsUnknown = rows.contains { ($0.split?.unknown(ofTotal: $0.total) ?? 0) > 0 }
        notes.unknown = showsUnknown
    }

    var header: [String] { (["local", "internet"] + (showsUnknown ? ["unknown"] : [])).map { prefix + $0 } }
    var alignments: [Table.Alignment] { Array(repeating: .right, count: header.count) }

    /// A row's cells: `not split` when it has bytes and no scope figures, rather than zeros.
    mutating func cells(_ split: SplitRow?, total: UInt64) -> [String] {
        // A row without a byte has nothing to split: no figures, and no "not split" either.
        if split == nil && total == 0 { return Array(repeating: "", count: header.count) }
        guard let split else {
            notes.notSplit = true
            return ["not split", ""] + (showsUnknown ? [""] : [])
        }
        let isPartial = split.isPartial(ofTotal: total)
        notes.partial = notes.partial || isPartial
        return [units.bytes(split.bytes(.local)), units.bytes(split.bytes(.internet))]
            + (showsUnknown ? [units.bytes(split.unknown(ofTotal: total)) + (isPartial ? " +" : "")] : [])
    }
}

extension ScopeSplit {
    /// This month's split of each of `subjects` whose month row is `months[i]` (nil: nothing
    /// counted this month, so nothing to split), from their scope subjects' month tables.
    static func thisMonth(_ session: Session, of subjects: [String], rows months: [UsageRowResult?],
                          start: Double?) throws(CLIError) -> [SplitRow?] {
        let spec = UsageSpec(.month, from: start.map { TimeArgument(seconds: $0) }, to: start.map { TimeArgument(seconds: $0 + 1) })
        let tables = try fetch(session, of: subjects, usage: [spec])
        return zip(subjects, months).map { subject, row in
            guard let row else { return SplitRow() }
            return tables.row(of: [subject], table: 0, start: row.start)
        }
    }
}

/// What a view's split columns showed that its footer explains, over all its tables.
struct SplitNotes {
    var unknown = false
    var partial = false
    var notSplit = false

    mutating func formUnion(_ other: SplitNotes) { self = union(other) }

    func union(_ other: SplitNotes) -> SplitNotes {
        SplitNotes(unknown: unknown || other.unknown, partial: partial || other.partial, notSplit: notSplit || other.notSplit)
    }

    /// The footer's lines: what local and internet are, and each word or mark used.
    var legend: String {
        var text = "local: to and from addresses on this host's networks and local_prefixes; internet: anywhere else (docs/SCOPES.md).\n"
        if unknown { text += "unknown: traffic whose far end was not known (before the scope program was attached, or on a link it does not cover).\n" }
        if partial { text += "+ part of the period was counted before ifmeterd counted scopes: that part is in unknown.\n" }
        if notSplit { text += "not split: no scope figures for this period (no scope program on the interface, or before ifmeterd counted scopes).\n" }
        return text
    }
}
