import IfMeterPresentation
import IfMeterCore
import IfMeterJSON
import IfMeterWire

/// The default view: per interface today, yesterday, this month, last month, all time and the
/// month-end projection, like `vnstat` with no arguments.
struct InterfaceSummary {
    var name: String
    var `class`: String
    var today: UsageRowResult?
    var yesterday: UsageRowResult?
    var thisMonth: UsageRowResult?
    var lastMonth: UsageRowResult?
    var allTime: UsageRowResult?
    var monthProjection: ProjectionResult?
    /// Where today began in the daemon's calendar (the end of yesterday).
    var dayStart: Double?
    /// Its alias, if it has one (a merge's: its members' joined by `+`).
    var alias: String? = nil
    /// With `--split`: today's, yesterday's, both months' and all time's splits (nil: not split).
    var split: [SplitRow?]? = nil

    /// Its rows in the order the view lists them, the split's order.
    var rows: [UsageRowResult?] { [today, yesterday, thisMonth, lastMonth, allTime] }
}

extension InterfaceSummary {
    /// The subject's rows from its three tables (``SummaryView/request(_:)``).
    init(_ subject: QuerySubject, _ days: UsageResult, _ months: UsageResult, _ total: UsageResult) {
        let today = days.projection?.start
        let thisMonth = months.projection?.start
        self.init(name: subject.name ?? "", class: subject.class,
                  today: days.rows.first { $0.start == today },
                  yesterday: days.rows.first { $0.end == today },
                  thisMonth: months.rows.first { $0.start == thisMonth },
                  lastMonth: months.rows.first { $0.end == thisMonth },
                  allTime: total.rows.first,
                  monthProjection: months.projection, dayStart: today, alias: subject.alias)
    }

    /// Whether anything was counted on it yet.
    var hasTraffic: Bool { (allTime.map { $0.rxBytes &+ $0.txBytes } ?? 0) > 0 }
}

struct SummaryResult: JSONWritable {
    var interfaces: [InterfaceSummary]
    var footnote: String
    /// The data plans (docs/PLANS.md); each interface's summary shows those it is in.
    var plans: [PlanResult] = []

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("footnote"); w.string(footnote)
        w.key("interfaces")
        w.beginArray()
        for summary in interfaces { summary.write(to: &w) }
        w.endArray()
        if !plans.isEmpty {
            w.key("plans")
            w.beginArray()
            for plan in plans { plan.write(to: &w) }
            w.endArray()
        }
        w.endObject()
    }
}

extension InterfaceSummary: JSONWritable {
    func write(to w: inout JSONWriter) {
        w.beginObject()
        if let alias { w.key("alias"); w.string(alias) }
        if let allTime { w.key("all_time"); allTime.write(to: &w) }
        w.key("class"); w.string(self.class)
        if let dayStart { w.key("day_start"); w.number(dayStart) }
        if let lastMonth { w.key("last_month"); lastMonth.write(to: &w) }
        if let monthProjection { w.key("month_projection"); monthProjection.write(to: &w) }
        w.key("name"); w.string(name)
        if let split {
            w.key("split")
            w.beginObject()
            // Keys sorted, as everywhere: split is in the order of ``rows``.
            for (key, row) in zip(["all_time", "last_month", "this_month", "today", "yesterday"], [split[4], split[3], split[2], split[0], split[1]]) {
                w.key(text: key)
                SplitRow.write(row, start: nil, to: &w)
            }
            w.endObject()
        }
        if let thisMonth { w.key("this_month"); thisMonth.write(to: &w) }
        if let today { w.key("today"); today.write(to: &w) }
        if let yesterday { w.key("yesterday"); yesterday.write(to: &w) }
        w.endObject()
    }
}

enum SummaryView {
    /// Today and yesterday, both months and all time, with the month's projection: at most two
    /// rows each (the current period and the one before), so that the daemon sends the answer
    /// while it reads the rest of it (docs/PROTOCOL.md).
    static func request(_ subjects: Subjects) -> QueryRequest {
        let now = Session.wallClock()
        return .query(for: subjects, usage: [
            UsageSpec(.day, from: TimeArgument(seconds: now - 3 * 86400), projection: true, last: 2),
            UsageSpec(.month, from: TimeArgument(seconds: now - 70 * 86400), projection: true, last: 2),
            UsageSpec(.total),
        ], include: [.plans])
    }

    /// Today, yesterday, both months and all time of every subject, in one round trip; with
    /// `split`, their scope subjects' in one more.
    static func fetch(_ socketCandidates: [String], _ subjects: Subjects, split: Bool = false) throws(CLIError) -> (Session, SummaryResult) {
        let asked = request(subjects)
        let (session, answer) = try Session.query(socketCandidates: socketCandidates, asked)
        guard answer.usage.count == 3 * answer.subjects.count else {
            throw CLIError(.protocolMismatch, "ifmeterd answered \(answer.usage.count) tables for \(answer.subjects.count) interfaces, not 3 each")
        }
        var summaries: [InterfaceSummary] = []
        summaries.reserveCapacity(answer.subjects.count)
        let members = answer.subjects.map { ScopeSplit.members(of: $0, classMembers: [:]) }
        let scopes = split ? try ScopeSplit.fetch(session, of: members.flatMap { $0 }, usage: asked.usage ?? []) : nil
        for (index, subject) in answer.subjects.enumerated() {
            var summary = InterfaceSummary(subject, answer.usage[3 * index], answer.usage[3 * index + 1], answer.usage[3 * index + 2])
            if let scopes {
                // Each row's table: today and yesterday the days', the months the months', then all time.
                summary.split = zip([0, 0, 1, 1, 2], summary.rows).map { table, row in
                    row.flatMap { scopes.row(of: members[index], table: table, start: table == 2 ? nil : $0.start) }
                }
            }
            summaries.append(summary)
        }
        return (session, SummaryResult(interfaces: summaries, footnote: EstimateLabel.footnote, plans: answer.plans ?? []))
    }

    /// Before the daemon's first sample after its start dump nothing is counted yet: say when
    /// the first figures come instead of showing every interface at 0 B.
    static func waitingNote(_ result: SummaryResult, _ session: Session) -> String? {
        waitingNote(result.interfaces, session)
    }

    static func waitingNote(_ interfaces: [InterfaceSummary], _ session: Session) -> String? {
        let status = session.status
        guard justStarted(session), let sampled = status.lastSampleAt, !interfaces.contains(where: \.hasTraffic) else { return nil }
        let next = max(sampled + Double(status.interval), session.now)
        let watched = interfaces.map { "\($0.name) (\($0.class))" }.joined(separator: ", ")
        return "ifmeterd began counting at \(session.time.second(sampled)) and has no figures yet: the first come with its "
            + "next sample, at about \(session.time.second(next)) (it samples every \(status.interval) s).\n"
            + (watched.isEmpty ? "" : "Watching: \(watched).\n")
    }

    /// Whether the daemon's last sample is its first since it started (within half an interval
    /// of the start): what it shows may be nothing yet.
    static func justStarted(_ session: Session) -> Bool {
        let status = session.status
        guard let sampled = status.lastSampleAt else { return false }
        return sampled - status.startedAt < Double(status.interval) / 2
    }

    static func render(_ result: SummaryResult, _ session: Session, units: Units) -> String {
        if let note = waitingNote(result, session) { return note }
        var renderer = SummaryRenderer(session: session, units: units, plans: result.plans)
        // Bytes, not String appends: thousands of interfaces are tens of thousands of lines.
        var text: [UInt8] = []
        text.reserveCapacity(512 * result.interfaces.count)
        renderer.append(result.interfaces, to: &text)
        text += renderer.footer(empty: result.interfaces.isEmpty).utf8
        return String(decoding: text, as: UTF8.self)
    }

    /// One line per interface, `;`-separated like `vnstat --oneline`: name; class; today rx; tx;
    /// total; this month rx; tx; total; month-end projection total; all time rx; tx; total; marks.
    static func oneline(_ result: SummaryResult, units: Units) -> String {
        var marks = Marks()
        return result.interfaces.map { summary in
            func figures(_ row: UsageRowResult?) -> [String] {
                guard let row else { return ["", "", ""] }
                return [units.bytes(row.rxBytes), units.bytes(row.txBytes), units.bytes(row.rxBytes &+ row.txBytes)]
            }
            let projected = summary.monthProjection.map { units.bytes($0.rxBytes &+ $0.txBytes) } ?? ""
            let flagged = [summary.today, summary.thisMonth, summary.allTime].compactMap { $0 }
                .map { marks.mark($0.continuity) }.joined()
            let fields = [summary.name, summary.class] + figures(summary.today) + figures(summary.thisMonth)
                + [projected] + figures(summary.allTime) + [String(Set(flagged).sorted())]
            return fields.joined(separator: ";") + "\n"
        }.joined()
    }
}

/// `summary` (the default): every subject's today, yesterday, months, all time and projection.
struct SummaryCommand: Subcommand {
    static let name = "summary"
    static let aliases = ["-q", "--query", "-s", "--short"]
    static let summary = "today, yesterday, this and last month, all time, month-end projection (default)"
    static let usage = "ifmeter [summary] [-i NAME | --class CLASS] [--oneline] [--split]"
    static let about = """
        Per interface (all but loopback by default): today, yesterday, this month, last month,
        all time, and where this month ends at its pace so far (a projection).
        Marks: * a counter reset, ! a gap, ~ an implausible jump left out, in that period.
        """
    static let oneline = OptionSpec(
        names: ["--oneline"],
        help: "one ;-separated line per interface: name;class;today rx;tx;total;\nmonth rx;tx;total;month-end projection;all time rx;tx;total;marks")
    static let options = OptionSpec.subjects + [oneline, .split]

    var subjects: Subjects
    var oneline: Bool
    var split: Bool

    init(_ parsed: ParsedArguments) throws(CLIError) {
        subjects = try Subjects(parsed)
        oneline = parsed.isSet(Self.oneline)
        split = parsed.isSet(.split)
        if split && oneline { throw .usage("--split and --oneline: the one-line form has no room for the split; give one") }
    }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        guard context.json || oneline || split else {
            try SummaryView.show(context.socketCandidates, subjects, units: context.units, output: context.output)
            return 0
        }
        let (session, result) = try SummaryView.fetch(context.socketCandidates, subjects, split: split)
        context.write(result) { result in
            oneline ? SummaryView.oneline(result, units: context.units) : SummaryView.render(result, session, units: context.units)
        }
        return 0
    }
}
