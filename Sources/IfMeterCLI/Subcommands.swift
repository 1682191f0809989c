import IfMeterCore
import IfMeterWire

/// Every command `ifmeter` has, in the order help lists them.
enum Subcommands {
    static let all: [any Subcommand.Type] = [
        SummaryCommand.self, FiveMinutesCommand.self, HoursCommand.self, DaysCommand.self, MonthsCommand.self,
        YearsCommand.self, TopCommand.self, ListCommand.self, EventsCommand.self, StatusCommand.self,
        RateCommand.self, LiveCommand.self, LogCommand.self, CheckCommand.self, PercentileCommand.self, PlansCommand.self,
        ContainersCommand.self, AppsCommand.self, NetworksCommand.self, SplitCommand.self, NotifyCommand.self, ChartCommand.self, MetricsCommand.self, ImportCommand.self, AliasCommand.self,
        CompletionCommand.self, HelpCommand.self, VersionCommand.self,
    ]

    static let byName: [String: any Subcommand.Type] = Dictionary(all.map { ($0.name, $0) }) { first, _ in first }

    static let byAlias: [String: any Subcommand.Type] =
        Dictionary(all.flatMap { command in command.aliases.map { ($0, command) } }) { first, _ in first }

    /// Every option of every command by each of its spellings: a spelling means one thing
    /// everywhere (a value or none), so a command line is split into words the same way
    /// whichever command it names.
    static let optionsBySpelling: [String: OptionSpec] = Dictionary(
        (OptionSpec.common + all.flatMap { $0.options }).flatMap { option in option.names.map { ($0, option) } }
    ) { first, _ in first }
}

/// `help [COMMAND]`: the overview, or a command's help.
struct HelpCommand: Subcommand {
    static let name = "help"
    static let aliases = ["--help", "-?", "--longhelp"]
    static let summary = "this overview; help COMMAND for a command's"
    static let usage = "ifmeter help [COMMAND]"
    static let about = ""
    static let options: [OptionSpec] = []

    init(_ parsed: ParsedArguments) {}

    func run(_ context: CommandContext) -> Int32 {
        context.output.write(Help.overview + "\n")
        return 0
    }
}

/// `version`: the client's version and the protocol it speaks.
struct VersionCommand: Subcommand {
    static let name = "version"
    static let aliases = ["--version", "-v"]
    static let summary = "the client's version and protocol"
    static let usage = "ifmeter version"
    static let about = "The client's version and the protocol version it speaks."
    static let options: [OptionSpec] = []

    init(_ parsed: ParsedArguments) {}

    func run(_ context: CommandContext) -> Int32 {
        context.output.write("ifmeter \(IfMeterVersion.string) (protocol \(protocolVersion))\n")
        return 0
    }
}
