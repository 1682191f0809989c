import FoundationEssentials
import IfMeterCore
import IfMeterJSON
import IfMeterWire
import Testing

/// Every hand-written result form against the `Codable` one: the same bytes out, the same value
/// back in, so old and new peers read each other.
@Suite("hand-written JSON of results")
struct ResultsJSONTests {
    static let continuities = [
        Continuity(since: 1_774_944_000.25, resets: 2, gaps: 1, implausibleDropped: 3, eventsLost: 4, imported: true),
        Continuity(),
    ]

    static let rows = continuities.map {
        UsageRowResult(UsageRowFields(start: 1_774_944_000, end: 1_775_030_400, continuity: $0, labels: ["estimate", "reset-included"]),
                       traffic: Traffic(rxBytes: .max, txBytes: 7, rxPackets: 1, txPackets: 0))
    }

    static let interfaces = [
        InterfaceResult(InterfaceFields(
            name: "wlan0 \"x\"/é", ifindex: 3, class: "wifi", classReason: "sysfs says wireless", kind: "",
            operstate: "up",
            epoch: EpochResult(EpochFields(bootID: "b-1", ifindex: 3, generation: 2, since: 17.5),
                               traffic: Traffic(rxBytes: 1, txBytes: 2, rxPackets: 3, txPackets: 4)),
            rate: RateResult(rxBytesPerSecond: 1.5, txBytesPerSecond: 0, smoothedRxBytesPerSecond: 1e-7,
                             smoothedTxBytesPerSecond: 123456789.123),
            continuity: continuities[0], labels: ["estimate"], lastSeen: nil),
            traffic: Traffic(rxBytes: 10, txBytes: 20, rxPackets: 30, txPackets: 40)),
        InterfaceResult(InterfaceFields(
            name: "gone", ifindex: nil, class: "tunnel", classReason: "kind wireguard", kind: "wireguard",
            operstate: "absent", epoch: nil, rate: nil, continuity: continuities[1], labels: [], lastSeen: 1_774_944_001),
            traffic: .zero),
    ]

    static let usage = [
        UsageResult(interface: "eth0", class: nil, period: "day", rows: rows,
                    projection: ProjectionResult(start: 1, end: 2, elapsedFraction: 0.5, rxBytes: 3, txBytes: 4, labels: ["projection"]),
                    footnote: EstimateLabel.footnote),
        UsageResult(interface: nil, class: "wifi", period: "total", rows: [], projection: nil, footnote: ""),
    ]

    static let status = StatusResult(
        ready: true, version: "0.1.0", pid: 42, startedAt: 1_774_944_000.5, interval: 30, saveInterval: 60,
        lastSampleAt: 1_774_944_030.25, source: "netlink", interfaces: 3,
        store: StoreHealth(path: "/var/lib/ifmeter/ifmeter.db", healthy: false, lastSaveAt: 5, error: "disk full"),
        socket: "/run/ifmeter/ifmeterd.sock", timeZone: "local",
        linkEvents: LinkEventsHealth(origin: "own", receiveBuffer: 4 << 20), metrics: "127.0.0.1:10951")

    static func check<T: JSONWritable & JSONReadable & Encodable & Equatable>(_ value: T) throws {
        let expected = try JSONLineEncoder().encode(value)
        #expect(String(decoding: value.jsonBytes, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
        var reader = JSONReader(value.jsonBytes)
        #expect(try T(reading: &reader) == value)
    }

    @Test("every result type: the encoder's bytes, and back")
    func sameAsCodable() throws {
        for continuity in Self.continuities { try Self.check(continuity) }
        for row in Self.rows { try Self.check(row) }
        for interface in Self.interfaces { try Self.check(interface) }
        for table in Self.usage { try Self.check(table) }
        try Self.check(Self.status)
        try Self.check(StatusResult(ready: false, version: "v", pid: 1, startedAt: 0, interval: 1, saveInterval: 1,
                                    lastSampleAt: nil, source: nil, interfaces: nil, store: nil, socket: "s", timeZone: nil))
    }

    @Test("requests as the client writes them: the encoder's bytes")
    func requests() throws {
        var query = Request(.query, id: .string("q\"1"))
        (query.interfaces, query.class, query.select, query.sum, query.include) = (["eth0", "wlan0"], "wifi", "all", true, ["status"])
        query.usage = [UsageSpec(.day, from: TimeArgument(seconds: 1.5), to: TimeArgument(seconds: 1_774_944_000), projection: true),
                       UsageSpec(.total)]
        var other = Request(.importHistory, id: .number(-3), interface: "x", period: .month, from: TimeArgument(seconds: 0),
                            kind: "reset", limit: 5, projection: false, format: "openmetrics", process: false)
        (other.source, other.path, other.dryRun, other.utc) = ("vnstat", "/var/lib/vnstat/vnstat.db", true, false)
        for request in [query, other, Request(cmd: nil)] {
            #expect(String(decoding: request.jsonBytes, as: UTF8.self)
                    == String(decoding: try JSONLineEncoder().encode(request), as: UTF8.self))
        }
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
