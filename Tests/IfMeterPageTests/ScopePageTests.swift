import IfMeterCore
import IfMeterPage
import IfMeterPresentation
import IfMeterWire
import IfMeterTestSupport
import Testing

/// Local and internet on the page (docs/SCOPES.md): a section of the scopes on the overview,
/// the split on a subject's page, every name escaped, "not split" rather than zeros.
@Suite("Page rendering: traffic scopes", .ownThread, .timeLimit(.minutes(3)))
struct ScopePageTests {
    static let today = 1_796_083_200.0
    static let month = 1_795_996_800.0
    static let hostile = "app:1000/<b>x\"&"

    func table(_ period: String, start: Double, rx: UInt64, tx: UInt64) -> UsageResult {
        UsageResult(interface: nil, class: nil, period: period,
                    rows: [UsageRowResult(UsageRowFields(start: start, end: start + 86400, continuity: Continuity(), labels: ["estimate"]),
                                          traffic: Traffic(rxBytes: rx, txBytes: tx))],
                    projection: ProjectionResult(start: start, end: start + 86400, elapsedFraction: 0.5, rxBytes: 0, txBytes: 0, labels: []),
                    footnote: nil)
    }

    /// eth0's local and internet, and an application's internet with a hostile name.
    var scopes: QueryResult {
        let subjects = [("local", "eth0"), ("internet", "eth0"), ("internet", Self.hostile)]
        return QueryResult(status: nil, subjects: subjects.map { QuerySubject(name: "scope:\($0.0)/\($0.1)", class: "application") },
                           interfaces: nil, usage: subjects.indices.flatMap { index in
                               [table("day", start: Self.today, rx: UInt64(100 * (index + 1)), tx: 1),
                                table("month", start: Self.month, rx: UInt64(1000 * (index + 1)), tx: 2)]
                           }, footnote: "f")
    }

    @Test("the overview's section: each subject once, its scopes today and this month, names escaped; none without scopes")
    func overview() {
        let empty = QueryResult(status: nil, subjects: [], interfaces: nil, usage: [], footnote: "f", plans: [])
        let page = OverviewPage.render(host: "h", interfaces: empty, owners: empty, scopes: scopes, time: TimeText(utc: true), units: Units())
        #expect(page.contains("<section id=\"scopes\">"))
        #expect(page.components(separatedBy: "data-name=\"eth0\"").count == 2, "eth0 is one row")
        #expect(page.contains("class=\"today-local\" data-bytes=\"101\"") && page.contains("class=\"today-internet\" data-bytes=\"201\""))
        #expect(page.contains("class=\"month-internet\" data-bytes=\"2002\""))
        #expect(!page.contains("<b>x") && page.contains("app:1000/&lt;b&gt;x&quot;&amp;"))
        #expect(page.contains("href=\"/subject?name=app%3A1000%2F%3Cb%3Ex%22%26\""))
        #expect(!OverviewPage.render(host: "h", interfaces: empty, owners: empty, scopes: empty, time: TimeText(utc: true), units: Units())
            .contains("id=\"scopes\""))
    }

    @Test("a subject's page: its split today and this month; a subject without scope figures is not split")
    func subject() {
        let tables = QueryResult(status: nil, subjects: [QuerySubject(name: "eth0", class: "ethernet")], interfaces: nil,
                                 usage: [], footnote: "f")
        var mine = scopes
        mine.subjects = Array(mine.subjects.prefix(2))
        mine.usage = Array(mine.usage.prefix(4))
        let page = SubjectPage.render(host: "h", name: "eth0", subject: tables, events: [], scopes: mine, time: TimeText(utc: true), units: Units())
        #expect(page.contains("<section id=\"split\">") && page.contains("class=\"today-local\" data-bytes=\"101\""))
        #expect(page.contains("class=\"month-internet\" data-bytes=\"2002\""))
        let none = QueryResult(status: nil, subjects: [], interfaces: nil, usage: [], footnote: "f")
        let hostile = SubjectPage.render(host: "h", name: "a<b>\"", subject: tables, events: [], scopes: none,
                                         time: TimeText(utc: true), units: Units())
        #expect(hostile.contains("Not split: no scope figures for a&lt;b&gt;&quot;"))
        #expect(!SubjectPage.render(host: "h", name: "eth0", subject: tables, events: [], time: TimeText(utc: true), units: Units())
            .contains("id=\"split\""), "a subject no scope splits has no such section")
    }
}
