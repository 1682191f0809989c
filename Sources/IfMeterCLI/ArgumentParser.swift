/// A command line read against the commands' declarations: which command, and the options
/// and arguments it was given, each checked to be one it takes.
struct ParsedArguments: Sendable {
    /// Every value given for an option, by ``OptionSpec/key``, in order; a flag has one
    /// empty value each time it was given.
    var given: [String: [String]] = [:]
    /// The words after the command's name, as its ``ArgumentSpec``s declare them.
    var arguments: [String] = []

    func isSet(_ option: OptionSpec) -> Bool { given[option.key] != nil }
    /// The last value given.
    func value(_ option: OptionSpec) -> String? { given[option.key]?.last }
    func values(_ option: OptionSpec) -> [String] { given[option.key] ?? [] }
}

/// The command a command line chooses, with what it was given, before the command has read it.
struct ParsedCommandLine: Sendable {
    var command: any Subcommand.Type
    /// `--help` after a command, or `help COMMAND`: that command's help.
    var helpRequested = false
    var parsed = ParsedArguments()

    /// Parses `arguments` (without the program name). The first word that names a command
    /// (or a vnStat switch such as `-d`) picks the command; options may come before or after it.
    init(_ arguments: [String]) throws(CLIError) {
        var chosen: (any Subcommand.Type)?
        var seen: [(OptionSpec, String)] = []
        var index = 0
        var help = false
        func choose(_ command: any Subcommand.Type, from word: String) throws(CLIError) {
            if command == HelpCommand.self && chosen != nil || chosen == HelpCommand.self {
                help = true
                if command != HelpCommand.self { chosen = command }
                return
            }
            if let chosen, chosen != command {
                throw .usage("\(word): a second command after \(chosen.name); run one command at a time")
            }
            chosen = command
        }
        while index < arguments.count {
            let word = arguments[index]
            index += 1
            if let command = Subcommands.byAlias[word] {
                try choose(command, from: word)
                // `vnstat -d 7`: the rows to show.
                if index < arguments.count, VnStatSwitches.takesLimit(arguments[index], after: word, of: command) {
                    seen.append((.rows, arguments[index]))
                    index += 1
                }
                continue
            }
            if word.hasPrefix("-") && word.count > 1 {
                var name = word
                var value: String?
                if let equals = word.firstIndex(of: "="), word.hasPrefix("--") {
                    name = String(word[..<equals])
                    value = String(word[word.index(after: equals)...])
                }
                guard let option = Subcommands.optionsBySpelling[name] else {
                    throw VnStatSwitches.refusal(name) ?? .usage("unknown option \(name); see `ifmeter --help`")
                }
                if option.takesValue && value == nil {
                    guard index < arguments.count else { throw .usage("\(name) needs a value") }
                    value = arguments[index]
                    index += 1
                } else if !option.takesValue, value != nil {
                    throw .usage("\(name) takes no value")
                }
                seen.append((option, value ?? ""))
                continue
            }
            if let chosen, parsed.arguments.count < chosen.arguments.count {
                parsed.arguments.append(word)
                continue
            }
            guard let command = Subcommands.byName[word] else {
                if index >= 2, let refusal = VnStatSwitches.modeRefusal(word, after: arguments[index - 2]) { throw refusal }
                throw .usage("unknown command \"\(word)\"; commands: \(Subcommands.all.map { $0.name }.joined(separator: ", "))")
            }
            try choose(command, from: word)
        }
        command = chosen ?? SummaryCommand.self
        helpRequested = help || seen.contains { $0.0 == .help }
        let allowed = Set((OptionSpec.common + command.options).map(\.key))
        for (option, value) in seen {
            guard allowed.contains(option.key) else {
                throw .usage("\(option.key) is not an option of `ifmeter \(command.name)`; see `ifmeter \(command.name) --help`")
            }
            parsed.given[option.key, default: []].append(value)
        }
        guard !helpRequested else { return }
        for (position, argument) in command.arguments.enumerated() {
            let word = position < parsed.arguments.count ? parsed.arguments[position] : nil
            if word == nil && argument.optional { continue }
            guard let word, argument.choices.isEmpty || argument.choices.contains(word) else {
                let choices = argument.choices.joined(separator: "|")
                throw .usage("\(command.name): say which \(argument.name.lowercased()): `ifmeter \(command.name) \(choices.isEmpty ? argument.name : choices)`"
                    + (word.map { ", not \"\($0)\"" } ?? ""))
            }
        }
    }

    /// Whether `arguments` ask for `command`, even when they do not parse: its name appears as
    /// a word that is not an option's value.
    static func names(_ command: any Subcommand.Type, in arguments: [String]) -> Bool {
        var index = 0
        while index < arguments.count {
            let word = arguments[index]
            if word == command.name { return true }
            index += Subcommands.optionsBySpelling[word]?.takesValue == true ? 2 : 1
        }
        return false
    }
}
