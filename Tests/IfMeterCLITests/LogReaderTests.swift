import IfMeterCore
@testable import IfMeterCLI
import IfMeterWire
import IfMeterTestSupport
import Testing

/// Estimate-log lines as ifmeterd writes them: the shared record type, the shared encoder.
enum LogLines {
    static func estimate(_ name: String, _ interfaceClass: String, start: Double, end: Double, rx: UInt64 = 0, tx: UInt64 = 0) -> String {
        line(.estimate(.init(
            interface: name, class: interfaceClass, start: start, end: end,
            tally: BucketTally(traffic: Traffic(rxBytes: rx, txBytes: tx)),
            epoch: Epoch(bootID: "b", ifindex: 2, since: start), labels: EstimateLabel.always, eventsLost: 0)))
    }

    static func event(_ kind: CounterEvent.Kind, at time: Double, _ name: String) -> String {
        line(.event(CounterEvent(kind: kind, at: time, interface: name, detail: "test")))
    }

    static func line(_ record: EstimateLogRecord) -> String {
        String(decoding: LineEncoder.line(record).dropLast(), as: UTF8.self)
    }
}

@Suite("ifmeter log reader", .ownThread, .timeLimit(.minutes(3)))
struct LogReaderTests {
    @Test("complete lines only; junk counted, not fatal")
    func lines() {
        var reader = EstimateLogReader()
        let text = LogLines.event(.reset, at: 5, "eth0") + "\nnot json\n"
            + LogLines.estimate("eth0", "ethernet", start: 10, end: 70, rx: 1, tx: 2) + "\n"
            + #"{"type":"estimate","interf"#
        let (records, consumed) = reader.records(in: Array(text.utf8))
        #expect(records.map(\.record.type) == ["event", "estimate"])
        #expect(records.last?.record == .estimate(.init(
            interface: "eth0", class: "ethernet", start: 10, end: 70, tally: BucketTally(traffic: Traffic(rxBytes: 1, txBytes: 2)),
            epoch: Epoch(bootID: "b", ifindex: 2, since: 10), labels: EstimateLabel.always, eventsLost: 0)))
        #expect(reader.unreadable == 1)
        #expect(consumed == text.utf8.count - #"{"type":"estimate","interf"#.utf8.count)
    }

    @Test("filters: interface, class (events learn it from estimates), time, kind")
    func filters() throws {
        var reader = EstimateLogReader()
        let text = [
            LogLines.estimate("eth0", "ethernet", start: 10, end: 70),
            LogLines.event(.reset, at: 20, "eth0"),
            LogLines.estimate("wwan0", "cellular", start: 30, end: 90),
            LogLines.event(.gap, at: 40, "wwan0"),
        ].joined(separator: "\n") + "\n"
        let records = reader.records(in: Array(text.utf8)).records
        func run(_ filter: LogFilter) -> [String] {
            var filter = filter
            return records.filter { filter.matches($0) }.map { record in
                if case .event(let event) = record.record { return "\(record.interface ?? "")/\(event.kind.rawValue)" }
                return "\(record.interface ?? "")/\(record.record.type)"
            }
        }
        #expect(run(LogFilter(interfaces: ["eth0"])) == ["eth0/estimate", "eth0/reset"])
        #expect(run(LogFilter(interfaceClass: "cellular")) == ["wwan0/estimate", "wwan0/gap"])
        #expect(run(LogFilter(from: 20, to: 40)) == ["eth0/reset", "wwan0/estimate"])
        #expect(run(LogFilter(kind: "event")) == ["eth0/reset", "wwan0/gap"])
        #expect(run(LogFilter(kind: "gap")) == ["wwan0/gap"])
    }
}
