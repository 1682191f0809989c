import IfMeterCore
@testable import IfMeterCLI
import IfMeterJSON
import IfMeterPresentation
import IfMeterWire
import IfMeterTestSupport
import Testing

/// `--split` and `ifmeter split` (docs/CLI.md, docs/SCOPES.md): the scope subjects' tables
/// matched to the rows they split, summed for a merge, and a row without any said to be not
/// split rather than shown as zeros.
@Suite("The split views", .ownThread, .timeLimit(.minutes(1)))
struct SplitViewTests {
    static let day = 86400.0
    static let today = 1_800_000_000.0

    static func row(_ start: Double, rx: UInt64, tx: UInt64) -> UsageRowResult {
        UsageRowResult(UsageRowFields(start: start, end: start + day, continuity: Continuity(), labels: ["estimate"]),
                       traffic: Traffic(rxBytes: rx, txBytes: tx))
    }

    static func table(_ period: String, _ rows: [UsageRowResult], projection: Double? = nil) -> UsageResult {
        UsageResult(interface: nil, class: nil, period: period, rows: rows,
                    projection: projection.map { ProjectionResult(start: $0, end: $0 + day, elapsedFraction: 0.5, rxBytes: 0, txBytes: 0, labels: []) },
                    footnote: nil)
    }

    /// eth0 split today (local 600 + 100, internet 300 + 50) and yesterday (internet only);
    /// eth1 split today (local 1 + 2); a network's internet today.
    static var answer: QueryResult {
        let subjects = [("local", "eth0"), ("internet", "eth0"), ("local", "eth1"), ("internet", "network:6f1c1a38-0000-4000-8000-00000000000a")]
        let tables = [
            table("day", [row(today, rx: 600, tx: 100)], projection: today),
            table("day", [row(today - day, rx: 5, tx: 5), row(today, rx: 300, tx: 50)], projection: today),
            table("day", [row(today, rx: 1, tx: 2)], projection: today),
            table("day", [row(today, rx: 7, tx: 8)], projection: today),
        ]
        return QueryResult(status: nil, subjects: subjects.map { QuerySubject(name: "scope:\($0.0)/\($0.1)", class: "application") },
                           interfaces: nil, usage: tables, footnote: EstimateLabel.footnote)
    }

    @Test("each subject's rows by start, summed over a merge's members; no scope row is not split")
    func tables() throws {
        let split = try ScopeTables(Self.answer, tables: 1)
        #expect(split.subjects == ["eth0", "eth1", "network:6f1c1a38-0000-4000-8000-00000000000a"])
        let eth0 = try #require(split.row(of: ["eth0"], table: 0, start: Self.today))
        #expect(eth0.bytes(.local) == 700 && eth0.bytes(.internet) == 350 && eth0.bytes(.unknown) == 0)
        #expect(eth0.rx == [600, 300, 0] && eth0.tx == [100, 50, 0])
        let merged = try #require(split.row(of: ["eth0", "eth1"], table: 0, start: Self.today))
        #expect(merged.bytes(.local) == 703 && merged.bytes(.internet) == 350)
        #expect(split.row(of: ["eth1"], table: 0, start: Self.today - Self.day) == nil, "eth1 was not split yesterday")
        #expect(split.row(of: ["wg0"], table: 0, start: Self.today) == nil)
        #expect(split.row(of: ["eth0"], table: 1, start: Self.today) == nil, "no such table")
        // An answer whose subjects are no scope subjects: a daemon that ignored select.
        var plain = Self.answer
        plain.subjects[0].name = "eth0"
        #expect(throws: ScopeTables.Problem.notScope("eth0")) { try ScopeTables(plain, tables: 1) }
        #expect(throws: ScopeTables.Problem.self) { try ScopeTables(Self.answer, tables: 2) }
    }

    @Test("columns: local and internet; unknown when a row has any, with + where part was counted before scopes; not split said so")
    func columns() throws {
        var split = SplitRow()
        split.rx = [600, 300, 0]
        split.tx = [100, 50, 10]
        let units = Units()
        var whole = SplitColumns(units: units, rows: [(split, 1060)])
        #expect(whole.header == ["local", "internet", "unknown"])
        #expect(whole.cells(split, total: 1060) == [units.bytes(700), units.bytes(350), units.bytes(10)])
        #expect(!whole.notes.partial && !whole.notes.notSplit)
        // 2000 bytes on the link, 1060 of them counted by scope: the rest is unknown, marked.
        var partial = SplitColumns(units: units, rows: [(split, 2000), (nil, 5)])
        #expect(partial.cells(split, total: 2000) == [units.bytes(700), units.bytes(350), units.bytes(950) + " +"])
        #expect(partial.cells(nil, total: 5) == ["not split", "", ""])
        #expect(partial.cells(nil, total: 0) == ["", "", ""], "nothing to split")
        #expect(partial.notes.partial && partial.notes.notSplit)
        #expect(partial.notes.legend.contains("not split: ") && partial.notes.legend.contains("+ part of the period"))
        // Nothing unknown anywhere: no unknown column.
        var known = SplitRow()
        known.rx = [1, 2, 0]
        let exact = SplitColumns(units: units, rows: [(known, 3), (nil, 9)])
        #expect(exact.header == ["local", "internet"] && !exact.notes.unknown)
    }

    @Test("a split row's JSON: rx and tx of each scope, or split false")
    func rowJSON() {
        var split = SplitRow()
        split.rx = [1, 2, 3]
        split.tx = [4, 5, 6]
        var w = JSONWriter(capacity: 256)
        SplitRow.write(split, start: 60, to: &w)
        #expect(String(decoding: w.bytes, as: UTF8.self) == #"{"internet":{"rx_bytes":2,"tx_bytes":5},"local":{"rx_bytes":1,"tx_bytes":4},"split":true,"start":60,"unknown":{"rx_bytes":3,"tx_bytes":6}}"#)
        var none = JSONWriter(capacity: 64)
        SplitRow.write(nil, start: nil, to: &none)
        #expect(String(decoding: none.bytes, as: UTF8.self) == #"{"split":false}"#)
    }

    @Test("ifmeter split: every subject today, grouped by section; --json lists them under split")
    func splitView() throws {
        var answer = Self.answer
        // Two tables each: today's, and this month's (empty here).
        answer.usage = answer.usage.flatMap { [$0, Self.table("month", [], projection: Self.today - 10 * Self.day)] }
        let result = try SplitView.result(answer)
        #expect(result.entries.map(\.subject) == ["eth0", "eth1", "network:6f1c1a38-0000-4000-8000-00000000000a"])
        #expect(result.entries[0].kind == "interface" && result.entries[2].kind == "network")
        #expect(result.entries[0].today?.bytes(.internet) == 350 && result.entries[0].thisMonth == nil)
        let text = SplitView.render(result, units: Units())
        #expect(text.contains("Interfaces\n") && text.contains("Networks\n") && text.contains("today local"))
        let json = String(decoding: result.jsonBytes, as: UTF8.self)
        #expect(json.contains("\"\(SubjectSection.scopes.view)\":[{\"kind\":\"interface\",\"subject\":\"eth0\",\"today\":{\"internet\""))
        #expect(SplitView.render(SplitView.Result(entries: [], footnote: ""), units: Units()).contains("No traffic scopes"))
    }

    @Test("--split is an option of the summary, the period views, top, networks and apps; not of chart")
    func options() {
        for command in [SummaryCommand.self, DaysCommand.self, MonthsCommand.self, HoursCommand.self, YearsCommand.self,
                        FiveMinutesCommand.self, TopCommand.self, NetworksCommand.self, AppsCommand.self] as [any Subcommand.Type] {
            #expect(command.options.contains(.split), "\(command.name)")
        }
        #expect(!ChartCommand.options.contains(.split))
    }

    @Test("networks --split and apps --split: the month's splits in the order listed, under split")
    func listJSON() {
        var split = SplitRow()
        split.rx = [1, 2, 0]
        let apps = AppsView.Result(apps: [], health: nil, network: nil, footnote: "f", splits: [split, nil])
        #expect(String(decoding: apps.jsonBytes, as: UTF8.self).hasSuffix(#""footnote":"f","split":[{"internet":{"rx_bytes":2,"tx_bytes":0},"local":{"rx_bytes":1,"tx_bytes":0},"split":true,"unknown":{"rx_bytes":0,"tx_bytes":0}},{"split":false}]}"#))
        let plain = AppsView.Result(apps: [], health: nil, network: nil, footnote: "f")
        #expect(!String(decoding: plain.jsonBytes, as: UTF8.self).contains("split"), "without --split, the document it always was")
    }
}
