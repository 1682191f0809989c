import IfMeterPresentation
import IfMeterCore
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// Which history table a view asks for: the resolution, the subjects and the rows.
struct PeriodTable: Sendable {
    var period: UsagePeriod
    var subjects: Subjects
    var from: String?
    var to: String?
    var limit: Int
    /// The busiest periods, busiest first, instead of the newest.
    var top = false
    /// `--split`: each row's local, internet and unknown traffic beside it (docs/SCOPES.md).
    var split = false

    init(_ parsed: ParsedArguments, period: UsagePeriod, top: Bool = false) throws(CLIError) {
        self.period = period
        self.top = top
        split = parsed.isSet(.split)
        subjects = try Subjects(parsed)
        from = parsed.value(.from)
        to = parsed.value(.to)
        limit = try RowLimit.parse(parsed, default: PeriodView.defaultLimit(period, top: top))
    }
}

/// `5min`, `hours`, `days`, `months` and `years`: one table per subject, one row per period.
protocol PeriodTableCommand: Subcommand {
    static var period: UsagePeriod { get }
    var table: PeriodTable { get }
    init(table: PeriodTable)
}

extension PeriodTableCommand {
    static var summary: String { "\(period == .fiveMinutes ? "5-minute period" : period.rawValue)s" + (period == .hour ? ", with a bar graph" : "") }
    static var usage: String { "ifmeter \(name) [-i NAME | --class CLASS] [--from TIME] [--to TIME] [--limit N] [--split]" }
    static var about: String {
        """
        Traffic per \(period.rawValue) with its average rate\(period == .hour ? " and a bar graph (r = rx, t = tx)" : "").
        One table per interface, or one for the sum of a class.
        """
    }
    static var options: [OptionSpec] { OptionSpec.subjects + OptionSpec.range + [.split] }

    init(_ parsed: ParsedArguments) throws(CLIError) { self.init(table: try PeriodTable(parsed, period: Self.period)) }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let (session, tables) = try PeriodView.fetch(context.socketCandidates, table)
        context.write(tables) { PeriodView.render($0, session, units: context.units, graph: Self.period == .hour) }
        return 0
    }
}

struct FiveMinutesCommand: PeriodTableCommand {
    static let name = "5min"
    static let aliases = ["-5", "--fiveminutes"]
    static let period = UsagePeriod.fiveMinutes
    var table: PeriodTable
}

struct HoursCommand: PeriodTableCommand {
    static let name = "hours"
    static let aliases = ["-h", "--hours", "-hg", "--hoursgraph"]
    static let period = UsagePeriod.hour
    var table: PeriodTable
}

struct DaysCommand: PeriodTableCommand {
    static let name = "days"
    static let aliases = ["-d", "--days"]
    static let period = UsagePeriod.day
    var table: PeriodTable
}

struct MonthsCommand: PeriodTableCommand {
    static let name = "months"
    static let aliases = ["-m", "--months"]
    static let period = UsagePeriod.month
    var table: PeriodTable
}

struct YearsCommand: PeriodTableCommand {
    static let name = "years"
    static let aliases = ["-y", "--years"]
    static let period = UsagePeriod.year
    var table: PeriodTable
}

/// `top`: the busiest days.
struct TopCommand: Subcommand {
    static let name = "top"
    static let aliases = ["-t", "--top"]
    static let summary = "the busiest days"
    static let usage = "ifmeter top [-i NAME | --class CLASS] [--limit N] [--split]"
    static let about = "The busiest days (rx + tx), busiest first; 10 unless --limit says otherwise."
    static let options = OptionSpec.subjects + [OptionSpec.rows, .split]

    var table: PeriodTable

    init(_ parsed: ParsedArguments) throws(CLIError) { table = try PeriodTable(parsed, period: .day, top: true) }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let (session, tables) = try PeriodView.fetch(context.socketCandidates, table)
        context.write(tables) { PeriodView.render($0, session, units: context.units, top: true) }
        return 0
    }
}

/// `chart hours|days|months`: the first subject's table as an SVG chart.
struct ChartCommand: Subcommand {
    static let name = "chart"
    static let summary = "SVG bar chart: chart hours|days|months [-o FILE]"
    static let usage = """
        ifmeter chart hours|days|months [-i NAME | --class CLASS] [--from TIME] [--to TIME]
                             [--limit N] [-o FILE]
        """
    static let about = """
        An SVG bar chart, rx and tx stacked, for one interface or class (the first one
        given, else the first interface known), to FILE or standard output.
        """
    static let output = OptionSpec(
        names: ["-o", "--output"], value: "FILE", help: "write the SVG here instead of standard output", completion: .files)
    static let options = OptionSpec.subjects + OptionSpec.range + [output]
    static let arguments = [ArgumentSpec(name: "CHART", choices: ["hours", "days", "months"])]

    var table: PeriodTable
    var path: String?

    init(_ parsed: ParsedArguments) throws(CLIError) {
        let period: UsagePeriod = switch parsed.arguments.first {
        case "hours": .hour
        case "months": .month
        default: .day
        }
        var table = try PeriodTable(parsed, period: period)
        // A merge (`-i a+b`) is one subject: cutting it to its first member would draw that alone.
        if !table.subjects.merged, let first = table.subjects.interfaces.first { table.subjects.interfaces = [first] }
        self.table = table
        path = parsed.value(Self.output)
    }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let (session, tables) = try PeriodView.fetch(context.socketCandidates, table)
        guard let usage = tables.usage.first else {
            throw CLIError(.failure, table.subjects.interfaceClass == nil ? "chart: no interface with history yet" : "chart: nothing to draw")
        }
        if context.json {
            context.output.json(usage)
            return 0
        }
        let subject = usage.interface ?? usage.class.map { "class \($0)" } ?? ""
        let svg = SVGChart.render(usage, subject: subject, time: session.time, units: context.units)
        guard let path, path != "-" else {
            context.output.write(svg)
            return 0
        }
        guard let fd = FileDescriptor(adopting: open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)) else {
            throw CLIError(.noInput, "cannot write \(path): \(Errno.current.description)")
        }
        let bytes = Array(svg.utf8)
        let written = bytes.withUnsafeBytes { raw in retryingEINTR { write(fd.rawValue, raw.baseAddress, raw.count) } }
        guard written == bytes.count else { throw CLIError(.failure, "cannot write \(path): \(Errno.current.description)") }
        return 0
    }
}
