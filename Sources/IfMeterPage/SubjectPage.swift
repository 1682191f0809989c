import IfMeterCore
import IfMeterPresentation
import IfMeterWire

/// `/subject?name=NAME`: one interface, container, virtual machine or namespace — its hours,
/// days and months as charts, each bar that an event touches marked with it, and the events
/// that explain its figures (resets, gaps, imports, lost events) listed below.
public enum SubjectPage {
    /// The tables the subject's query asks for, in this order.
    public static let periods: [UsageSpec] = [UsageSpec(.hour, last: 48), UsageSpec(.day, last: 62), UsageSpec(.month, last: 25)]
    /// The events asked for beside them.
    public static let eventLimit = 500

    /// `scopes`, the answer for its scope subjects (``OverviewPage/scopePeriods``), puts its
    /// split under its facts; nil for a subject no scope splits (a container's).
    public static func render(host: String, name: String, subject: QueryResult, events: [CounterEvent], scopes: QueryResult? = nil,
                              time: TimeText, units: Units) -> String {
        let shown = subject.subjects.first?.alias.map { "\($0) (\(name))" } ?? name
        var page = PageFrame.begin(title: "\(shown) — ifmeter — \(host)", host: host, status: subject.status, time: time)
        let state = subject.interfaces?.first
        page += "<section id=\"subject\" data-name=\"\(HTML.escape(name))\"><h2>\(HTML.escape(shown))</h2>\n<div class=\"facts\">"
        if let state {
            page += "<span>\(HTML.escape("\(state.class) (\(state.classReason)), \(state.kind)"))</span>"
            page += "<span>\(HTML.escape(state.isAbsent ? "absent" + (state.lastSeen.map { ", last seen " + time.minute($0) } ?? "") : state.operstate))</span>"
            page += "<span class=\"rate\" data-rate=\"\(HTML.escape(name))\">\(OverviewPage.rate(state.rate, units))</span>"
            page += OverviewPage.labels(state.labels)
        }
        page += "</div></section>\n"
        if let scopes { page += OverviewPage.splitSection(scopes, name: name, units: units) }
        for table in subject.usage {
            let touching = events.filter { event in table.rows.contains { event.at >= $0.start && event.at < $0.end } }
            page += "<section class=\"chart\" data-period=\"\(HTML.escape(table.period))\"><h3>\(HTML.escape("by \(table.period)"))</h3>\n"
            page += SVGChart.render(table, subject: name, time: time, units: units, inline: true, events: touching)
            page += "</section>\n"
        }
        page += "<section id=\"events\"><h2>Events</h2>\n"
        if events.isEmpty {
            page += "<p class=\"facts\">No event for \(HTML.escape(name)) in the history kept.</p>\n"
        } else {
            page += "<div class=\"scroll\"><table class=\"events\"><thead><tr><th>time</th><th>event</th><th>what</th></tr></thead><tbody>\n"
            for event in events.reversed() {
                page += "<tr data-kind=\"\(HTML.escape(event.kind.rawValue))\"><td>\(HTML.escape(time.second(event.at)))</td>"
                page += "<td>\(HTML.escape(event.kind.rawValue))</td><td>\(HTML.escape(event.detail))</td></tr>\n"
            }
            page += "</tbody></table></div>\n"
        }
        page += "</section>\n"
        page += PageFrame.end(footnote: subject.footnote)
        return page
    }
}
