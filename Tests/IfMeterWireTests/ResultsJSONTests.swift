import FoundationEssentials
import IfMeterCore
import IfMeterJSON
import IfMeterWire
import IfMeterTestSupport
import Testing

/// Every result reads back as the value that wrote it (the bytes themselves are pinned by
/// WireGoldenTests), so daemon and client agree on every member.
@Suite("JSON of results, both ways", .ownThread, .timeLimit(.minutes(3)))
struct ResultsJSONTests {
    static let continuities = [
        Continuity(since: 1_774_944_000.25, resets: 2, gaps: 1, implausibleDropped: 3, eventsLost: 4, imported: true),
        Continuity(),
    ]

    static let rows = continuities.map {
        UsageRowResult(UsageRowFields(start: 1_774_944_000, end: 1_775_030_400, continuity: $0, labels: ["estimate", "reset-included"]),
                       traffic: Traffic(rxBytes: .max, txBytes: 7, rxPackets: 1, txPackets: 0))
    }

    // The golden test's values: every optional member present in one, absent in another.
    static let interfaces = WireGoldenTests.interfaces
    static let usage = WireGoldenTests.usage + [UsageResult(interface: "x", class: nil, period: "day", rows: rows,
                                                            projection: nil, footnote: "")]
    static let status = WireGoldenTests.status

    static func check<T: JSONWritable & JSONReadable & Equatable>(_ value: T) throws {
        var reader = JSONReader(value.jsonBytes)
        #expect(try T(reading: &reader) == value)
        #expect(try reader.isAtEnd())
    }

    @Test("every result type reads back as written")
    func roundTrip() throws {
        for continuity in Self.continuities { try Self.check(continuity) }
        for row in Self.rows { try Self.check(row) }
        for interface in Self.interfaces { try Self.check(interface) }
        for table in Self.usage { try Self.check(table) }
        try Self.check(Self.status)
        try Self.check(StatusResult(ready: false, version: "v", pid: 1, startedAt: 0, interval: 1, saveInterval: 1,
                                    lastSampleAt: nil, source: nil, interfaces: nil, store: nil, socket: "s", timeZone: nil))
        try Self.check(InterfacesResult(interfaces: Self.interfaces, footnote: "f"))
        let event = CounterEvent(kind: .reset, at: 5.5, interface: "eth0", ifindex: 2,
                                 previous: Traffic(rxBytes: 1, txBytes: 2, rxPackets: 3, txPackets: 4), current: .zero,
                                 delta: Traffic(rxBytes: .max, txBytes: 0, rxPackets: 0, txPackets: 0), detail: "d\"")
        try Self.check(event)
        try Self.check(EventsResult(events: [event, CounterEvent(kind: .reboot, at: 1, detail: "")]))
        try Self.check(RatesResult(at: 3, interfaces: [RatesResult.Entry(name: "a", rate: Self.interfaces[0].rate!)]))
        try Self.check(SampleResult(sampledAt: 9.25, interfaces: 3))
        try Self.check(AdminResult(done: "x"))
        try Self.check(MetricsResult(contentType: "text/plain", text: "a 1\n"))
        try Self.check(ImportResult(source: "vnstat", path: "/p", dryRun: false, interfaces: [
            ImportResult.Interface(name: "e", buckets: ["day": 2], alreadyImported: 1, overlapSkipped: 0, totalRxBytes: 5,
                                   totalTxBytes: 6, overlapFrom: 1, overlapTo: nil)]))
        try Self.check(EstimateLogRecord.event(event))
        try Self.check(EstimateLogRecord.estimate(EstimateLogRecord.WindowRecord(
            interface: "eth0", class: "ethernet", start: 1, end: 2, tally: BucketTally(traffic: Self.interfaces[0].traffic),
            epoch: Epoch(bootID: "b", ifindex: 2, generation: 1, since: 0), labels: [.estimate], eventsLost: 3)))
    }

    @Test("an estimate-log record reads whatever the order of its members; an unknown type is refused")
    func logRecordOrder() throws {
        var reader = JSONReader(Array(#"{"type":"event","detail":"","kind":"gap","at":4,"interface":"x"}"#.utf8))
        #expect(try EstimateLogRecord(reading: &reader) == .event(CounterEvent(kind: .gap, at: 4, interface: "x", detail: "")))
        var unknown = JSONReader(Array(#"{"type":"other","at":1}"#.utf8))
        #expect(throws: JSONReadError.self) { _ = try EstimateLogRecord(reading: &unknown) }
    }

    @Test("requests as the client writes them read back as the same requests")
    func requests() throws {
        var query = QueryRequest(interfaces: ["eth0", "wlan0"], select: .all, sum: true, usage: [
            UsageSpec(.day, from: TimeArgument(seconds: 1.5), to: TimeArgument(seconds: 1_774_944_000), projection: true),
            UsageSpec(.total),
        ], include: [.status], offset: 2, limit: 5)
        query.class = "wifi"
        let events = EventsRequest(interface: "x", from: TimeArgument(seconds: 0), kind: .reset, limit: 5)
        let other = ImportRequest(vnStatPath: "/var/lib/vnstat/vnstat.db", dryRun: true, utc: false)
        let lines = [RequestLine(query, id: .string("q\"1")), RequestLine(events), RequestLine(other, id: .number(-3)),
                     RequestLine(MetricsRequest(format: .openmetrics, process: false)), RequestLine(cmd: nil)]
        for line in lines {
            #expect(RequestLine.parse(line.jsonBytes) == .success(line))
        }
        #expect(QueryRequest(try RequestLine.parse(lines[0].jsonBytes).get()) == query)
        #expect(EventsRequest(try RequestLine.parse(lines[1].jsonBytes).get()) == events)
        #expect(ImportRequest(try RequestLine.parse(lines[2].jsonBytes).get()) == other)
        // The client's writer, from a command's own members, writes the same bytes.
        #expect(query.lineBytes(id: .string("q\"1")) == lines[0].jsonBytes)
        #expect(events.lineBytes(id: nil) == lines[1].jsonBytes)
        #expect(other.lineBytes(id: .number(-3)) == lines[2].jsonBytes)
        #expect(MetricsRequest(format: .openmetrics, process: false).lineBytes(id: nil) == lines[3].jsonBytes)
    }

    @Test("a query answer reads back whole; members it does not know are skipped")
    func queryRoundTrip() throws {
        let result = QueryResult(
            status: Self.status, subjects: [QuerySubject(name: "eth0", class: "ethernet"), QuerySubject(name: nil, class: "wifi")],
            interfaces: Self.interfaces, usage: Self.usage, footnote: EstimateLabel.footnote)
        var reader = JSONReader(result.jsonBytes)
        #expect(try QueryResult(reading: &reader) == result)
        var newer = JSONReader(Array(#"{"future":{"x":[1,{"y":null}]},"subjects":[],"usage":[],"footnote":"f"}"#.utf8))
        #expect(try QueryResult(reading: &newer).footnote == "f")
    }

    @Test("a result missing a required member is refused, saying which")
    func missingMember() {
        var reader = JSONReader(Array(#"{"rows":[]}"#.utf8))
        #expect(throws: JSONReadError.self) { _ = try UsageResult(reading: &reader) }
    }
}
