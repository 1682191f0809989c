import IfMeterPresentation
import IfMeterWire

/// One `ifmeter` command: its name, options, help and what it does. Adding a view is one type
/// conforming to this, listed in ``Subcommands/all``; help, the bash completion and the
/// parser read the same declarations, so they cannot disagree.
protocol Subcommand: Sendable {
    /// The word that chooses it (`days`).
    static var name: String { get }
    /// vnStat's switches that mean the same (`-d`, `--days`).
    static var aliases: [String] { get }
    /// One line for the overview.
    static var summary: String { get }
    /// What follows `usage: ` in its help, without the options every command takes.
    static var usage: String { get }
    /// The paragraphs between the usage line and the options.
    static var about: String { get }
    /// Its options besides ``OptionSpec/common``.
    static var options: [OptionSpec] { get }
    /// Words it takes after its name (`chart hours`), in order.
    static var arguments: [ArgumentSpec] { get }

    /// Reads the options and arguments the parser has checked against the declarations.
    init(_ parsed: ParsedArguments) throws(CLIError)
    /// Runs the command; its exit status.
    func run(_ context: CommandContext) throws(CLIError) -> Int32
}

extension Subcommand {
    static var aliases: [String] { [] }
    static var arguments: [ArgumentSpec] { [] }
}

/// What every command runs with: where things are, where to write, and the options every
/// command takes.
struct CommandContext {
    var locations: Locations
    var output: Output
    var errors: Output
    /// `--socket PATH`.
    var socket: String?
    /// `--json`.
    var json: Bool
    /// `--si`, `--bits`.
    var units: Units

    /// The sockets to try, in order.
    var socketCandidates: [String] { locations.socketCandidates(flag: socket) }

    /// `result` as JSON with `--json`, else as `render` writes it.
    func write<Result: JSONWritable>(_ result: Result, _ render: (Result) -> String) {
        if json { output.json(result) } else { output.write(render(result)) }
    }
}

/// A word a command takes after its name.
struct ArgumentSpec: Hashable, Sendable {
    /// How help names it (`PATH`).
    var name: String
    /// The words it may be; empty for any.
    var choices: [String] = []
    var optional = false
}
