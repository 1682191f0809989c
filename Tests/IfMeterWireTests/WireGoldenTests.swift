import FoundationEssentials
import IfMeterCore
import IfMeterJSON
import IfMeterWire
import IfMeterTestSupport
import Testing

/// The wire bytes of every answer the daemon writes and of every request outcome, pinned in
/// `Golden/`: a change of how a type writes itself, or of which writer writes it, fails here
/// unless it leaves every byte as it was. `IFMETER_WRITE_GOLDEN=1` rewrites the files, for a
/// change that means to alter the wire (and says so in docs/PROTOCOL.md).
@Suite("Wire bytes (golden)", .ownThread, .timeLimit(.minutes(3)))
struct WireGoldenTests {
    /// The HTTP listener takes an answer's status from its head, on the loop: a 93 MB answer
    /// parsed there again once held the loop for seconds.
    @Test("every golden answer's error code, read from its head, is the one Foundation reads in it")
    func errorCodeFromHead() throws {
        let lines = try IndependentJSON.goldenLines("answers.jsonl", besides: #filePath)
        var errors = 0
        for line in lines {
            let object = try IndependentJSON.object(line)
            let code = IndependentJSON.value(object, "error.code") as? String
            errors += code == nil ? 0 : 1
            #expect(LineEncoder.errorCode(of: Array((line + "\n").utf8))?.rawValue == code, "\(line.prefix(120))")
        }
        #expect(errors >= 3 && errors < lines.count, "the goldens hold both")
        for code in ErrorCode.allCases {
            let line = LineEncoder.failure(WireError(code, "\"error\":{\"code\":\"x", id: .string("{\"error\":")))
            #expect(LineEncoder.errorCode(of: line) == code)
        }
    }

    static let continuity = Continuity(since: 1_774_944_000.25, resets: 2, gaps: 1, implausibleDropped: 3, eventsLost: 4,
                                       imported: true)
    static let traffic = Traffic(rxBytes: .max, txBytes: 7, rxPackets: 1, txPackets: 0)

    static let interfaces = [
        InterfaceResult(InterfaceFields(
            name: "wlan0 \"x\"/é\u{1}", ifindex: 3, class: "wifi", classReason: "sysfs says wireless", kind: "",
            operstate: "up",
            epoch: EpochResult(EpochFields(bootID: "b-1", ifindex: 3, generation: 2, since: 17.5),
                               traffic: Traffic(rxBytes: 1, txBytes: 2, rxPackets: 3, txPackets: 4)),
            rate: RateResult(rxBytesPerSecond: 1.5, txBytesPerSecond: 0, smoothedRxBytesPerSecond: 1e-7,
                             smoothedTxBytesPerSecond: 123456789.123),
            continuity: continuity, labels: ["estimate", "interface-counters"], lastSeen: nil),
            traffic: Traffic(rxBytes: 10, txBytes: 20, rxPackets: 30, txPackets: 40)),
        InterfaceResult(InterfaceFields(
            name: "gone", ifindex: nil, class: "tunnel", classReason: "kind wireguard", kind: "wireguard",
            operstate: "absent", epoch: nil, rate: nil, continuity: Continuity(), labels: [], lastSeen: 1_774_944_001),
            traffic: .zero),
    ]

    static let usage = [
        UsageResult(interface: "eth0", class: nil, period: "day",
                    rows: [UsageRowResult(UsageRowFields(start: 1_774_944_000, end: 1_775_030_400, continuity: continuity,
                                                         labels: ["estimate", "reset-in-period"]), traffic: traffic)],
                    projection: ProjectionResult(start: 1, end: 2, elapsedFraction: 0.5, rxBytes: 3, txBytes: 4,
                                                 labels: ["projection"]),
                    footnote: EstimateLabel.footnote),
        UsageResult(interface: nil, class: "wifi", period: "total", rows: [], projection: nil, footnote: ""),
    ]

    static let status = StatusResult(
        ready: true, version: "0.1.0", pid: 42, startedAt: 1_774_944_000.5, interval: 30, saveInterval: 60,
        lastSampleAt: 1_774_944_030.25, source: "netlink", interfaces: 3,
        store: StoreHealth(path: "/var/lib/ifmeter/ifmeter.db", healthy: false, lastSaveAt: 5, error: "disk full"),
        socket: "/run/ifmeter/ifmeterd.sock", timeZone: "local",
        linkEvents: LinkEventsHealth(origin: "own", receiveBuffer: 4 << 20), metrics: "127.0.0.1:10951")

    static let starting = StatusResult(ready: false, version: "v", pid: 1, startedAt: 0, interval: 1, saveInterval: 1,
                                       lastSampleAt: nil, source: nil, interfaces: nil, store: nil, socket: "s", timeZone: nil)

    static let events = [
        CounterEvent(kind: .reset, at: 1_774_944_000.125, interface: "eth0", ifindex: 2,
                     previous: Traffic(rxBytes: 9, txBytes: 8, rxPackets: 7, txPackets: 6),
                     current: Traffic(rxBytes: 1, txBytes: 2, rxPackets: 3, txPackets: 4), delta: traffic,
                     detail: "counters went \"backwards\""),
        CounterEvent(kind: .reboot, at: 5, detail: ""),
    ]

    /// Every answer line, as the daemon writes it.
    static var answers: [[UInt8]] {
        [
            LineEncoder.success(status, id: .number(1)),
            LineEncoder.success(starting, id: nil),
            LineEncoder.success(InterfacesResult(interfaces: interfaces, footnote: EstimateLabel.footnote), id: .string("i\"d")),
            LineEncoder.success(usage[0], id: .number(-7)),
            LineEncoder.success(usage[1], id: nil),
            LineEncoder.success(QueryResult(
                status: status, subjects: [QuerySubject(name: "eth0", class: "ethernet"), QuerySubject(name: nil, class: "wifi")],
                interfaces: interfaces, usage: usage, footnote: EstimateLabel.footnote), id: .number(3)),
            LineEncoder.success(QueryResult(status: nil, subjects: [], interfaces: nil, usage: [], footnote: ""), id: nil),
            LineEncoder.success(EventsResult(events: events), id: .number(4)),
            LineEncoder.success(EventsResult(events: []), id: nil),
            LineEncoder.success(SampleResult(sampledAt: 1_774_944_000.75, interfaces: 12), id: .number(5)),
            LineEncoder.success(RatesResult(at: 17, interfaces: [
                RatesResult.Entry(name: "eth0", rate: RateResult(rxBytesPerSecond: 1, txBytesPerSecond: 2.5,
                                                                 smoothedRxBytesPerSecond: .infinity, smoothedTxBytesPerSecond: 0)),
            ]), id: .string("w"), stream: "rates"),
            LineEncoder.success(events[0], id: .string("w"), stream: "event"),
            LineEncoder.success(events[1], id: nil, stream: "event"),
            LineEncoder.success(AdminResult(done: "configuration reloaded from /etc/ifmeter/ifmeterd.conf"),
                                                id: .number(6)),
            LineEncoder.success(MetricsResult(contentType: "text/plain; version=0.0.4; charset=utf-8",
                                                              text: "# HELP x \"y\"\\\nx{a=\"b\"} 1\n"), id: nil),
            LineEncoder.success(ImportResult(source: "vnstat", path: "/var/lib/vnstat/vnstat.db", dryRun: true,
                interfaces: [
                    ImportResult.Interface(name: "eth0", buckets: ["day": 3, "5min": 1, "month": 0, "hour": 2, "year": 9],
                                           alreadyImported: 4, overlapSkipped: 5, totalRxBytes: .max, totalTxBytes: 0,
                                           overlapFrom: 1.5, overlapTo: 2.5),
                    ImportResult.Interface(name: "wlan0", buckets: [:], alreadyImported: 0, overlapSkipped: 0, totalRxBytes: 1,
                                           totalTxBytes: 2, overlapFrom: nil, overlapTo: nil),
                ]), id: .number(8)),
            LineEncoder.failure(WireError(.badRequest, "field \"period\" is missing", id: .number(9))),
            LineEncoder.failure(WireError(.lineTooLong, "request line longer than 65536 bytes", id: nil)),
            LineEncoder.failure(WireError(.unknownInterface, "never seen \"x\"", id: .string("s"))),
            LineEncoder.line(EstimateLogRecord.estimate(EstimateLogRecord.WindowRecord(
                interface: "eth0", class: "ethernet", start: 1_774_944_000, end: 1_774_944_060,
                tally: BucketTally(traffic: Traffic(rxBytes: 5, txBytes: 6, rxPackets: 7, txPackets: 8), resets: 1, gaps: 2),
                epoch: Epoch(bootID: "b", ifindex: 2, generation: 1, since: 3), labels: [.estimate, .interfaceCounters],
                eventsLost: 1))),
            LineEncoder.line(EstimateLogRecord.estimate(EstimateLogRecord.WindowRecord(
                interface: "x", class: nil, start: 0, end: 1, tally: BucketTally(), epoch: Epoch(bootID: "b", ifindex: 9, since: 0),
                labels: [], eventsLost: 0))),
            LineEncoder.line(EstimateLogRecord.event(events[0])),
            LineEncoder.line(EstimateLogRecord.event(events[1])),
        ]
    }

    /// Request lines a peer may send, well formed and not: each one's outcome is pinned.
    static let requests: [String] = [
        #"{"v":1,"cmd":"status"}"#,
        #"{"v":1,"id":7,"cmd":"interfaces"}"#,
        #" { "v" : 1 , "id" : "a b" , "cmd" : "usage" , "interface" : "eth0" , "period" : "day" } "#,
        #"{"v":1,"cmd":"usage","class":"wifi","period":"month","from":0,"to":253402300799,"projection":true}"#,
        #"{"v":1,"cmd":"usage","interface":"eth0","period":"day","from":"2026-01-01T00:00:00Z","to":"2026-02-01T00:00:00.5+01:00"}"#,
        #"{"v":1,"cmd":"usage","interface":"eth0","period":"day","from":"yesterday"}"#,
        #"{"v":1,"cmd":"usage","interface":"eth0","period":"day","from":1.5e3,"to":-0.0}"#,
        #"{"v":1,"cmd":"events","kind":"reset","limit":100,"interface":"eth0"}"#,
        #"{"v":1,"cmd":"metrics","format":"openmetrics","process":false}"#,
        #"{"v":1,"cmd":"import","source":"vnstat","path":"/var/lib/vnstat/vnstat.db","dry_run":true,"utc":false}"#,
        #"{"v":1,"cmd":"query","id":"q","interfaces":["eth0","wlan0"],"class":"wifi","select":"all","sum":true,"include":["status","interfaces"],"usage":[{"period":"day","last":3,"projection":true},{"period":"total"},{"period":"month","from":0,"to":10,"top":5}]}"#,
        #"{"v":1,"cmd":"query","usage":[]}"#,
        #"{"v":1,"cmd":"forget","interface":"eth0","id":-9223372036854775808}"#,
        #"{"v":1,"cmd":"status","future_field":{"nested":[1,{"deep":null}],"x":"y"}}"#,
        #"{"v":1,"cmd":"status","interface":null,"limit":null,"usage":null}"#,
        #"{"v":1.0,"cmd":"status"}"#,
        #"{"v":1e0,"cmd":"status"}"#,
        #"{"v":-1,"cmd":"status"}"#,
        #"{"v":"1","cmd":"status"}"#,
        #"{"v":1,"cmd":1}"#,
        #"{"v":1,"cmd":"status","id":true}"#,
        #"{"v":1,"cmd":"status","id":1.5}"#,
        #"{"v":1,"cmd":"status","id":{"a":1}}"#,
        #"{"v":1,"cmd":"status","id":null}"#,
        #"{"v":1,"id":4,"cmd":"events","limit":"100"}"#,
        #"{"v":1,"id":4,"cmd":"events","limit":1e20}"#,
        #"{"v":1,"id":4,"cmd":"events","limit":0}"#,
        #"{"v":1,"id":4,"cmd":"events","limit":100001}"#,
        #"{"v":1,"id":4,"cmd":"events","limit":9999999999999999999999}"#,
        #"{"v":1,"id":5,"cmd":"usage","interface":"x","period":"day","from":999999999999999}"#,
        #"{"v":1,"id":5,"cmd":"usage","interface":"x","period":"day","from":-1}"#,
        #"{"v":1,"id":5,"cmd":"usage","interface":"x","period":"day","from":true}"#,
        #"{"v":1,"id":5,"cmd":"usage","interface":["x"],"period":"day"}"#,
        #"{"v":1,"id":6,"cmd":"query","interfaces":"eth0"}"#,
        #"{"v":1,"id":6,"cmd":"query","interfaces":["eth0",1]}"#,
        #"{"v":1,"id":6,"cmd":"query","usage":[{"period":"day","last":0}]}"#,
        #"{"v":1,"id":6,"cmd":"query","usage":[{"period":"day","top":"3"}]}"#,
        #"{"v":1,"id":6,"cmd":"query","usage":[{"period":"day","from":-5}]}"#,
        #"{"v":1,"id":6,"cmd":"query","usage":{"period":"day"}}"#,
        #"{"v":1,"id":6,"cmd":"query","include":"status"}"#,
        #"{"v":1,"id":7,"cmd":"metrics","process":"no"}"#,
        #"{"v":1,"id":7,"cmd":"import","dry_run":1}"#,
        #"{"cmd":"status","cmd":"status"}"#,
        #"{"cmd":"st\u0061tus","v":1}"#,
        #"{"cmd":"st\ud83d\ude00","v":1}"#,
        #"{"cmd":"\ud83d","v":1}"#,
        #"{"cmd":"status"} x"#,
        #"{"cmd":"status"}}"#,
        #"{"cmd":"status",}"#,
        #"{"cmd" "status"}"#,
        #"{"cmd":"status""#,
        "",
        "   ",
        "[]",
        #"[{"cmd":"status"}]"#,
        #""status""#,
        "null",
        "42",
        #"{"sum":tru}"#,
        #"{"sum":True}"#,
        "{\"cmd\":\"a\u{01}b\"}",
        "{\"cmd\":\"a\tb\"}",
        #"{"v":1,"cmd":"status","id":01}"#,
        #"{"v":1,"cmd":"status","limit":-0}"#,
        #"{"v":1,"cmd":"status","limit":1.0}"#,
        #"{"v":1,"cmd":"status","limit":2147483648}"#,
        String(repeating: "[", count: 100) + String(repeating: "]", count: 100),
        #"{"a":"# + String(repeating: "[", count: 70) + String(repeating: "]", count: 70) + "}",
        #"{"v":1,"cmd":"events","limit":1.5}"#,
        #"{"v":1e20,"cmd":"status"}"#,
        #"{"v":1,"cmd":"status","id":1e20}"#,
        #"{"v":1,"cmd":"status","id":9223372036854775808}"#,
        #"{"v":1,"cmd":"status","id":-1.0}"#,
        #"{"v":1,"cmd":"usage","from":1e400}"#,
        #"{"v":1,"cmd":"usage","from":-1e400}"#,
        #"{"v":1,"cmd":"usage","from":1E3,"to":1e+3}"#,
        #"{"v":1,"id":2,"cmd":"query","interfaces":[null]}"#,
        #"{"v":1,"id":2,"cmd":"query","usage":[null]}"#,
        #"{"v":1,"id":2,"cmd":"query","usage":[1]}"#,
        #"{"v":1,"id":2,"cmd":"query","usage":[{"period":5}]}"#,
        #"{"v":1,"id":2,"cmd":"query","usage":[{"period":"day","x":[1,2]}]}"#,
        #"{"v":1,"id":2,"cmd":"query","usage":[{"period":"day","from":"2026-01-01"}]}"#,
        #"{"v":1,"id":2,"cmd":"query","include":[true]}"#,
        #"{"v":1,"id":"x","cmd":"status","v":2}"#,
        #"{"id":"\u00e9\n\"","v":1,"cmd":"status"}"#,
        #"{"v":1,"cmd":"status","id":"a","id":3}"#,
        #"{"v":1,"cmd":"usage","interface":"a","interface":7}"#,
        #"{"v":1,"cmd":"status","sum":false,"projection":true,"process":true,"dry_run":false,"utc":true}"#,
        #"{"v":1,"cmd":"status"  }  "#,
        "\u{FEFF}{\"v\":1,\"cmd\":\"status\"}",
        #"{"v":1,"cmd":"status","x":1e999}"#,
        #"{"v":1,"cmd":"status","x":"\x"}"#,
        #"{"v":1,"cmd":"status","x":-}"#,
        #"{"v":1,"cmd":"status","x":.5}"#,
        #"{"v":1,"cmd":"status","x":1.}"#,
        #"{"v":1,"cmd":"status","x":+1}"#,
        #"{"v":1,"cmd":"status","x":0x10}"#,
        #"{"v":1,"cmd":"status","x":NaN}"#,
        #"{"v":1,"cmd":"status",1:2}"#,
        #"{'v':1}"#,
        "{\"v\":1,\"cmd\":\"st\u{7F}atus\"}",
        "{\"v\":1,\"cmd\":\"status\"}\n",
        "{\"v\":1,\n\"cmd\":\"status\"}",
        #"{"a":"# + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}",
        #"{"v":01,"cmd":"status"}"#,
        #"{"v":1,"cmd":"events","limit":01}"#,
        #"{"v":1,"cmd":"events","limit":-01}"#,
        #"{"v":1,"cmd":"events","limit":00}"#,
        #"{"v":1,"cmd":"usage","from":01}"#,
        #"{"v":1,"cmd":"events","limit":1e3}"#,
        #"{"v":1,"cmd":"events","limit":-1.0e0}"#,
        #"{"v":true,"cmd":"status"}"#,
        #"{"v":1,"cmd":"status","id":-0}"#,
        #"{"v":1,"cmd":"status","id":1E2}"#,
        #"{"v":1,"cmd":"status","id":1.}"#,
        #"{"v":1,"cmd":"events","limit":1.}"#,
        #"{"v":1,"cmd":"events","limit":-}"#,
        #"{"v":1,"cmd":"usage","from":-}"#,
        #"{"v":1,"cmd":"usage","from":"2026-01-01T00:00:00.123456Z"}"#,
        #"{"v":1,"cmd":"usage","from":"2026-01-01t00:00:00z"}"#,
        #"{"v":1,"cmd":"usage","from":"2026-01-01 00:00:00Z"}"#,
        #"{"v":1,"cmd":"usage","from":"2026-01-01T00:00:00"}"#,
        #"{"v":1,"cmd":"usage","from":""}"#,
        #"{"v":1,"cmd":"usage","from":{"a":1}}"#,
        #"{"v":1,"cmd":"usage","from":[1]}"#,
        #"{"limit":"x","v":"1"}"#,
        #"{"usage":[{"top":"x","period":1}],"interfaces":[1],"id":5}"#,
        #"{"usage":[{"period":"day"},{"last":"x"}],"include":[1]}"#,
        #"{"cmd":"a\u0000b","v":1}"#,
        #"{"cmd":"\u00","v":1}"#,
        #"{"cmd":"a","v":1,"":2}"#,
        #"{"v":1,"cmd":"status","id":""}"#,
        #"{"v":1,"cmd":"query","interfaces":[],"include":[],"usage":[{}]}"#,
        "{}",
    ]

    /// What the daemon makes of one request line: the request as it reads it, or its error line.
    static func outcome(_ line: String) -> String {
        switch RequestLine.parse(Array(line.utf8)) {
        case .success(let request): "ok " + String(decoding: request.jsonBytes, as: UTF8.self)
        case .failure(let error): "error " + String(decoding: LineEncoder.failure(error).dropLast(), as: UTF8.self)
        }
    }

    @Test("every answer's bytes")
    func answerBytes() throws {
        try Self.check("answers.jsonl", Self.answers.map { String(decoding: $0, as: UTF8.self) }.joined())
    }

    @Test("every request line's outcome")
    func requestOutcomes() throws {
        try Self.check("requests.txt", Self.requests.map { Self.outcome($0) + "\n" }.joined(), inputs: Self.requests)
    }

    static func check(_ name: String, _ text: String, inputs: [String] = []) throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden/\(name)")
        if ProcessInfo.processInfo.environment["IFMETER_WRITE_GOLDEN"] == "1" {
            try Data(text.utf8).write(to: url)
            return
        }
        let golden = try String(decoding: Data(contentsOf: url), as: UTF8.self)
        let (got, want) = (text.split(separator: "\n", omittingEmptySubsequences: false),
                           golden.split(separator: "\n", omittingEmptySubsequences: false))
        #expect(got.count == want.count, "\(name): \(got.count) lines, golden has \(want.count)")
        for (index, (line, expected)) in zip(got, want).enumerated() where line != expected {
            let input = index < inputs.count ? "\n for  \(inputs[index].debugDescription)" : ""
            Issue.record("\(name) line \(index + 1):\(input)\n got  \(line)\n want \(expected)")
        }
    }
}
