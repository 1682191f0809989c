import IfMeterPresentation
import IfMeterCore
import IfMeterJSON
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// `live` and `rate`: rates from the daemon's `watch` stream, pushed after each sample (never
/// polled). `live` redraws in place on a terminal (a line per update otherwise) until Ctrl-C,
/// then sums up the session from the interfaces' counters at its start and end.
enum LiveView {
    /// What a `live` session summed up: `{"session": {...}}` with `--json`.
    struct LiveSession: JSONWritable {
        var seconds: Double
        var updates: Int
        var interfaces: [Entry]

        struct Entry: JSONWritable {
            var name: String
            var rxBytes: UInt64
            var txBytes: UInt64
            var peakRxBytesPerSecond: Double
            var peakTxBytesPerSecond: Double

            func write(to w: inout JSONWriter) {
                w.beginObject()
                w.key("name"); w.string(name)
                w.key("peak_rx_bytes_per_second"); w.number(peakRxBytesPerSecond)
                w.key("peak_tx_bytes_per_second"); w.number(peakTxBytesPerSecond)
                w.key("rx_bytes"); w.number(rxBytes)
                w.key("tx_bytes"); w.number(txBytes)
                w.endObject()
            }
        }

        func write(to w: inout JSONWriter) {
            w.beginObject()
            w.key("interfaces")
            w.beginArray()
            for entry in interfaces { entry.write(to: &w) }
            w.endArray()
            w.key("seconds"); w.number(seconds)
            w.key("updates"); w.number(updates)
            w.endObject()
        }

        /// The line `--json` prints at the end.
        struct Line: JSONWritable {
            var session: LiveSession

            func write(to w: inout JSONWriter) {
                w.beginObject()
                w.key("session"); session.write(to: &w)
                w.endObject()
            }
        }
    }

    /// `rate`: the rates of the last interval, once.
    static func rate(_ session: Session, _ subjects: Subjects, _ context: CommandContext) throws(CLIError) {
        let names = Set(try session.subjects(subjects).map(\.name))
        let watcher = try DaemonClient(path: session.client.path)
        let first = try watcher.send([WatchRequest()])[0]
        var rates = try DaemonClient.result(of: first, as: RatesResult.self)
        rates.interfaces = rates.interfaces.filter { names.contains($0.name) }
        if subjects.merged {
            // `-i a+b`: the members' rates, and their sum as one more line.
            let members = rates.interfaces.map(\.rate)
            guard members.count == names.count else { throw CLIError(.failure, "rate: not every member has a rate yet") }
            rates.interfaces.append(RatesResult.Entry(name: UsageSubject.mergedName(subjects.interfaces), rate: RateResult(
                rxBytesPerSecond: members.reduce(0) { $0 + $1.rxBytesPerSecond },
                txBytesPerSecond: members.reduce(0) { $0 + $1.txBytesPerSecond },
                smoothedRxBytesPerSecond: members.reduce(0) { $0 + $1.smoothedRxBytesPerSecond },
                smoothedTxBytesPerSecond: members.reduce(0) { $0 + $1.smoothedTxBytesPerSecond })))
        }
        if context.json {
            context.output.json(rates)
        } else {
            context.output.write(table(rates, names: names.sorted() + rates.interfaces.dropFirst(names.count).map(\.name),
                                       units: context.units)
                + "over the last \(session.status.interval) s interval\n" + EstimateLabel.footnote + "\n")
        }
    }

    static func table(_ rates: RatesResult, names: [String], units: Units) -> String {
        var grid = Table([.left, .right, .right])
        grid.add(["interface", "rx", "tx"])
        for name in names {
            let rate = rates.interfaces.first { $0.name == name }?.rate
            grid.add([name, rate.map { units.rate($0.rxBytesPerSecond) } ?? "—",
                      rate.map { units.rate($0.txBytesPerSecond) } ?? "—"])
        }
        return grid.render()
    }

    static func run(_ session: Session, _ chosen: Subjects, count: Int?, _ context: CommandContext) throws(CLIError) {
        let output = context.output
        let subjects = try session.subjects(chosen)
        let names = subjects.map(\.name)
        let startTotals = Dictionary(subjects.map { ($0.name, ($0.rxBytes, $0.txBytes)) }) { first, _ in first }
        let signals = try SignalDescriptor([SIGINT, SIGTERM])
        let watcher = try DaemonClient(path: session.client.path)
        var stream = try WatchStream(watcher)
        let terminal = isatty(STDOUT_FILENO) == 1 && !context.json
        var drawn = 0
        var updates = 0
        var peaks: [String: (Double, Double)] = [:]
        var recentEvents: [String] = []
        var monotonic = timespec()
        clock_gettime(CLOCK_MONOTONIC, &monotonic)
        let started = Double(monotonic.tv_sec) + Double(monotonic.tv_nsec) / 1e9
        if terminal { output.write("ifmeter live: rates after each sample (every \(session.status.interval) s); Ctrl-C to stop\n") }
        loop: while true {
            switch try stream.next(signals) {
            case .signal, .timeout: break loop
            case .closed:
                output.write("ifmeterd closed the stream (stopped or restarted)\n")
                break loop
            case .message(let response):
                if response.stream == "event", let event = try? response.result(as: CounterEvent.self),
                   event.interface.map(names.contains) ?? true {
                    let text = "\(session.time.second(event.at))  \(event.interface ?? "—")  \(event.kind.rawValue): \(EventsView.meaning(event.kind))"
                    if context.json {
                        output.raw(response.line)
                    } else if terminal {
                        recentEvents = Array((recentEvents + [text]).suffix(5))
                    } else {
                        output.write("event " + text + "\n")
                    }
                    output.flush()
                } else if response.stream == "rates" {
                    var rates = try DaemonClient.result(of: response, as: RatesResult.self)
                    rates.interfaces = rates.interfaces.filter { names.contains($0.name) }
                    for entry in rates.interfaces {
                        let peak = peaks[entry.name] ?? (0, 0)
                        peaks[entry.name] = (max(peak.0, entry.rate.rxBytesPerSecond), max(peak.1, entry.rate.txBytesPerSecond))
                    }
                    updates += 1
                    if context.json {
                        output.json(rates)
                    } else if terminal {
                        let screen = "\(session.time.second(rates.at))\n" + table(rates, names: names, units: context.units)
                            + recentEvents.map { "  event \($0)\n" }.joined()
                        // Up to the first line drawn last time, clear to the end, draw again.
                        if drawn > 0 { output.control("\u{1B}[\(drawn)F\u{1B}[J") }
                        output.write(screen)
                        drawn = screen.split(separator: "\n", omittingEmptySubsequences: false).count - 1
                    } else {
                        // Every interface asked for, "—" until it has a measured interval, as on a terminal.
                        output.write(names.map { name in
                            let rate = rates.interfaces.first { $0.name == name }?.rate
                            return "\(session.time.second(rates.at))  \(name)  rx \(rate.map { context.units.rate($0.rxBytesPerSecond) } ?? "—")"
                                + "  tx \(rate.map { context.units.rate($0.txBytesPerSecond) } ?? "—")\n"
                        }.joined())
                    }
                    output.flush()
                    if let count = count, updates > count { break loop }
                }
            }
        }
        clock_gettime(CLOCK_MONOTONIC, &monotonic)
        let seconds = Double(monotonic.tv_sec) + Double(monotonic.tv_nsec) / 1e9 - started
        let endTotals = (try? session.interfaces().interfaces) ?? []
        let summary = LiveSession(seconds: seconds, updates: updates, interfaces: names.map { name in
            let end = endTotals.first { $0.name == name }
            let start = startTotals[name] ?? (0, 0)
            let peak = peaks[name] ?? (0, 0)
            return LiveSession.Entry(
                name: name, rxBytes: (end?.rxBytes ?? start.0) &- start.0, txBytes: (end?.txBytes ?? start.1) &- start.1,
                peakRxBytesPerSecond: peak.0, peakTxBytesPerSecond: peak.1)
        })
        if context.json {
            output.json(LiveSession.Line(session: summary))
        } else {
            output.write(render(summary, units: context.units))
        }
    }

    static func render(_ summary: LiveSession, units: Units) -> String {
        let text = "\nsession: \(fixed(summary.seconds, decimals: 1)) s, \(summary.updates) updates\n"
        var grid = Table([.left, .right, .right, .right, .right, .right, .right], indent: "  ")
        grid.add(["", "rx", "tx", "avg rx", "avg tx", "peak rx", "peak tx"])
        let seconds = max(summary.seconds, 1e-3)
        for entry in summary.interfaces {
            grid.add([entry.name, units.bytes(entry.rxBytes), units.bytes(entry.txBytes),
                      units.rate(Double(entry.rxBytes) / seconds), units.rate(Double(entry.txBytes) / seconds),
                      units.rate(entry.peakRxBytesPerSecond), units.rate(entry.peakTxBytesPerSecond)])
        }
        return text + grid.render() + EstimateLabel.footnote + "\n"
    }
}

/// `rate`.
struct RateCommand: Subcommand {
    static let name = "rate"
    static let aliases = ["-tr", "--traffic"]
    static let summary = "rates over the last sampling interval"
    static let usage = "ifmeter rate [-i NAME | --class CLASS]"
    static let about = "Rates measured over the daemon's last sampling interval, once."
    static let options = OptionSpec.subjects

    var subjects: Subjects

    init(_ parsed: ParsedArguments) throws(CLIError) { subjects = try Subjects(parsed) }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        try LiveView.rate(try Session(socketCandidates: context.socketCandidates), subjects, context)
        return 0
    }
}

/// `live`.
struct LiveCommand: Subcommand {
    static let name = "live"
    static let aliases = ["-l", "--live"]
    static let summary = "rates updating after each sample until Ctrl-C, then a session summary"
    static let usage = "ifmeter live [-i NAME | --class CLASS] [--count N]"
    static let about = """
        Rates pushed by the daemon after each sample (its `watch` stream), redrawn in place
        on a terminal, a line per interface and update otherwise. Ctrl-C ends it with a
        summary of the session: bytes, average and peak rates per interface.
        """
    static let count = OptionSpec(names: ["--count"], value: "N", help: "stop after N updates")
    static let options = OptionSpec.subjects + [count]

    var subjects: Subjects
    var count: Int?

    init(_ parsed: ParsedArguments) throws(CLIError) {
        subjects = try Subjects(parsed)
        if let text = parsed.value(Self.count) {
            guard let number = Int(text), number > 0 else { throw .usage("--count: expected a positive number, got \"\(text)\"") }
            count = number
        }
    }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        try LiveView.run(try Session(socketCandidates: context.socketCandidates), subjects, count: count, context)
        return 0
    }
}
