import Foundation
import IfMeterCore
@testable import IfMeterCLI
import IfMeterJSON
import IfMeterWire
import IfMeterTestSupport
import Testing

@Suite("Traffic in answers", .ownThread, .timeLimit(.minutes(3)))
struct WithTrafficTests {
    @Test("rx/tx bytes and packets sit beside the other fields, and read back the same")
    func flattened() throws {
        let row = UsageRowResult(UsageRowFields(start: 60, end: 120, continuity: Continuity(resets: 1), labels: ["estimate"]),
                                 traffic: Traffic(rxBytes: 1, txBytes: 2, rxPackets: 3, txPackets: 4))
        let line = String(decoding: LineEncoder.line(row), as: UTF8.self)
        #expect(line == #"{"continuity":{"events_lost":0,"gaps":0,"implausible_dropped":0,"resets":1},"end":120,"labels":["estimate"],"rx_bytes":1,"rx_packets":3,"start":60,"tx_bytes":2,"tx_packets":4}"# + "\n")
        var reader = JSONReader(Array(line.utf8))
        let decoded = try UsageRowResult(reading: &reader)
        #expect(decoded == row)
        #expect(decoded.rxBytes == 1 && decoded.start == 60)
    }
}

/// The bytes of every `--json` view, pinned in `Golden/views.jsonl` (written by the same
/// writers the daemon's answers use; `IFMETER_WRITE_GOLDEN=1` rewrites the file).
@Suite("--json bytes (golden)", .ownThread, .timeLimit(.minutes(3)))
struct ViewJSONTests {
    static let row = UsageRowResult(
        UsageRowFields(start: 1_774_944_000, end: 1_775_030_400.5, continuity: Continuity(since: 3, resets: 1, imported: true),
                       labels: ["estimate", "reset-included"]),
        traffic: Traffic(rxBytes: .max, txBytes: 2, rxPackets: 3, txPackets: 4))
    static let projection = ProjectionResult(start: 1, end: 2, elapsedFraction: 0.123456789, rxBytes: 5, txBytes: 6, labels: ["projection"])

    static var views: [any JSONWritable] {
        let summaries = [
            InterfaceSummary(name: "eth0 /\"é\"", class: "ethernet", today: Self.row, yesterday: nil, thisMonth: Self.row,
                             lastMonth: Self.row, allTime: Self.row, monthProjection: Self.projection, dayStart: 1_774_944_000),
            InterfaceSummary(name: "wg0", class: "tunnel", today: nil, yesterday: Self.row, thisMonth: nil, lastMonth: nil,
                             allTime: nil, monthProjection: nil, dayStart: nil),
        ]
        return [
            SummaryResult(interfaces: summaries, footnote: EstimateLabel.footnote),
            UsageTables(usage: [
                UsageResult(interface: "eth0", class: nil, period: "day", rows: [Self.row, Self.row], projection: Self.projection, footnote: "f"),
                UsageResult(interface: nil, class: "wifi", period: "month", rows: [], projection: nil, footnote: "f"),
            ], footnote: EstimateLabel.footnote),
            InterfacesResult(interfaces: [InterfaceResult(InterfaceFields(
                name: "wlan0", ifindex: 3, class: "wifi", classReason: "r", kind: "", operstate: "up",
                epoch: EpochResult(EpochFields(bootID: "b", ifindex: 3, generation: 1, since: 2.5), traffic: Traffic(rxBytes: 1)),
                rate: RateResult(rxBytesPerSecond: 1.25, txBytesPerSecond: 1e-7, smoothedRxBytesPerSecond: 3, smoothedTxBytesPerSecond: 1e21),
                continuity: Continuity(), labels: ["estimate"], lastSeen: nil), traffic: Traffic(txPackets: 9))],
                footnote: EstimateLabel.footnote),
            QuotaCheck(status: .warning, interface: "wwan0 \"x\"/é", period: "month", start: 1_774_944_000, end: 1_777_536_000.5,
                       direction: "total", usedBytes: .max, projectedBytes: 7, limitBytes: 10, warnBytes: 8,
                       compared: "projected", labels: ["estimate", "projection"], message: "WARNING - a/b"),
            QuotaCheck(status: .ok, interface: "x", period: "day", start: 0, end: 1, direction: "rx", usedBytes: 0,
                       projectedBytes: nil, limitBytes: 1, warnBytes: 0, compared: "used", labels: [], message: ""),
            LiveView.LiveSession.Line(session: LiveView.LiveSession(seconds: 12.345678, updates: 3, interfaces: [
                LiveView.LiveSession.Entry(name: "eth0", rxBytes: 1, txBytes: 2, peakRxBytesPerSecond: 1e-7,
                                           peakTxBytesPerSecond: 123456789.5)])),
            LiveView.LiveSession.Line(session: LiveView.LiveSession(seconds: 0, updates: 0, interfaces: [])),
        ]
    }

    @Test("summary, period tables, list, check and the live session write the bytes they always did")
    func sameBytes() throws {
        let text = Self.views.map { String(decoding: $0.jsonBytes, as: UTF8.self) + "\n" }.joined()
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden/views.jsonl")
        if ProcessInfo.processInfo.environment["IFMETER_WRITE_GOLDEN"] == "1" {
            try Data(text.utf8).write(to: url)
            return
        }
        let golden = String(decoding: try Data(contentsOf: url), as: UTF8.self)
        for (index, (line, expected)) in zip(text.split(separator: "\n"), golden.split(separator: "\n")).enumerated()
        where line != expected {
            Issue.record("views.jsonl line \(index + 1):\n got  \(line)\n want \(expected)")
        }
        #expect(text.split(separator: "\n").count == golden.split(separator: "\n").count)
    }

    @Test("views.jsonl read by Foundation: each figure is the value its view was built from; every member is documented")
    func goldenReadIndependently() throws {
        let views = try IndependentJSON.goldenLines("views.jsonl", besides: #filePath).map(IndependentJSON.object)
        #expect(views.count == Self.views.count)
        let documents = try IndependentJSON.documents(["docs/CLI.md", "docs/PROTOCOL.md"], besides: #filePath)
        #expect(IndependentJSON.undocumented(views, in: documents) == [], "members neither docs/CLI.md nor docs/PROTOCOL.md names")
        func value(_ index: Int, _ path: String) -> Any? { IndependentJSON.value(views[index], path) }
        func number(_ index: Int, _ path: String) -> NSNumber? { value(index, path) as? NSNumber }
        // summary: every period of eth0 is the row, the largest counter exact; wg0 only has yesterday.
        #expect(value(0, "interfaces.0.name") as? String == "eth0 /\"é\"")
        for period in ["today", "this_month", "last_month", "all_time"] {
            #expect(number(0, "interfaces.0.\(period).rx_bytes")?.uint64Value == .max, "\(period)")
            #expect(number(0, "interfaces.0.\(period).end")?.doubleValue == 1_775_030_400.5, "\(period)")
        }
        #expect(value(0, "interfaces.0.yesterday") == nil && number(0, "interfaces.0.day_start") == 1_774_944_000)
        #expect(number(0, "interfaces.0.month_projection.elapsed_fraction")?.doubleValue == 0.123456789)
        #expect(value(0, "interfaces.1.today") == nil && number(0, "interfaces.1.yesterday.tx_packets") == 4)
        #expect(value(0, "interfaces.0.today.continuity.imported") as? Bool == true)
        // period tables, list
        #expect((value(1, "usage.0.rows") as? [Any])?.count == 2 && (value(1, "usage.1.rows") as? [Any])?.isEmpty == true)
        #expect(value(1, "usage.1.class") as? String == "wifi" && value(1, "usage.1.interface") == nil)
        #expect(number(2, "interfaces.0.rate.smoothed_tx_bytes_per_second")?.doubleValue == 1e21)
        #expect(number(2, "interfaces.0.rate.tx_bytes_per_second")?.doubleValue == 1e-7)
        #expect(number(2, "interfaces.0.tx_packets") == 9 && number(2, "interfaces.0.epoch.rx_bytes") == 1)
        // check: a warning is status 1, its figures as given; nothing projected is absent.
        #expect(number(3, "status") == 1 && number(3, "used_bytes")?.uint64Value == .max && number(3, "warn_bytes") == 8)
        #expect(value(3, "interface") as? String == "wwan0 \"x\"/é" && number(3, "end")?.doubleValue == 1_777_536_000.5)
        #expect(number(4, "status") == 0 && value(4, "projected_bytes") == nil)
        // the live session
        #expect(number(5, "session.seconds")?.doubleValue == 12.345678 && number(5, "session.updates") == 3)
        #expect(number(5, "session.interfaces.0.peak_rx_bytes_per_second")?.doubleValue == 1e-7)
        #expect(number(5, "session.interfaces.0.peak_tx_bytes_per_second")?.doubleValue == 123456789.5)
        #expect((value(6, "session.interfaces") as? [Any])?.isEmpty == true)
    }
}
