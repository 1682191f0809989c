import IfMeterCore
import IfMeterPresentation
import IfMeterWire

/// The default view's text, interface by interface. What the whole view shares — the marks
/// used (the footer explains them), the minutes already written — is kept from one run of
/// interfaces to the next, so the view can be written as its answer arrives.
struct SummaryRenderer {
    let session: Session
    let units: Units
    let plans: [PlanResult]
    private var marks = Marks()
    /// Interfaces first seen together share the minute: each written once per view.
    private var minutes: [Double: String] = [:]
    /// What the split columns showed (`--split`), for the footer.
    private var splitNotes: SplitNotes?

    init(session: Session, units: Units, plans: [PlanResult]) {
        (self.session, self.units, self.plans) = (session, units, plans)
    }

    mutating func append(_ summaries: some Sequence<InterfaceSummary>, to text: inout [UInt8]) {
        let dash = "—"
        for summary in summaries {
            // vnStat's way: the alias, and the name beside it.
            text += (summary.alias.map { "\($0) (\(summary.name))" } ?? summary.name).utf8
            text += "  (\(summary.class))".utf8
            if let first = summary.allTime?.start {
                let minute = minutes[first] ?? session.time.minute(first)
                minutes[first] = minute
                text += " since \(minute)".utf8
            }
            text.append(0x0a)
            var columns = summary.split.map { split in
                SplitColumns(units: units, rows: zip(split, summary.rows).map { ($0, $1.map { $0.rxBytes &+ $0.txBytes } ?? 0) })
            }
            var table = Table([.left, .right, .right, .right] + (columns?.alignments ?? []) + [.left], indent: "  ")
            table.add(["", "rx", "tx", "total"] + (columns?.header ?? []) + [""])
            let blank = columns.map { Array(repeating: "", count: $0.header.count) } ?? []
            let rows: [(String, UsageRowResult?)] = [
                ("today", summary.today), ("yesterday", summary.yesterday),
                ("this month", summary.thisMonth), ("last month", summary.lastMonth),
                ("all time", summary.allTime),
            ]
            // No row: nothing was counted. That is 0 B if ifmeter watched this interface during
            // the period (it ended after the first sighting), and unknown (—) if it did not.
            let firstSeen = summary.allTime?.start
            let ends: [Double?] = [session.now + 1, summary.dayStart, session.now + 1, summary.monthProjection?.start,
                                   session.now + 1]
            for (position, ((label, row), end)) in zip(rows, ends).enumerated() {
                guard let row else {
                    let watched = firstSeen.flatMap { first in end.map { $0 > first } } ?? false
                    table.add((watched ? [label, units.bytes(0), units.bytes(0), units.bytes(0)] : [label, dash, dash, dash]) + blank + [""])
                    continue
                }
                let total = row.rxBytes &+ row.txBytes
                let split = columns?.cells(summary.split?[position] ?? nil, total: total) ?? []
                table.add([label, units.bytes(row.rxBytes), units.bytes(row.txBytes), units.bytes(total)] + split
                          + [marks.mark(row.continuity)])
            }
            if let projection = summary.monthProjection {
                table.add(["month-end projection", units.bytes(projection.rxBytes), units.bytes(projection.txBytes),
                           units.bytes(projection.rxBytes &+ projection.txBytes)] + blank
                          + ["at this month's pace (\(ValueGrammar.percentText(projection.elapsedFraction)) elapsed)"])
            }
            if let columns { splitNotes = (splitNotes ?? SplitNotes()).union(columns.notes) }
            table.render(into: &text)
            for plan in plans where plan.interfaces.contains(summary.name) {
                text += "  \(PlansView.line(plan, units: units))\n".utf8
            }
            text.append(0x0a)
        }
    }

    /// What ends the view: a word if it showed no interface, the marks' legend, the footnote.
    func footer(empty: Bool) -> String {
        (empty ? "No interfaces with history yet.\n\n" : "") + (splitNotes?.legend ?? "") + marks.footer()
    }
}
