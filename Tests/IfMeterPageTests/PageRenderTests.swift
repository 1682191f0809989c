import IfMeterCore
import IfMeterPage
import IfMeterPresentation
import IfMeterWire
import IfMeterTestSupport
import Testing

/// Every name on a page is text: a Linux interface may be named `<b>x` or `a"b&`.
@Suite("Page rendering", .ownThread, .timeLimit(.minutes(3)))
struct PageRenderTests {
    static let hostile = ["<b>x", "a\"b&", "'><script>", "x</td>"]

    func table(_ name: String, _ period: String, rx: UInt64) -> UsageResult {
        UsageResult(interface: name, class: "ethernet", period: period,
                    rows: [UsageRowResult(UsageRowFields(start: 1_796_083_200, end: 1_796_169_600, continuity: Continuity(),
                                                         labels: ["estimate", "reset-in-period"]),
                                          traffic: Traffic(rxBytes: rx, txBytes: 7))],
                    projection: nil, footnote: EstimateLabel.footnote)
    }

    @Test("names are escaped in text, attributes and links; figures carry their exact bytes")
    func escaped() {
        let subjects = Self.hostile.map { QuerySubject(name: $0, class: "ethernet") }
        let usage = Self.hostile.flatMap { [table($0, "day", rx: 5), table($0, "month", rx: 1234)] }
        let interfaces = QueryResult(status: nil, subjects: subjects, interfaces: nil, usage: usage, footnote: "f", plans: [])
        let owners = QueryResult(status: nil, subjects: [], interfaces: nil, usage: [], footnote: "f")
        let page = OverviewPage.render(host: "<h>", interfaces: interfaces, owners: owners, time: TimeText(utc: true), units: Units())
        #expect(!page.contains("<b>x") && !page.contains("<script>") && !page.contains("a\"b") && !page.contains("<h>"))
        #expect(page.contains("&lt;b&gt;x") && page.contains("a&quot;b&amp;"))
        #expect(page.contains("href=\"/subject?name=%3Cb%3Ex\""))
        #expect(page.contains("data-bytes=\"1241\""), "month: rx 1234 + tx 7")
        #expect(page.contains(">reset-in-period<"), "a continuity label is shown")
        #expect(!page.contains(" style="), "no inline style: the Content-Security-Policy allows none")
        #expect(page.contains("Every figure: estimate, interface-counters"), "what every figure is, once")
    }

    @Test("networks: a hostile connection name and an SSID that is not UTF-8 are escaped; no section without networks")
    func networks() {
        let interfaces = QueryResult(status: nil, subjects: [], interfaces: nil, usage: [], footnote: "f", plans: [])
        let owners = QueryResult(status: nil, subjects: [], interfaces: nil, usage: [], footnote: "f")
        let subject = "network:0b5ab2a0-0000-4000-8000-000000000002"
        let network = NetworkResult(
            subject: subject, uuid: String(subject.dropFirst(8)), name: "'><script>", ssidHex: Hex.encode([0x3C, 0x62, 0xFF]),
            type: "wifi", metered: "guess-yes", apn: nil, operatorName: nil, interface: "wlan0", firstSeen: 1, lastSeen: nil,
            rxBytes: 3000, txBytes: 1000, labels: ["estimate"])
        let networks = QueryResult(status: nil, subjects: [QuerySubject(name: subject, class: "network")], interfaces: nil,
                                   usage: [table(subject, "day", rx: 5), table(subject, "month", rx: 1234)], footnote: "f",
                                   networks: [network])
        let page = OverviewPage.render(host: "h", interfaces: interfaces, owners: owners, networks: networks,
                                       time: TimeText(utc: true), units: Units())
        #expect(page.contains("<section id=\"networks\">"))
        #expect(!page.contains("<script>") && !page.contains("<b\\xff"))
        #expect(page.contains("&#39;&gt;&lt;script&gt; (SSID &lt;b\\xff)"))
        #expect(page.contains("data-bytes=\"4000\""), "all time: rx + tx")
        #expect(HTML.escape("a\u{1B}[31m\u{0}b\u{9B}\tc") == "a\u{FFFD}[31m\u{FFFD}b\u{FFFD}\tc", "no control character reaches a page")
        #expect(page.contains(">guess-yes<") && page.contains(">wlan0<"))
        let none = QueryResult(status: nil, subjects: [], interfaces: nil, usage: [], footnote: "f", networks: [])
        #expect(!OverviewPage.render(host: "h", interfaces: interfaces, owners: owners, networks: none,
                                     time: TimeText(utc: true), units: Units()).contains("id=\"networks\""))
    }

    @Test("applications: a section of their own, names escaped, how many more there are; none without any")
    func apps() {
        let interfaces = QueryResult(status: nil, subjects: [], interfaces: nil, usage: [], footnote: "f", plans: [])
        let owners = QueryResult(status: nil, subjects: [], interfaces: nil, usage: [], footnote: "f")
        let subject = "app:1000/%3Cscript%3E"
        var apps = QueryResult(status: nil, subjects: [QuerySubject(name: subject, class: "application")], interfaces: nil,
                               usage: [table(subject, "day", rx: 5), table(subject, "month", rx: 70), table(subject, "total", rx: 900)],
                               footnote: "f")
        apps.subjectsTotal = 26
        let page = OverviewPage.render(host: "h", interfaces: interfaces, owners: owners, apps: apps,
                                       time: TimeText(utc: true), units: Units())
        #expect(page.contains("<section id=\"apps\">"))
        #expect(page.contains("data-name=\"app:1000/%3Cscript%3E\""))
        #expect(page.contains("data-bytes=\"907\""), "all time: rx + tx")
        #expect(page.contains("25 more: ifmeter apps lists them all"))
        let none = QueryResult(status: nil, subjects: [], interfaces: nil, usage: [], footnote: "f")
        #expect(!OverviewPage.render(host: "h", interfaces: interfaces, owners: owners, apps: none,
                                     time: TimeText(utc: true), units: Units()).contains("id=\"apps\""))
    }

    @Test("an alias is shown as \"alias (name)\", escaped, on the overview and the subject's page; links keep the name (#61)")
    func aliasEscaped() {
        let alias = "<script>alert(\"x\")</script> & 'Home'"
        let interfaces = QueryResult(status: nil, subjects: [QuerySubject(name: "eth0", class: "ethernet", alias: alias)],
                                     interfaces: nil, usage: [table("eth0", "day", rx: 5), table("eth0", "month", rx: 9)],
                                     footnote: "f", plans: [])
        let owners = QueryResult(status: nil, subjects: [], interfaces: nil, usage: [], footnote: "f")
        let page = OverviewPage.render(host: "h", interfaces: interfaces, owners: owners, time: TimeText(utc: true), units: Units())
        #expect(!page.contains("<script>alert"))
        #expect(page.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;Home&#39; (eth0)</a>"))
        #expect(page.contains("href=\"/subject?name=eth0\""))
        let subject = QueryResult(status: nil, subjects: [QuerySubject(name: "eth0", class: "ethernet", alias: alias)], interfaces: nil,
                                  usage: [table("eth0", "hour", rx: 9), table("eth0", "day", rx: 9), table("eth0", "month", rx: 9)],
                                  footnote: "f")
        let one = SubjectPage.render(host: "h", name: "eth0", subject: subject, events: [], time: TimeText(utc: true), units: Units())
        #expect(!one.contains("<script>alert") && one.contains("&lt;script&gt;alert(&quot;x&quot;)"))
        #expect(one.contains(" (eth0)</h2>"))
    }

    @Test("the 95th percentile: a section of the uplinks' figures in SI bit/s, names escaped, the slots with traffic; none without any (#61)")
    func percentile() {
        let interfaces = QueryResult(status: nil, subjects: [], interfaces: nil, usage: [], footnote: "f", plans: [])
        let owners = QueryResult(status: nil, subjects: [], interfaces: nil, usage: [], footnote: "f")
        let figure = BurstablePercentile(buckets: [(start: 1_796_083_200, traffic: Traffic(rxBytes: 37_500_000, txBytes: 3_750_000))],
                                         from: 1_796_083_200, to: 1_796_083_800)
        let entry = PercentileEntry(name: "<b>x", class: "ethernet", period: "month", start: 1_796_083_200, end: 1_796_083_800,
                                    periodEnd: 1_798_761_600, figure: figure, retainedFrom: 1_796_083_500, continuity: Continuity(), labels: [])
        let page = OverviewPage.render(host: "h", interfaces: interfaces, owners: owners,
                                       percentiles: PercentileResult(subjects: [entry], footnote: "f"), time: TimeText(utc: true), units: Units())
        #expect(page.contains("<section id=\"percentile\">"))
        #expect(page.contains("&lt;b&gt;x") && !page.contains("<b>x"))
        #expect(page.contains("1 of 2"), "one slot of two had traffic")
        #expect(page.contains("1.00 Mbit/s"), "37.5 MB in a slot is 1 Mbit/s: \(page)")
        #expect(page.contains("retention_5min is shorter than the month"))
        #expect(!OverviewPage.render(host: "h", interfaces: interfaces, owners: owners, time: TimeText(utc: true), units: Units())
            .contains("id=\"percentile\""))
    }

    @Test("the subject page charts each table inline and marks the bars events touch")
    func subject() {
        let result = QueryResult(status: nil, subjects: [QuerySubject(name: "a\"b&", class: "ethernet")], interfaces: nil,
                                 usage: [table("a\"b&", "hour", rx: 9), table("a\"b&", "day", rx: 9), table("a\"b&", "month", rx: 9)],
                                 footnote: "f")
        let event = CounterEvent(kind: .reset, at: 1_796_090_000, interface: "a\"b&", detail: "<i>went back</i>")
        let page = SubjectPage.render(host: "h", name: "a\"b&", subject: result, events: [event], time: TimeText(utc: true), units: Units())
        #expect(page.components(separatedBy: "<svg").count - 1 == 3)
        #expect(!page.contains("<?xml"), "inline charts carry no XML declaration")
        #expect(page.contains("class=\"event-mark\""))
        #expect(page.contains("&lt;i&gt;went back&lt;/i&gt;") && !page.contains("<i>"))
    }

    @Test("assets are served by name, and nothing else is")
    func assets() {
        #expect(PageAssets.asset("ifmeter.css")?.contentType.hasPrefix("text/css") == true)
        #expect(PageAssets.asset("ifmeter.js")?.contentType.hasPrefix("text/javascript") == true)
        #expect(PageAssets.asset("../etc/passwd") == nil)
        let policy = PageAssets.securityHeaders.first { $0.name == "Content-Security-Policy" }?.value ?? ""
        #expect(policy.contains("script-src 'self'") && !policy.contains("unsafe"))
    }
    @Test("a long table shows its window's rows with links to the others; a short one all of them, with no pager")
    func paging() {
        func answer(_ names: [String], total: Int?) -> QueryResult {
            var result = QueryResult(status: nil, subjects: names.map { QuerySubject(name: $0, class: "ethernet") }, interfaces: nil,
                                     usage: names.flatMap { [table($0, "day", rx: 5), table($0, "month", rx: 6)] }, footnote: "f",
                                     plans: [])
            result.subjectsTotal = total
            return result
        }
        let window = (1000..<2000).map { "a\($0)" }
        let owners = answer([], total: 0)
        let middle = OverviewPage.render(host: "h", interfaces: answer(window, total: 2500), owners: owners,
                                         paging: PagePaging(interfaces: 1000, owners: 0), time: TimeText(utc: true), units: Units())
        #expect(middle.contains("Rows 1001–2000 of 2500"))
        #expect(middle.contains("<a href=\"/\">previous 1000</a>"))
        #expect(middle.contains("<a href=\"/?interfaces=2000&amp;owners=0\">next 500</a>"))
        #expect(middle.contains(">a1999<") && !middle.contains(">a999<"))
        let all = OverviewPage.render(host: "h", interfaces: answer(["a0", "a1"], total: 2), owners: owners,
                                      time: TimeText(utc: true), units: Units())
        #expect(!all.contains("class=\"pager\""))
        // An address past the end says so and leads back: never "no traffic yet".
        let past = OverviewPage.render(host: "h", interfaces: answer([], total: 2500), owners: answer([], total: 3),
                                       paging: PagePaging(interfaces: 5000, owners: 2000), time: TimeText(utc: true), units: Units())
        #expect(past.contains("This page is past the last of the 2500 rows") && past.contains("This page is past the last of the 3 rows"))
        #expect(!past.contains("No interface has carried traffic yet") && !past.contains("None seen yet"))
        #expect(past.contains("<a href=\"/?interfaces=2000&amp;owners=2000\">previous 1000</a>"), "previous is the last page")
        #expect(past.contains("<a href=\"/?interfaces=0&amp;owners=2000\">the first page</a>"))
        #expect(PagePaging(arguments: { ["interfaces": "1000", "owners": "-5"][$0] }) == PagePaging(interfaces: 1000, owners: 0))
        #expect(PagePaging(arguments: { ["interfaces": "1e9", "owners": "x"][$0] }) == PagePaging())
    }
    @Test("a name can neither reorder the page's text nor pass for another: direction and invisible characters are shown")
    func invisible() {
        #expect(HTML.escape("\u{202E}emoH") == #"\u{202e}emoH"#)
        #expect(HTML.escape("Home\u{200B}") == #"Home\u{200b}"# && HTML.escape("a\u{2067}b\u{FEFF}") == #"a\u{2067}b\u{feff}"#)
        #expect(HTML.escape("Café — ok") == "Café — ok")
    }
}
