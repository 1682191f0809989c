import IfMeterPresentation
import IfMeterCore
import IfMeterJSON
import IfMeterWire

/// `split`: the view of the scopes' section (``SubjectSection/scopes``, docs/SCOPES.md) —
/// every interface, network and application with its local, internet and unknown traffic today
/// and this month.
enum SplitView {
    struct Entry {
        /// The interface's, network's or application's subject (`eth0`, `network:UUID`).
        var subject: String
        /// Its kind's noun (`interface`, `network`, `application`).
        var kind: String
        var today: SplitRow?
        var thisMonth: SplitRow?
    }

    struct Result: JSONWritable {
        var entries: [Entry]
        var footnote: String

        func write(to w: inout JSONWriter) {
            w.beginObject()
            w.key("footnote"); w.string(footnote)
            // Its section's view names the list (``SubjectSection/view``).
            w.key(text: SubjectSection.scopes.view)
            w.beginArray()
            for entry in entries { entry.write(to: &w) }
            w.endArray()
            w.endObject()
        }
    }

    /// The day and month tables of every scope subject, in one round trip.
    static func request(now: Double) -> QueryRequest {
        var request = QueryRequest()
        request.select = QuerySelection.scopes.rawValue
        request.usage = [UsageSpec(.day, from: TimeArgument(seconds: now - 2 * 86400), projection: true),
                         UsageSpec(.month, from: TimeArgument(seconds: now - 40 * 86400), projection: true)]
        return request
    }

    static func fetch(_ socketCandidates: [String]) throws(CLIError) -> (Session, Result) {
        let (session, answer) = try Session.query(socketCandidates: socketCandidates, request(now: Session.wallClock()))
        return (session, try result(answer))
    }

    /// The answer's scope subjects as one entry per subject, in the order answered.
    static func result(_ answer: QueryResult) throws(CLIError) -> Result {
        let split = try ScopeSplit.tables(answer, tables: 2)
        let (today, thisMonth) = (answer.usage.first?.projection?.start, answer.usage.dropFirst().first?.projection?.start)
        let entries = split.subjects.map { subject in
            Entry(subject: subject, kind: SubjectKinds.kind(of: subject)?.kind.noun ?? "subject",
                  today: today.flatMap { split.row(of: [subject], table: 0, start: $0) },
                  thisMonth: thisMonth.flatMap { split.row(of: [subject], table: 1, start: $0) })
        }
        return Result(entries: entries, footnote: EstimateLabel.footnote)
    }

    static func render(_ result: Result, units: Units) -> String {
        guard !result.entries.isEmpty else {
            return "No traffic scopes counted yet: ifmeterd counts them where its scope programs run (docs/SCOPES.md).\n"
        }
        var text = ""
        for section in [SubjectSection.interfaces, .networks, .apps] {
            let entries = result.entries.filter { SubjectKinds.kind(of: $0.subject)?.kind.section == section }
            guard !entries.isEmpty else { continue }
            text += (section == .interfaces ? "Interfaces" : section.heading) + "\n"
            var table = Table([.left] + Array(repeating: .right, count: 6), indent: "  ")
            table.add(["", "today local", "internet", "unknown", "this month local", "internet", "unknown"])
            for entry in entries {
                table.add([AppsView.shown(entry.subject)] + cells(entry.today, units) + cells(entry.thisMonth, units))
            }
            text += table.render() + "\n"
        }
        return text + SplitNotes(unknown: true).legend + result.footnote + "\n"
    }

    /// A period's local, internet and unknown bytes; nothing counted in it is 0 B each.
    private static func cells(_ row: SplitRow?, _ units: Units) -> [String] {
        let row = row ?? SplitRow()
        return [TrafficScope.local, .internet, .unknown].map { units.bytes(row.bytes($0)) }
    }
}

extension SplitView.Entry: JSONWritable {
    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("kind"); w.string(kind)
        w.key("subject"); w.string(subject)
        if let thisMonth { w.key("this_month"); SplitRow.write(thisMonth, start: nil, to: &w) }
        if let today { w.key("today"); SplitRow.write(today, start: nil, to: &w) }
        w.endObject()
    }
}

/// `split`.
struct SplitCommand: Subcommand {
    static let name = "split"
    static let summary = "local and internet traffic of every interface, network and application"
    static let usage = "ifmeter split [--json]"
    static let about = """
        Every interface, network and application with its local, internet and unknown traffic
        today and this month (docs/SCOPES.md). Local is traffic whose far end is on a network
        this host is attached to (or in local_prefixes); internet is the rest; unknown is what
        was counted where no scope program ran, or before it did. Every period view takes
        --split for the same columns beside its totals.
        """
    static let options: [OptionSpec] = []

    init(_ parsed: ParsedArguments) throws(CLIError) {}

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let (_, result) = try SplitView.fetch(context.socketCandidates)
        context.write(result) { SplitView.render($0, units: context.units) }
        return 0
    }
}
