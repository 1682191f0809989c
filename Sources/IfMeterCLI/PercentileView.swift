import IfMeterPresentation
import IfMeterCore
import IfMeterWire

/// `95th`: the 95th percentile of 5-minute rates per subject, as burstable billing takes it,
/// computed by the daemon (``BurstablePercentile``): rx, tx, rx + tx, and the larger of rx and
/// tx, which transit bills, with the slots it rests on.
enum PercentileView {
    static func fetch(_ context: CommandContext, _ command: PercentileCommand) throws(CLIError) -> (Session, PercentileResult) {
        let session = try Session(socketCandidates: context.socketCandidates)
        var request = Self.request(for: command.subjects)
        if command.from != nil || command.to != nil {
            guard let from = try session.timeArgument(command.from, option: "--from") else {
                throw .usage("95th: --to needs --from (the range is [from, to))")
            }
            (request.from, request.to) = (from, try session.timeArgument(command.to, option: "--to"))
        } else {
            request.period = command.period.rawValue
        }
        return (session, try session.client.call(request, reading: PercentileResult.self))
    }

    /// The subjects of a `percentile` request: the names given (`-i a+b` summed slot by slot as
    /// one subject, never each member on its own), a class summed, or the views' default choice.
    static func request(for subjects: Subjects) -> PercentileRequest {
        var request = PercentileRequest()
        if !subjects.interfaces.isEmpty {
            request.interfaces = subjects.interfaces
            request.sum = subjects.merged ? true : nil
        } else if let interfaceClass = subjects.interfaceClass {
            (request.class, request.sum) = (interfaceClass, true)
        } else {
            request.select = (subjects.all ? QuerySelection.all : .shown).rawValue
        }
        return request
    }

    /// Rates as transit sells them: SI bits per second.
    static let rates = Units(base: .si, bits: true)

    static func rate(_ bytes: UInt64) -> String { rates.rate(Double(bytes) / Double(BurstablePercentile.slotSeconds)) }

    static func render(_ result: PercentileResult, _ session: Session) -> String {
        guard let first = result.subjects.first else { return "No interface to show.\n" + result.footnote + "\n" }
        var table = Table([.left, .right, .right, .right, .right, .right, .right, .left])
        table.add(["", "rx", "tx", "rx + tx", "max (billed)", "slots", "with traffic", ""])
        var marks = Marks()
        var notes: [String] = []
        for entry in result.subjects {
            let f = entry.figure
            let name = entry.name ?? "class \(entry.class)"
            let share = ValueGrammar.percentText(f.coverage)
            guard f.slots > 0 else {
                table.add([name, "—", "—", "—", "—", "0", "—", marks.mark(entry.continuity)])
                continue
            }
            table.add([name, rate(f.rxBytes), rate(f.txBytes), rate(f.totalBytes),
                       rate(f.maxBytes) + " " + (f.maxIsTx ? "tx" : "rx"), String(f.slots),
                       "\(f.slotsWithTraffic) (\(share))", marks.mark(entry.continuity)])
            if entry.outlivedRetention, let kept = entry.retainedFrom, notes.isEmpty {
                notes.append("5-minute buckets before \(session.time.minute(Double(kept))) are no longer kept (retention_5min): "
                    + "those slots count as zero. Set retention_5min = 35d in ifmeterd.conf to keep a month (docs/CONFIG.md)")
            }
        }
        let what = switch first.period {
        case "month": "this month"
        case "last-month": "last month"
        case "day": "today"
        default: "the range"
        }
        let span = "\(session.time.minute(Double(first.start))) – \(session.time.minute(Double(first.end)))"
        let heading = "95th percentile of 5-minute rates, \(what) (\(span), slots that ended so far; "
            + "rank ⌈0.95 × slots⌉, every slot counted):\n\n"
        let perSubject = result.subjects.contains { $0.start != first.start || $0.end != first.end }
            ? "Periods differ by billing day (month_start_day); --json gives each one's.\n" : ""
        return heading + table.render() + "\n" + perSubject
            + "A slot without traffic, or when ifmeterd was not running, counts as zero, as in burstable billing; "
            + "\"with traffic\" is the share of slots that carried some (coverage).\n"
            + (notes.isEmpty ? "" : notes.joined(separator: "\n") + "\n") + marks.footer(result.footnote)
    }
}

/// `95th` (vnStat's `--95th`).
struct PercentileCommand: Subcommand {
    static let name = "95th"
    static let aliases = ["--95th"]
    static let summary = "95th percentile of 5-minute rates (burstable billing)"
    static let usage = "ifmeter 95th [-i NAME] [--class CLASS] [--month | --period P | --from TIME [--to TIME]]"
    static let about = """
        The 95th percentile of 5-minute rates, computed by ifmeterd, per interface (or class,
        summed): rx, tx, rx + tx per slot, and the larger of the rx and tx percentiles, which
        transit bills. Every 5-minute slot of the period that has ended counts, a slot without
        traffic (or when ifmeterd was not running) as zero; the value is the one at rank
        ⌈0.95 × slots⌉, smallest first. "With traffic" is the share of slots that carried some.
        Rates in SI bit/s, as transit sells them. A month needs retention_5min = 35d in
        ifmeterd.conf (the default keeps 48 hours; docs/CONFIG.md).
        """
    static let month = OptionSpec(names: ["--month"], help: "this month, from each interface's billing day (the default)")
    static let period = OptionSpec(
        names: ["--period"], value: "P",
        help: "day or month (default month; months start on the daemon's\nmonth_start_day), or last-month for 95th",
        completion: .words(["day", "month", "last-month"]))
    static let options = OptionSpec.subjects + [month, period, OptionSpec.from, OptionSpec.to]

    var subjects: Subjects
    var period: PercentileRequest.Period
    var from: String?
    var to: String?

    init(_ parsed: ParsedArguments) throws(CLIError) {
        subjects = try Subjects(parsed)
        (from, to) = (parsed.value(OptionSpec.from), parsed.value(OptionSpec.to))
        let name = parsed.value(Self.period)
        if parsed.isSet(Self.month), let name, name != "month" {
            throw .usage("95th: give --month or --period \(name), not both")
        }
        if (name != nil || parsed.isSet(Self.month)) && (from != nil || to != nil) {
            throw .usage("95th: give a period or --from/--to, not both")
        }
        guard let period = PercentileRequest.Period(rawValue: name ?? "month") else {
            throw .usage("95th: --period is month, last-month or day, got \"\(name ?? "")\"")
        }
        self.period = period
    }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let (session, result) = try PercentileView.fetch(context, self)
        context.write(result) { PercentileView.render($0, session) }
        return 0
    }
}
