import IfMeterPresentation
import Foundation
import IfMeterCore
@testable import IfMeterCLI
import IfMeterJSON
import IfMeterWire
import IfMeterTestSupport
import Testing

@Suite("ifmeter: units, times, arguments", .ownThread, .timeLimit(.minutes(3)))
struct CLIUnitTests {
    @Test("bytes and rates in IEC, SI and bits")
    func units() {
        let iec = Units()
        #expect(iec.bytes(0) == "0 B")
        #expect(iec.bytes(1023) == "1023 B")
        #expect(iec.bytes(1536) == "1.50 KiB")
        #expect(iec.bytes(10 << 30) == "10.00 GiB")
        #expect(Units(base: .si).bytes(1_500_000) == "1.50 MB")
        #expect(iec.rate(1_048_576) == "1.00 MiB/s")
        #expect(Units(base: .si, bits: true).rate(1_250_000) == "10.00 Mbit/s")
        #expect(Units(bits: true).rate(128) == "1.00 Kibit/s")
    }

    @Test("times in UTC and with an offset: RFC 3339, Unix seconds, and what is not a time")
    func times() {
        let utc = TimeText(utc: true)
        #expect(utc.parse("2026-03-29") == 1_774_742_400)
        #expect(utc.parse("2026-03-29T12:00:00Z") == 1_774_785_600)
        #expect(utc.parse("2026-03-29T14:00:00+02:00") == 1_774_785_600)
        #expect(utc.parse("@1774785600") == 1_774_785_600)
        #expect(utc.parse("2026-13-01") == nil)
        #expect(utc.parse("yesterday") == nil)
        #expect(utc.format(1_774_746_000, "%H:%M") == "01:00")
    }

    @Test("commands, vnStat switches and per-command options")
    func arguments() throws {
        #expect(try ParsedCommandLine([]).command == SummaryCommand.self)
        #expect(try ParsedCommandLine(["-d", "-i", "eth0"]).command == DaysCommand.self)
        let hours = try ParsedCommandLine(["-i", "eth0,wlan0", "hours"])
        #expect(try Subjects(hours.parsed).interfaces == ["eth0", "wlan0"])
        #expect(try ParsedCommandLine(["-tr"]).command == RateCommand.self)
        #expect(try ParsedCommandLine(["days", "--help"]).helpRequested)
        let help = try ParsedCommandLine(["help", "check"])
        #expect(help.command == CheckCommand.self && help.helpRequested)
        let chartLine = try ParsedCommandLine(["chart", "days", "-o", "x.svg", "--si"])
        let chart = try ChartCommand(chartLine.parsed)
        #expect(chart.table.period == .day && chart.path == "x.svg" && chart.table.limit == 30 && chartLine.parsed.isSet(.si))
        let check = try CheckCommand(try ParsedCommandLine(["check", "-i", "wwan0", "--limit", "10GiB", "--warn=90%", "--projected"]).parsed)
        #expect(check.limit == "10GiB" && check.warn == "90%" && check.projected && check.interfaces == ["wwan0"])
        let importing = ImportCommand(try ParsedCommandLine(["import", "vnstat", "/tmp/v.db", "--dry-run"]).parsed)
        #expect(importing.path == "/tmp/v.db" && importing.dryRun && !importing.utc)
        #expect(try TopCommand(try ParsedCommandLine(["top"]).parsed).table.limit == 10)
    }

    @Test("bad command lines say what is wrong", arguments: [
        (["frobnicate"], "unknown command \"frobnicate\""),
        (["days", "--follow"], "--follow is not an option of `ifmeter days`"),
        (["--nope"], "unknown option --nope"),
        (["days", "--limit", "0"], "--limit: expected a positive number of rows"),
        (["days", "-i"], "-i needs a value"),
        (["chart"], "chart: say which chart"),
        (["chart", "weeks"], "chart: say which chart"),
        (["import"], "import: say which source"),
        (["days", "months"], "months: a second command after days"),
        (["-i", "eth0", "--class", "wifi"], "give -i/--interface or --class, not both"),
        (["--json=yes"], "--json takes no value"),
        (["live", "--count", "0"], "--count: expected a positive number"),
        (["check", "-i", "a", "--direction", "up"], "--direction: expected rx, tx or both"),
        (["notify"], "notify: say what to do"),
    ])
    func badArguments(arguments: [String], message: String) {
        #expect {
            let line = try ParsedCommandLine(arguments)
            _ = try CLI.parse(line.command, line.parsed)
        } throws: { error in
            let error = error as? CLIError
            return error?.status == .usage && error?.message.contains(message) == true
        }
    }

    @Test("a command named in arguments that do not parse; an option's value is not a command")
    func names() {
        #expect(ParsedCommandLine.names(CheckCommand.self, in: ["--socket", "/s", "check", "--bogus"]))
        #expect(!ParsedCommandLine.names(CheckCommand.self, in: ["days", "-i", "check", "--bogus"]))
        #expect(!ParsedCommandLine.names(CheckCommand.self, in: ["--socket", "check"]))
    }

    @Test("the registry: every name, switch and spelling means one thing; every option has help")
    func registry() {
        let names = Subcommands.all.map { $0.name }
        #expect(Set(names).count == names.count)
        let aliases = Subcommands.all.flatMap { $0.aliases }
        #expect(Set(aliases).count == aliases.count)
        #expect(Set(names).isDisjoint(with: aliases))
        for command in Subcommands.all {
            let spellings = (OptionSpec.common + command.options).flatMap(\.names)
            #expect(Set(spellings).count == spellings.count, "\(command.name) repeats an option")
            #expect(Help.text(for: command).hasPrefix("usage: ifmeter"), "\(command.name)")
            for option in command.options {
                #expect(!option.help.isEmpty, "\(command.name) \(option.key)")
                // A spelling takes a value everywhere or nowhere: the parser splits words before it knows the command.
                #expect(Subcommands.optionsBySpelling[option.key]?.takesValue == option.takesValue, "\(option.key)")
            }
        }
    }

    @Test("the hour graph scales to the busiest hour")
    func bar() {
        #expect(PeriodView.bar(rx: 300, tx: 100, peak: 400, width: 8) == "rrrrrrtt")
        #expect(PeriodView.bar(rx: 0, tx: 100, peak: 400, width: 8) == "tt")
        #expect(PeriodView.bar(rx: 0, tx: 0, peak: 0, width: 8) == "")
    }

    @Test("marks and their legend")
    func marks() {
        var marks = Marks()
        #expect(marks.mark(Continuity(resets: 1, gaps: 2)) == "*!")
        #expect(marks.mark(Continuity()) == "")
        let footer = marks.footer()
        #expect(footer.contains("* a counter reset") && footer.contains("! a gap") && !footer.contains("~ "))
        #expect(footer.hasSuffix(EstimateLabel.footnote + "\n"))
    }
}

@Suite("ifmeter check", .ownThread, .timeLimit(.minutes(3)))
struct QuotaCheckTests {
    static let monthStart = 1_772_319_600.0

    func usage(rx: UInt64, tx: UInt64, projectedRx: UInt64, projectedTx: UInt64, resets: Int = 0) -> UsageResult {
        UsageResult(
            interface: "wwan0", class: nil, period: "month",
            rows: [UsageRowResult(UsageRowFields(start: Self.monthStart, end: Self.monthStart + 31 * 86400,
                                                 continuity: Continuity(resets: resets), labels: ["estimate"]),
                                  traffic: Traffic(rxBytes: rx, txBytes: tx))],
            projection: ProjectionResult(start: Self.monthStart, end: Self.monthStart + 31 * 86400, elapsedFraction: 0.5,
                                         rxBytes: projectedRx, txBytes: projectedTx, labels: ["estimate", "projection"]),
            footnote: "")
    }

    func evaluate(_ usage: UsageResult, limit: UInt64 = 10 << 30, warn: Double = 0.8, projected: Bool = false,
                  direction: String = "both") -> QuotaCheck {
        QuotaCheck.evaluate(interface: "wwan0", period: "month", usage: usage, limit: limit, warnFraction: warn,
                            projected: projected, direction: direction, units: Units(), time: TimeText(utc: true))
    }

    @Test("ok, warning at the threshold, critical at the limit")
    func statuses() {
        let gib: UInt64 = 1 << 30
        #expect(evaluate(usage(rx: 3 * gib, tx: gib, projectedRx: 6 * gib, projectedTx: 2 * gib)).status == .ok)
        #expect(evaluate(usage(rx: 7 * gib, tx: gib, projectedRx: 0, projectedTx: 0)).status == .warning)
        #expect(evaluate(usage(rx: 9 * gib, tx: gib, projectedRx: 0, projectedTx: 0)).status == .critical)
        let projected = evaluate(usage(rx: 3 * gib, tx: gib, projectedRx: 9 * gib, projectedTx: 2 * gib), projected: true)
        #expect(projected.status == .critical && projected.compared == "projected")
        #expect(projected.labels.contains("projection"))
        #expect(evaluate(usage(rx: 9 * gib, tx: gib, projectedRx: 0, projectedTx: 0), direction: "tx").status == .ok)
    }

    @Test("one line: status, reason, Nagios performance data")
    func message() {
        let check = evaluate(usage(rx: 3 << 30, tx: 1 << 30, projectedRx: 6 << 30, projectedTx: 2 << 30, resets: 1))
        #expect(check.message.hasPrefix("OK: wwan0 used 4.00 GiB of 10.00 GiB this month (40%)"))
        #expect(check.message.contains("the period had a reset or gap"))
        #expect(check.message.hasSuffix("| used=4294967296B;8589934592;10737418240;0 projected=8589934592B;8589934592;10737418240;0"))
    }
}

@Suite("ifmeter chart", .ownThread, .timeLimit(.minutes(3)))
struct SVGChartTests {
    @Test("bars are proportional to the data on a round axis")
    func bars() throws {
        let rows = [(3, 1), (6, 2), (0, 0)].enumerated().map { (index: Int, pair: (Int, Int)) -> UsageRowResult in
            let fields = UsageRowFields(start: Double(index) * 86400, end: Double(index + 1) * 86400,
                                        continuity: Continuity(), labels: [])
            return UsageRowResult(fields, traffic: Traffic(rxBytes: UInt64(pair.0) << 20, txBytes: UInt64(pair.1) << 20))
        }
        let usage = UsageResult(interface: "eth0", class: nil, period: "day", rows: rows, projection: nil, footnote: "")
        let svg = SVGChart.render(usage, subject: "eth0", time: TimeText(utc: true), units: Units())
        #expect(SVGChart.axis(peak: 8 << 20, units: Units()) == (Double(8 << 20), Double(2 << 20)))
        // 8 MiB is the axis top: 250 px. 6 MiB rx is 187.5 px, 2 MiB tx 62.5 px.
        #expect(svg.contains(#"<rect class="rx" x="#) && svg.contains(##"height="187.5" fill="#3b75af""##))
        #expect(svg.contains(##"height="62.5" fill="#ef8636""##))
        #expect(svg.contains("data-rx-bytes=\"\(6 << 20)\""))
        #expect(svg.contains("Estimate (estimate, interface-counters, not-per-app, includes-overhead)"))
        #expect(SVGChart.escape("a<b & \"c\"") == "a&lt;b &amp; &quot;c&quot;")
    }

    /// U+0600 (a prepended concatenation mark) and `<` form one grapheme cluster: compared as
    /// `Character`s, the `<` went through raw and a name put tags into the chart.
    @Test("markup is escaped by Unicode scalar: a mark that joins the next character hides no < & \" from the escaper",
          arguments: ["\u{0600}<plaintext>", "\u{0600}<!--", "\u{0600}&x", "\u{0600}\"q", "a\u{0301}<b", "\r\n<", "\u{0600}>", "a\u{1}b\u{1B}"])
    func escapedByScalar(_ name: String) {
        let escaped = Array(SVGChart.escape(name).utf8)
        #expect(!escaped.contains(UInt8(ascii: "<")) && !escaped.contains(UInt8(ascii: ">")) && !escaped.contains(UInt8(ascii: "\"")), "\(escaped)")
        #expect(escaped.count(where: { $0 == UInt8(ascii: "&") }) == name.unicodeScalars.count(where: { "<>&\"".unicodeScalars.contains($0) }))
        let rows = [UsageRowResult(UsageRowFields(start: 1_790_000_000, end: 1_790_086_400, continuity: Continuity(), labels: []),
                                   traffic: Traffic(rxBytes: 5, txBytes: 7))]
        let svg = Array(SVGChart.render(UsageResult(interface: name, class: nil, period: "day", rows: rows, projection: nil, footnote: ""),
                                        subject: name, time: TimeText(utc: true), units: Units()).utf8)
        #expect(svg.firstRange(of: Array("<plaintext".utf8)) == nil && svg.firstRange(of: Array("<!--".utf8)) == nil)
        #expect(!svg.contains(1) && !svg.contains(0x1B), "XML forbids them")
    }
}

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

@Suite("ifmeter's client", .ownThread, .timeLimit(.minutes(3)))
struct DaemonClientTests {
    @Test("a daemon speaking another protocol version is named as such (exit 76)")
    func versionMismatch() {
        #expect {
            _ = try DaemonClient.decode(Array(#"{"v":2,"ok":true,"result":{}}"#.utf8))
        } throws: { error in
            let error = error as? CLIError
            return error?.status == .protocolMismatch && error?.message == "ifmeterd speaks protocol 2, this ifmeter speaks 1; install matching versions"
        }
        let refused = DaemonClient.describe(WireError(.unsupportedVersion, "protocol version 1 is not supported"), command: "usage")
        #expect(refused.status == .protocolMismatch)
        #expect(DaemonClient.describe(WireError(.notReady, ""), command: "usage").status == .starting)
        #expect(DaemonClient.describe(WireError(.permissionDenied, "no"), command: "forget").status == .noPermission)
    }
}

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

@Suite("The first five minutes", .ownThread, .timeLimit(.minutes(3)))
struct FirstMinutesTests {
    func interface(_ name: String, _ interfaceClass: String, operstate: String = "up", bytes: UInt64 = 0) -> InterfaceResult {
        InterfaceResult(InterfaceFields(name: name, ifindex: 1, class: interfaceClass, classReason: "", kind: "",
                                        operstate: operstate, epoch: nil, rate: nil, continuity: Continuity(), labels: []),
                        traffic: Traffic(rxBytes: bytes))
    }

    @Test("physical, Wi-Fi and cellular first; idle down virtual links left out unless --all")
    func defaultOrder() {
        let known = [
            interface("lo", "loopback", bytes: 9), interface("ifb0", "virtual", operstate: "down"),
            interface("br0", "virtual", bytes: 5), interface("wg0", "tunnel", bytes: 7), interface("eth0", "ethernet"),
            interface("usb0", "other"), interface("wwan0", "cellular", operstate: "absent", bytes: 3),
            interface("wlan0", "wifi", bytes: 1), interface("veth1", "virtual", operstate: "lowerlayerdown", bytes: 2),
        ]
        #expect(QuerySelection.shown.pick(known).map(\.name)
                == ["eth0", "wlan0", "wwan0", "usb0", "wg0", "br0", "veth1"])
        #expect(QuerySelection.all.pick(known).map(\.name)
                == ["eth0", "wlan0", "wwan0", "usb0", "wg0", "ifb0", "br0", "veth1"])
    }

    @Test("daemon errors get their own exit statuses and one prefix", arguments: [
        (ErrorCode.tooManyClients, IfMeterCLI.ExitStatus.busy), (.idleTimeout, .connectionLost), (.slowClient, .connectionLost),
        (.storeError, .daemonFailed), (.notReady, .starting), (.permissionDenied, .noPermission), (.badRequest, .usage),
        (.unknownCommand, .protocolMismatch), (.unknownInterface, .usage),
    ])
    func exitStatuses(code: ErrorCode, status: IfMeterCLI.ExitStatus) {
        let error = DaemonClient.describe(WireError(code, "ifmeterd already serves 512 clients (max_clients); try again later"),
                                          command: "status")
        #expect(error.status == status)
        #expect(!error.message.hasPrefix("ifmeterd: ifmeterd"))
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

/// Local times: the process's zone is Europe/Berlin here, in a child (``ZonedChild``).
@Suite("Local times", .enabled(if: ZonedChild.isChild, ZonedChild.skipReason), .ownThread, .timeLimit(.minutes(3)))
struct TimeTextZoneTests {
    @Test("local dates across DST, and offsets that override the zone")
    func localTimes() {
        let local = TimeText(utc: false)
        #expect(local.parse("2026-03-29") == 1_774_738_800)  // 00:00 CET
        #expect(local.parse("2026-03-29 03:00") == 1_774_746_000)  // 03:00 CEST, one hour after 02:00 CET
        #expect(local.parse("2026-03-29T12:00:00Z") == 1_774_785_600)
        #expect(local.parse("2026-03-29T14:00:00+02:00") == 1_774_785_600)
        #expect(local.parse("@1774785600") == 1_774_785_600)
        #expect(local.format(1_774_746_000, "%H:%M %Z") == "03:00 CEST")
    }
}

@Suite("notify's state", .ownThread, .timeLimit(.minutes(3)))
struct NotifyStateTests {
    @Test("keys past the bound are let go, and their events still count as handled; the newest time reads back")
    func forgottenKeysStayHandled() throws {
        let directory = try TemporaryDirectory()
        var state = try NotifyState.load(directory.path + "/notify.state")
        let total = NotifyState.maximumKeys + 2000
        for index in 0..<total { state.remember("plan-threshold p \(index) 0.5", at: Double(index)) }
        #expect(state.count == NotifyState.maximumKeys)
        #expect(state.handled("plan-threshold p 0 0.5", at: 0), "its key was let go; it is older than the newest")
        #expect(!state.handled("plan-threshold p \(total) 0.5", at: Double(total)))
        #expect(state.handled("plan-threshold p \(total - 1) 0.5", at: Double(total - 1)))
        try state.save()
        let again = try NotifyState.load(directory.path + "/notify.state")
        #expect(again.newest == Double(total - 1) && again.count == NotifyState.maximumKeys)
        #expect(again.handled("plan-threshold p 1 0.5", at: 1) && !again.handled("plan-threshold p \(total) 0.5", at: Double(total)))
        #expect(throws: CLIError.self) {
            try NotifyState.parse(Array("ifmeter-notify 1\nnewest soon\n".utf8), path: "bad.state")
        }
    }
}
