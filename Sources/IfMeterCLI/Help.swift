/// `--help` texts, built from the commands' declarations: the overview, and one per command.
enum Help {
    static var overview: String {
        var lines = [
            "usage: ifmeter [COMMAND] [OPTIONS]",
            "",
            "Shows what ifmeterd counted: estimates of traffic per network interface from the",
            "kernel's interface counters (they include protocol overhead and are not per-application).",
            "",
            "Commands (vnStat's switches in brackets also work):",
        ]
        for command in Subcommands.all where command != HelpCommand.self && command != VersionCommand.self {
            let switches = command.aliases.filter { !$0.hasPrefix("--") }
            let name = ([command.name] + command.arguments.filter { $0.choices.count == 1 }.map { $0.choices[0] })
                .joined(separator: " ")
            lines.append("  " + name.padding(to: 17) + command.summary + (switches.isEmpty ? "" : " [\(switches.joined(separator: ", "))]"))
        }
        lines += ["", "Options for every command:"]
        lines += optionLines(OptionSpec.common)
        lines += [
            "",
            "`ifmeter COMMAND --help` tells a command's options. Exit status: 0 ok, 64 bad arguments,",
            "66 log file missing, 69 ifmeterd not running, 70 ifmeterd could not answer, 73 ifmeterd",
            "busy (too many clients), 74 connection broken, 75 ifmeterd starting, 76 protocol",
            "mismatch, 77 permission denied, 1 anything else; `check` has its own (see its help).",
        ]
        return lines.joined(separator: "\n")
    }

    /// `command`'s usage, what it does, and its options.
    static func text(for command: any Subcommand.Type) -> String {
        guard command != HelpCommand.self else { return overview }
        var text = "usage: \(command.usage)\n"
        if !command.about.isEmpty { text += "\n" + command.about + "\n" }
        if !command.options.isEmpty { text += "\n" + optionLines(command.options).joined(separator: "\n") + "\n" }
        return text + "\nOptions every command takes: see `ifmeter --help`."
    }

    /// Each option's spelling, and its help beside it from the 26th column on.
    static func optionLines(_ options: [OptionSpec]) -> [String] {
        options.flatMap { option -> [String] in
            let help = option.help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let spelled = "  " + option.spelled
            let first = spelled.count < 25 ? [spelled.padding(to: 25) + help[0]] : [spelled, String(repeating: " ", count: 25) + help[0]]
            return first + help.dropFirst().map { String(repeating: " ", count: 25) + $0 }
        }
    }
}
