import IfMeterWire

/// The commands of `ifmeter` (docs/CLI.md).
public enum CLICommand: String, CaseIterable, Sendable {
    case summary, fiveMinutes = "5min", hours, days, months, years, top, list, events, status
    case rate, live, log, check, chart, metrics, plans, containers, notify, help, version
    /// `import vnstat [PATH]`.
    case importHistory = "import"

    /// vnStat's switches, accepted as the commands they mean.
    static let vnstatAliases: [String: CLICommand] = [
        "-5": .fiveMinutes, "--fiveminutes": .fiveMinutes, "-h": .hours, "--hours": .hours,
        "-d": .days, "--days": .days, "-m": .months, "--months": .months, "-y": .years,
        "--years": .years, "-t": .top, "--top": .top, "-l": .live, "--live": .live, "-tr": .rate,
        "--version": .version, "-v": .version, "--help": .help, "-?": .help,
    ]

    /// The history resolution a table command shows.
    var period: UsagePeriod? {
        switch self {
        case .fiveMinutes: .fiveMinutes
        case .hours: .hour
        case .days, .top: .day
        case .months: .month
        case .years: .year
        default: nil
        }
    }
}

/// A parsed command line: the command and every option, checked against what that command takes.
public struct Invocation: Sendable {
    public var command: CLICommand = .summary
    /// `--help` after a command: that command's help.
    public var helpRequested = false
    public var socket: String?
    public var json = false
    public var units = Units()
    public var interfaces: [String] = []
    public var interfaceClass: String?
    public var from: String?
    public var to: String?
    /// Rows to show (views), or the quota (`check --limit`).
    public var limit: String?
    public var oneline = false
    public var kind: String?
    public var follow = false
    public var logDirectory: String?
    public var logFiles: [String] = []
    public var period: String?
    public var projected = false
    public var warn: String?
    /// `check --plan NAME`.
    public var plan: String?
    /// `notify --exec COMMAND`, `--desktop`, `--state FILE`, `--once`.
    public var exec: String?
    public var desktop = false
    public var statePath: String?
    public var once = false
    public var direction = "both"
    public var output: String?
    /// `chart hours|days|months`.
    public var chartPeriod: String?
    public var count: Int?
    /// `metrics --textfile DIR`.
    public var textfile: String?
    /// `metrics --openmetrics`.
    public var openMetrics = false
    /// `-a`/`--all`: also idle virtual links the default views leave out.
    public var all = false
    /// `import SOURCE [PATH]`.
    public var importSource: String?
    public var importPath: String?
    /// `import --dry-run`: report, change nothing.
    public var dryRun = false
    /// `import --utc`: vnStat ran with `UseUTC 1`.
    public var utc = false

    /// Options every command takes.
    static let common: Set<String> = ["--socket", "--json", "--si", "--bits", "--help"]

    /// The options each command takes besides ``common``.
    static let accepted: [CLICommand: Set<String>] = {
        let subject: Set<String> = ["-i", "--interface", "--class", "-a", "--all"]
        let table = subject.union(["--from", "--to", "--limit"])
        return [
            .summary: subject.union(["--oneline"]),
            .fiveMinutes: table, .hours: table, .days: table, .months: table, .years: table,
            .top: subject.union(["--limit"]),
            .list: subject,
            .events: ["-i", "--interface", "--kind", "--from", "--to", "--limit"],
            .status: [],
            .rate: subject,
            .live: subject.union(["--count"]),
            .log: ["-i", "--interface", "--class", "--from", "--to", "--kind", "--follow", "--log-dir", "--file"],
            .check: ["-i", "--interface", "--period", "--limit", "--projected", "--warn", "--direction", "--plan"],
            .plans: [],
            .containers: ["-i", "--interface"],
            .notify: ["--exec", "--desktop", "--state", "--once"],
            .chart: table.union(["-o", "--output"]),
            .metrics: ["--textfile", "--openmetrics"],
            .importHistory: ["--dry-run", "--utc"],
            .help: [], .version: [],
        ]
    }()

    static let valueOptions: Set<String> = [
        "--socket", "-i", "--interface", "--class", "--from", "--to", "--limit", "--kind", "--log-dir",
        "--file", "--period", "--warn", "--direction", "-o", "--output", "--count", "--textfile", "--plan",
        "--exec", "--state",
    ]

    public init() {}

    /// Parses `arguments` (without the program name). The first word that names a command
    /// (or a vnStat switch such as `-d`) picks the command; options may come before or after it.
    public init(arguments: [String]) throws(CLIError) {
        var chosen: CLICommand?
        var seen: [(String, String?)] = []
        var index = 0
        func choose(_ command: CLICommand, from word: String) throws(CLIError) {
            if command == .help && chosen != nil || chosen == .help {
                helpRequested = true
                if command != .help { chosen = command }
                return
            }
            if let chosen, chosen != command {
                throw .usage("\(word): a second command after \(chosen.rawValue); run one command at a time")
            }
            chosen = command
        }
        while index < arguments.count {
            let word = arguments[index]
            index += 1
            if let command = CLICommand.vnstatAliases[word] {
                try choose(command, from: word)
                continue
            }
            if word.hasPrefix("-") && word.count > 1 {
                var name = word
                var value: String?
                if let equals = word.firstIndex(of: "="), word.hasPrefix("--") {
                    name = String(word[..<equals])
                    value = String(word[word.index(after: equals)...])
                }
                if Self.valueOptions.contains(name) && value == nil {
                    guard index < arguments.count else { throw .usage("\(name) needs a value") }
                    value = arguments[index]
                    index += 1
                }
                seen.append((name, value))
                continue
            }
            if chosen == .chart && chartPeriod == nil {
                chartPeriod = word
                continue
            }
            if chosen == .importHistory && (importSource == nil || importPath == nil) {
                if importSource == nil { importSource = word } else { importPath = word }
                continue
            }
            guard let command = CLICommand(rawValue: word) ?? (word == "5" ? .fiveMinutes : nil) else {
                throw .usage("unknown command \"\(word)\"; commands: \(CLICommand.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            try choose(command, from: word)
        }
        command = chosen ?? .summary
        let allowed = Self.common.union(Self.accepted[command] ?? [])
        for (name, value) in seen {
            guard allowed.contains(name) else {
                let known = Self.common.union(Self.accepted.values.reduce(into: Set<String>()) { $0.formUnion($1) })
                if known.contains(name) {
                    throw .usage("\(name) is not an option of `ifmeter \(command.rawValue)`; see `ifmeter \(command.rawValue) --help`")
                }
                throw .usage("unknown option \(name); see `ifmeter --help`")
            }
            try apply(name, value)
        }
        try validate()
    }

    private mutating func apply(_ name: String, _ value: String?) throws(CLIError) {
        let text = value ?? ""
        switch name {
        case "--socket": socket = text
        case "--json": json = true
        case "--si": units.base = .si
        case "--bits": units.bits = true
        case "--help": helpRequested = true
        case "-i", "--interface": interfaces += text.split(separator: ",").map(String.init)
        case "--class": interfaceClass = text
        case "--from": from = text
        case "--to": to = text
        case "--limit": limit = text
        case "--oneline": oneline = true
        case "--kind": kind = text
        case "--follow": follow = true
        case "--log-dir": logDirectory = text
        case "--file": logFiles.append(text)
        case "--period": period = text
        case "--projected": projected = true
        case "--warn": warn = text
        case "--plan": plan = text
        case "--exec": exec = text
        case "--desktop": desktop = true
        case "--state": statePath = text
        case "--once": once = true
        case "--direction": direction = text
        case "-o", "--output": output = text
        case "--textfile": textfile = text
        case "--openmetrics": openMetrics = true
        case "-a", "--all": all = true
        case "--dry-run": dryRun = true
        case "--utc": utc = true
        default:  // --count
            guard let number = Int(text), number > 0 else { throw .usage("--count: expected a positive number, got \"\(text)\"") }
            count = number
        }
    }

    private func validate() throws(CLIError) {
        if helpRequested { return }
        if !interfaces.isEmpty && interfaceClass != nil {
            throw .usage("give -i/--interface or --class, not both")
        }
        if command != .check, let limit, Int(limit).map({ $0 < 1 }) ?? true {
            throw .usage("--limit: expected a positive number of rows, got \"\(limit)\"")
        }
        if command == .importHistory, importSource != "vnstat" {
            throw .usage("import: say what to import from: `ifmeter import vnstat [PATH]`")
        }
        if command == .chart, !["hours", "days", "months"].contains(chartPeriod ?? "") {
            throw .usage("chart: say which chart: `ifmeter chart hours|days|months`")
        }
        if !["rx", "tx", "both"].contains(direction) {
            throw .usage("--direction: expected rx, tx or both, got \"\(direction)\"")
        }
    }

    /// Whether `arguments` ask for `command`, even when they do not parse: its name appears as
    /// a word that is not an option's value.
    static func names(_ command: CLICommand, in arguments: [String]) -> Bool {
        var index = 0
        while index < arguments.count {
            let word = arguments[index]
            if word == command.rawValue { return true }
            index += valueOptions.contains(word) ? 2 : 1
        }
        return false
    }

    /// The number of rows `--limit` asks for, or `fallback`.
    func rowLimit(_ fallback: Int) -> Int { limit.flatMap { Int($0) } ?? fallback }
}
