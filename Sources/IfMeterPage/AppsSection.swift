import IfMeterCore
import IfMeterPresentation
import IfMeterWire

extension OverviewPage {
    /// The periods the applications' query asks for (`select: apps`, busiest first).
    public static let appPeriods: [UsageSpec] = [UsageSpec(.day, last: 1), UsageSpec(.month, last: 1), UsageSpec(.total)]
    /// How many of the busiest applications the page shows; `ifmeter apps` lists them all.
    public static let appRows = 25

    /// The busiest services and applications counted by cgroup (docs/APPS.md): another view of
    /// the interfaces' bytes, so a section of its own that no sum includes.
    static func appsSection(_ apps: QueryResult, units: Units) -> String {
        var page = "<section id=\"apps\"><h2>\(HTML.escape(SubjectSection.apps.heading))</h2>\n<p class=\"facts\">"
            + "The interfaces' traffic again, by the service or application whose sockets sent it, busiest first: "
            + "do not add it to theirs. remainder:IFACE is what no socket sent.</p>\n"
        page += "<div class=\"scroll\"><table class=\"usage apps\"><thead><tr><th>subject</th><th>kind</th><th>today</th>"
        page += "<th>month</th><th>all time</th><th class=\"hide-narrow\">marks</th></tr></thead><tbody>\n"
        let kinds = Dictionary((apps.interfaces ?? []).map { ($0.name, $0.kind) }) { first, _ in first }
        let perSubject = appPeriods.count
        for (index, subject) in apps.subjects.enumerated() {
            let name = subject.name ?? ""
            let tables = apps.usage[min(apps.usage.count, index * perSubject)..<min(apps.usage.count, (index + 1) * perSubject)]
            let rows = tables.map { $0.rows.last }
            page += "<tr class=\"subject\" data-name=\"\(HTML.escape(name))\">"
            page += "<td class=\"name\"><a href=\"/subject?name=\(HTML.queryValue(name))\">\(HTML.escape(name))</a></td>"
            page += "<td>\(HTML.escape(kinds[name] ?? "application"))</td>"
            for (offset, row) in rows.enumerated() {
                page += cell(row.map { $0.rxBytes &+ $0.txBytes }, ["today", "month", "total"][offset], units,
                             detail: row.map { "↓ \(units.bytes($0.rxBytes)) ↑ \(units.bytes($0.txBytes))" })
            }
            page += "<td class=\"hide-narrow\">\(labels(rows.last??.labels ?? []))</td></tr>\n"
        }
        page += "</tbody></table></div>\n"
        if let total = apps.subjectsTotal, total > apps.subjects.count {
            page += "<p class=\"facts\">\(total - apps.subjects.count) more: ifmeter apps lists them all.</p>\n"
        }
        return page + "</section>\n"
    }
}
