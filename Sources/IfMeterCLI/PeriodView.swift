import IfMeterPresentation
import IfMeterCore
import IfMeterJSON
import IfMeterWire

struct UsageTables: JSONWritable {
    var usage: [UsageResult]
    var footnote: String
    /// Each subject's alias, by name (a merge's by `a+b`), for those that have one.
    var aliases: [String: String] = [:]
    /// With `--split`: each table's rows' splits, in the order of `usage` and its rows (nil:
    /// that row is not split).
    var splits: [[SplitRow?]]?

    func write(to w: inout JSONWriter) {
        w.beginObject()
        if !aliases.isEmpty {
            w.key("aliases")
            w.beginObject()
            for (name, alias) in aliases.sorted(by: { $0.key < $1.key }) { w.key(text: name); w.string(alias) }
            w.endObject()
        }
        w.key("footnote"); w.string(footnote)
        if let splits {
            w.key("split")
            w.beginArray()
            for (table, rows) in zip(usage, splits) {
                w.beginArray()
                for (row, split) in zip(table.rows, rows) { SplitRow.write(split, start: row.start, to: &w) }
                w.endArray()
            }
            w.endArray()
        }
        w.key("usage")
        w.beginArray()
        for table in usage { table.write(to: &w) }
        w.endArray()
        w.endObject()
    }
}

/// `5min`, `hours`, `days`, `months`, `years` and `top`: history tables, newest last, with the
/// average rate of each period and marks for resets and gaps; `hours` adds a bar graph.
enum PeriodView {
    /// The rows a table shows unless `--limit` says otherwise.
    static func defaultLimit(_ period: UsagePeriod, top: Bool = false) -> Int {
        switch period {
        case _ where top: 10
        case .fiveMinutes, .hour: 24
        case .day: 30
        case .month: 12
        default: 100
        }
    }

    /// Every subject's table in one round trip; `--from`/`--to` are read in the daemon's zone,
    /// so with them the status comes first.
    static func fetch(_ socketCandidates: [String], _ table: PeriodTable) throws(CLIError) -> (Session, UsageTables) {
        guard RequestLine.acceptedLimit.contains(table.limit) else {
            throw .usage("--limit is a number of rows from \(RequestLine.acceptedLimit.lowerBound) to \(RequestLine.acceptedLimit.upperBound), got \(table.limit)")
        }
        // The daemon keeps only the rows shown: the newest, or for top the busiest days.
        let (last, top) = table.top ? (nil, table.limit) : (table.limit, nil)
        let session: Session
        let answer: QueryResult
        // A class's sum is split by its members': the answer names them.
        let include: [QueryPart] = table.split && table.subjects.interfaceClass != nil ? [.interfaces] : []
        if table.from == nil && table.to == nil {
            (session, answer) = try Session.query(
                socketCandidates: socketCandidates,
                .query(for: table.subjects, sum: true, usage: [UsageSpec(table.period, last: last, top: top)], include: include))
        } else {
            session = try Session(socketCandidates: socketCandidates)
            let spec = UsageSpec(table.period, from: try session.timeArgument(table.from, option: "--from"),
                                 to: try session.timeArgument(table.to, option: "--to"), last: last, top: top)
            answer = try session.client.call(QueryRequest.query(for: table.subjects, sum: true, usage: [spec], include: include),
                                             reading: QueryResult.self)
        }
        let aliases = Dictionary(answer.subjects.compactMap { subject in
            subject.name.flatMap { name in subject.alias.map { (name, $0) } }
        }) { first, _ in first }
        var tables = UsageTables(usage: answer.usage, footnote: EstimateLabel.footnote, aliases: aliases)
        if table.split { tables.splits = try splits(of: answer, session, period: table.period) }
        return (session, tables)
    }

    /// Each table's rows' splits, from the scope subjects' tables over the same periods: one
    /// more request, whose range covers every row shown (the busiest days too).
    static func splits(of answer: QueryResult, _ session: Session, period: UsagePeriod) throws(CLIError) -> [[SplitRow?]] {
        let starts = answer.usage.flatMap { $0.rows.map(\.start) }
        let classMembers = Dictionary(grouping: answer.interfaces ?? [], by: \.fields.class).mapValues { $0.map(\.fields.name) }
        let members = answer.subjects.map { ScopeSplit.members(of: $0, classMembers: classMembers) }
        guard let first = starts.min(), let last = starts.max() else { return answer.usage.map { _ in [] } }
        let spec = UsageSpec(period, from: TimeArgument(seconds: first), to: TimeArgument(seconds: last + 1))
        let scopes = try ScopeSplit.fetch(session, of: members.flatMap { $0 }, usage: [spec])
        return zip(answer.usage, members).map { table, names in
            table.rows.map { scopes.row(of: names, table: 0, start: $0.start) }
        }
    }

    /// How a period's start is written.
    static func render(_ tables: UsageTables, _ session: Session, units: Units, graph: Bool = false, top: Bool = false) -> String {
        var marks = Marks()
        // Bytes, not String appends: thousands of interfaces are tens of thousands of lines.
        var text: [UInt8] = []
        text.reserveCapacity(256 * tables.usage.count)
        // Every interface has the same periods: each start is written once per view.
        var labels: [PeriodStart: String] = [:]
        var notes = SplitNotes()
        for (index, table) in tables.usage.enumerated() {
            let subject = table.interface.map { name in tables.aliases[name].map { "\($0) (\(name))" } ?? name }
                ?? table.class.map { "class \($0)" } ?? ""
            let heading = top ? "top \(table.rows.count) days" : "by \(table.period)"
            text += "\(subject)  \(heading)\n".utf8
            guard !table.rows.isEmpty else {
                text += "  no traffic recorded in this range\n\n".utf8
                continue
            }
            let splits = tables.splits.map { $0[index] }
            var columns = splits.map { splits in
                SplitColumns(units: units, rows: zip(splits, table.rows).map { ($0, $1.rxBytes &+ $1.txBytes) })
            }
            var grid = Table([.left, .right, .right, .right] + (columns?.alignments ?? []) + [.right, .left] + (graph ? [.left] : []),
                             indent: "  ")
            grid.add(["", "rx", "tx", "total"] + (columns?.header ?? []) + ["avg rate", ""] + (graph ? [""] : []))
            let peak = table.rows.map { $0.rxBytes &+ $0.txBytes }.max() ?? 0
            let isDay = UsagePeriod(rawValue: table.period) == .day
            for (position, row) in table.rows.enumerated() {
                let seconds = max(1, min(row.end, session.now) - row.start)
                let total = row.rxBytes &+ row.txBytes
                var note = marks.mark(row.continuity)
                let hours = (row.end - row.start) / 3600
                if isDay && hours != 24 { note += (note.isEmpty ? "" : " ") + "(\(Int(hours)) h day)" }
                let key = PeriodStart(period: table.period, start: row.start)
                let label = labels[key] ?? PeriodLabel.long(row.start, period: table.period, time: session.time)
                labels[key] = label
                var cells = [label, units.bytes(row.rxBytes), units.bytes(row.txBytes), units.bytes(total)]
                if let splits { cells += columns?.cells(splits[position], total: total) ?? [] }
                cells += [units.rate(Double(total) / seconds), note]
                if graph { cells.append(bar(rx: row.rxBytes, tx: row.txBytes, peak: peak, width: 30)) }
                grid.add(cells)
            }
            grid.render(into: &text)
            if let columns { notes.formUnion(columns.notes) }
            if graph { text += "  graph: r = rx, t = tx, scaled to the busiest hour\n".utf8 }
            text.append(0x0a)
        }
        if tables.usage.isEmpty { text += "No interfaces with history yet.\n\n".utf8 }
        if tables.splits != nil { text += notes.legend.utf8 }
        text += marks.footer().utf8
        return String(decoding: text, as: UTF8.self)
    }

    /// `rrrrtt`: the period's rx and tx as a share of the busiest period, `width` at most.
    static func bar(rx: UInt64, tx: UInt64, peak: UInt64, width: Int) -> String {
        guard peak > 0 else { return "" }
        let scale = Double(width) / Double(peak)
        let total = Int((Double(rx &+ tx) * scale).rounded())
        let rxWidth = min(total, Int((Double(rx) * scale).rounded()))
        return String(repeating: "r", count: rxWidth) + String(repeating: "t", count: total - rxWidth)
    }
}

/// A period's start as a view writes it once.
private struct PeriodStart: Hashable {
    var period: String
    var start: Double
}
