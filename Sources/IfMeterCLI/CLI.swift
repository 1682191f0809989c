import IfMeterPresentation
import IfMeterCore
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// `ifmeter`: parses the command line, runs one command, and returns the exit status.
public enum CLI {
    /// Runs the command line of this process.
    public static func main() -> Int32 {
        openStandardDescriptors()
        return run(arguments: Array(CommandLine.arguments.dropFirst()), environment: processEnvironment())
    }

    /// Each of descriptors 0–2 that is closed (`ifmeter >&-`) opened on /dev/null: otherwise the
    /// daemon's socket would be the next descriptor opened, and the view written into it.
    static func openStandardDescriptors() {
        for fd in Int32(0)...2 where fcntl(fd, F_GETFD) == -1 && errno == EBADF {
            // The lowest free descriptor: this one, since those below it are open.
            _ = open("/dev/null", O_RDWR)
        }
    }

    public static func run(arguments: [String], environment: [String: String]) -> Int32 {
        let output = Output()
        let errors = Output(fd: STDERR_FILENO)
        defer {
            output.flush()
            errors.flush()
        }
        let isCheck = ParsedCommandLine.names(CheckCommand.self, in: arguments)
        do throws(CLIError) {
            let line = try ParsedCommandLine(arguments)
            let parsed = line.parsed
            var units = Units()
            if parsed.isSet(.si) { units.base = .si }
            units.bits = parsed.isSet(.bits)
            let context = CommandContext(
                locations: Locations(environment: environment, uid: getuid()), output: output, errors: errors,
                socket: parsed.value(.socket), json: parsed.isSet(.json), units: units)
            if line.helpRequested {
                output.write(Help.text(for: line.command) + "\n")
                return 0
            }
            let status = try run(line.command, parsed, context)
            output.flush()
            if let failure = output.failure {
                throw CLIError(.connectionLost, "cannot write to standard output: \(failure)")
            }
            return status
        } catch {
            output.flush()
            if isCheck {
                // Monitoring reads one line on stdout and the status; anything wrong is UNKNOWN.
                output.write("UNKNOWN: \(error.message)\n")
                return CheckStatus.unknown.rawValue
            }
            errors.write("ifmeter: \(error.message)\n")
            if error.status == .usage { errors.write("Run `ifmeter --help` for usage.\n") }
            return error.status.rawValue
        }
    }

    /// Reads `arguments` as ``run(arguments:environment:)`` would, without running the command:
    /// the fuzz target's way in.
    public static func parse(arguments: [String]) throws(CLIError) {
        let line = try ParsedCommandLine(arguments)
        if !line.helpRequested { _ = try parse(line.command, line.parsed) }
    }

    /// Reads the options into the command.
    static func parse<Chosen: Subcommand>(_ command: Chosen.Type, _ parsed: ParsedArguments) throws(CLIError) -> Chosen {
        try Chosen(parsed)
    }

    /// Reads the options into the command and runs it.
    static func run<Chosen: Subcommand>(_ command: Chosen.Type, _ parsed: ParsedArguments,
                                        _ context: CommandContext) throws(CLIError) -> Int32 {
        try parse(command, parsed).run(context)
    }
}
