import IfMeterCore
import IfMeterPresentation
import IfMeterWire

extension OverviewPage {
    /// The periods the scopes' queries ask for (`select: scopes`): today and this month, each
    /// with its projection, whose start says which row is the current one.
    public static let scopePeriods: [UsageSpec] = [UsageSpec(.day, projection: true, last: 1), UsageSpec(.month, projection: true, last: 1)]

    /// Each interface's, network's and application's traffic by scope (docs/SCOPES.md): another
    /// view of their bytes, so a section of its own that no sum includes.
    static func scopesSection(_ scopes: QueryResult, units: Units) -> String {
        guard let tables = try? ScopeTables(scopes, tables: scopePeriods.count), !tables.subjects.isEmpty else { return "" }
        var page = "<section id=\"scopes\"><h2>Local and internet</h2>\n<p class=\"facts\">The traffic of each interface, network "
            + "and application again, by where its far end was: local (a network this host is on, or local_prefixes), internet "
            + "(anywhere else) or unknown (counted where no scope program ran, or before it did): do not add it to theirs.</p>\n"
        page += "<div class=\"scroll\"><table class=\"usage scopes\"><thead><tr><th>subject</th>"
        page += "<th>today local</th><th>today internet</th><th class=\"hide-narrow\">today unknown</th>"
        page += "<th>month local</th><th>month internet</th><th class=\"hide-narrow\">month unknown</th></tr></thead><tbody>\n"
        let starts = currentStarts(scopes)
        for subject in tables.subjects {
            page += "<tr class=\"subject\" data-name=\"\(HTML.escape(subject))\">"
            page += "<td class=\"name\"><a href=\"/subject?name=\(HTML.queryValue(subject))\">\(HTML.escape(subject))</a></td>"
            for (table, period) in ["today", "month"].enumerated() {
                let row = starts[table].flatMap { tables.row(of: [subject], table: table, start: $0) } ?? SplitRow()
                page += scopeCells(row, period, units)
            }
            page += "</tr>\n"
        }
        return page + "</tbody></table></div></section>\n"
    }

    /// One subject's split today and this month, for its page (`select: scopes` with its name):
    /// "not split" when it has no scope figures, rather than zeros.
    static func splitSection(_ scopes: QueryResult, name: String, units: Units) -> String {
        var page = "<section id=\"split\"><h2>Local and internet</h2>\n"
        let tables = try? ScopeTables(scopes, tables: scopePeriods.count)
        guard let tables, tables.subjects.contains(name) else {
            return page + "<p class=\"facts\">Not split: no scope figures for \(HTML.escape(name)) (no scope program on its "
                + "link, or nothing counted since ifmeterd counted scopes; docs/SCOPES.md).</p></section>\n"
        }
        page += "<div class=\"scroll\"><table class=\"usage split\"><thead><tr><th></th><th>local</th><th>internet</th>"
        page += "<th>unknown</th></tr></thead><tbody>\n"
        let starts = currentStarts(scopes)
        for (table, period) in ["today", "this month"].enumerated() {
            let row = starts[table].flatMap { tables.row(of: [name], table: table, start: $0) } ?? SplitRow()
            page += "<tr data-period=\"\(HTML.escape(period))\"><th>\(HTML.escape(period))</th>"
                + scopeCells(row, period == "today" ? "today" : "month", units, narrow: false) + "</tr>\n"
        }
        return page + "</tbody></table></div></section>\n"
    }

    /// Where today and this month began: the projections' starts of the first subject's tables.
    private static func currentStarts(_ scopes: QueryResult) -> [Double?] {
        (0..<scopePeriods.count).map { scopes.usage.indices.contains($0) ? scopes.usage[$0].projection?.start : nil }
    }

    /// A period's local, internet and unknown bytes, each with its rx and tx in the title.
    private static func scopeCells(_ row: SplitRow, _ period: String, _ units: Units, narrow: Bool = true) -> String {
        [TrafficScope.local, .internet, .unknown].map { scope in
            let index = Int(scope.rawValue)
            return cell(row.bytes(scope), "\(period)-\(scope.name)", units, narrow: narrow && scope == .unknown,
                        detail: "↓ \(units.bytes(row.rx[index])) ↑ \(units.bytes(row.tx[index]))")
        }.joined()
    }
}
