import IfMeterPresentation
import IfMeterCore
import IfMeterJSON
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// `apps --now`: the busiest services and applications now, as nethogs shows them, from the figures
/// ifmeterd counts by cgroup (docs/APPS.md): each frame asks for a sample, reads every
/// application's all-time figures, and divides what each moved by the time between the two
/// samples. Redrawn in place on a terminal, a JSON line per frame with `--json`.
enum AppsLiveView {
    struct Entry: JSONWritable {
        var name: String
        var kind: String
        var rxBytes: UInt64
        var txBytes: UInt64
        var rxBytesPerSecond: Double
        var txBytesPerSecond: Double

        func write(to w: inout JSONWriter) {
            w.beginObject()
            w.key("kind"); w.string(kind)
            w.key("name"); w.string(name)
            w.key("rx_bytes"); w.number(rxBytes)
            w.key("rx_bytes_per_second"); w.number(rxBytesPerSecond)
            w.key("tx_bytes"); w.number(txBytes)
            w.key("tx_bytes_per_second"); w.number(txBytesPerSecond)
            w.endObject()
        }
    }

    /// One frame: what moved between two samples, busiest first.
    struct Frame: JSONWritable {
        var at: Double
        var seconds: Double
        var apps: [Entry]

        func write(to w: inout JSONWriter) {
            w.beginObject()
            w.key("apps")
            w.beginArray()
            for entry in apps { entry.write(to: &w) }
            w.endArray()
            w.key("at"); w.number(at)
            w.key("seconds"); w.number(seconds)
            w.endObject()
        }
    }

    /// Every application's all-time figures after a fresh sample, and when it was taken.
    static func read(_ socketCandidates: [String]) throws(CLIError) -> (Session, at: Double, [String: (kind: String, traffic: Traffic)]) {
        var request = QueryRequest()
        request.select = QuerySelection.apps.rawValue
        request.usage = [UsageSpec(.total)]
        request.include = [QueryPart.interfaces.rawValue]
        let (session, answer) = try Session.query(socketCandidates: socketCandidates, request)
        let kinds = Dictionary((answer.interfaces ?? []).map { ($0.name, $0.kind) }) { first, _ in first }
        var totals: [String: (kind: String, traffic: Traffic)] = [:]
        for (subject, table) in zip(answer.subjects, answer.usage) {
            guard let name = subject.name, let row = table.rows.first else { continue }
            totals[name] = (kinds[name] ?? "application",
                            Traffic(rxBytes: row.rxBytes, txBytes: row.txBytes, rxPackets: 0, txPackets: 0))
        }
        return (session, session.status.lastSampleAt ?? Session.wallClock(), totals)
    }

    /// What moved from `before` to `after` in `seconds`, busiest first, at most `rows`.
    static func frame(from before: [String: (kind: String, traffic: Traffic)], to after: [String: (kind: String, traffic: Traffic)],
                      seconds: Double, at: Double, rows: Int) -> Frame {
        let entries = after.compactMap { name, now -> Entry? in
            let then = before[name]?.traffic ?? .zero
            // A subject forgotten and counted again starts over: what it has now moved.
            let moved = now.traffic.isAtLeast(then) ? now.traffic.combined(with: then, -) : now.traffic
            guard !moved.isZero else { return nil }
            return Entry(name: name, kind: now.kind, rxBytes: moved.rxBytes, txBytes: moved.txBytes,
                         rxBytesPerSecond: Double(moved.rxBytes) / seconds, txBytesPerSecond: Double(moved.txBytes) / seconds)
        }
        let sorted = entries.sorted { ($0.rxBytes &+ $0.txBytes, $1.name) > ($1.rxBytes &+ $1.txBytes, $0.name) }
        return Frame(at: at, seconds: seconds, apps: Array(sorted.prefix(rows)))
    }

    static func render(_ frame: Frame, _ session: Session, units: Units) -> String {
        var table = Table([.left, .left, .right, .right, .right, .right])
        table.add(["application", "kind", "rx", "tx", "rx bytes", "tx bytes"])
        for entry in frame.apps {
            table.add([entry.name, entry.kind, units.rate(entry.rxBytesPerSecond), units.rate(entry.txBytesPerSecond),
                       units.bytes(entry.rxBytes), units.bytes(entry.txBytes)])
        }
        let title = "\(session.time.second(frame.at))  over \(fixed(frame.seconds, decimals: 1)) s\n"
        return title + (frame.apps.isEmpty ? "no application sent or received anything\n" : table.render())
    }

    static func run(_ context: CommandContext, count: Int?, interval: Int32, rows: Int) throws(CLIError) {
        let output = context.output
        let signals = try SignalDescriptor([SIGINT, SIGTERM])
        let terminal = isatty(STDOUT_FILENO) == 1 && !context.json
        var (session, at, totals) = try sampled(context.socketCandidates)
        if let health = session.status.apps, !health.counting {
            throw CLIError(.failure, "applications are not counted: \(health.detail) (docs/APPS.md: ifmeterd --attach-apps, as root)")
        }
        var frames = 0
        var drawn = 0
        while count.map({ frames < $0 }) ?? true {
            if try signals.wait(alongside: -1, timeoutMilliseconds: interval * 1000) == .signal { break }
            let (next, nextAt, nextTotals) = try sampled(context.socketCandidates)
            guard nextAt > at else { continue }
            let frame = frame(from: totals, to: nextTotals, seconds: nextAt - at, at: nextAt, rows: rows)
            (session, at, totals) = (next, nextAt, nextTotals)
            frames += 1
            if context.json {
                output.json(frame)
            } else {
                let screen = render(frame, session, units: context.units)
                if terminal, drawn > 0 { output.control("\u{1B}[\(drawn)F\u{1B}[J") }
                output.write(screen + (terminal ? "" : "\n"))
                drawn = screen.split(separator: "\n", omittingEmptySubsequences: false).count - 1
            }
            output.flush()
        }
        if !context.json { output.write(EstimateLabel.appsFootnote + "\n") }
    }

    /// A sample asked for (for another user than root, at most one a second is taken), then
    /// the figures it left.
    private static func sampled(_ candidates: [String]) throws(CLIError) -> (Session, Double, [String: (kind: String, traffic: Traffic)]) {
        let session = try Session(socketCandidates: candidates)
        _ = try session.client.call(SampleRequest(), reading: SampleResult.self)
        return try read(candidates)
    }
}
