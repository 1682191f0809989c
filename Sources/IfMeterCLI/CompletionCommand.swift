/// `completion bash`: the bash completion script, written from the commands' declarations,
/// so it completes exactly what this binary accepts. `make install` installs its output.
struct CompletionCommand: Subcommand {
    static let name = "completion"
    static let summary = "the bash completion script for this ifmeter"
    static let usage = "ifmeter completion bash"
    static let about = """
        Prints a bash completion script for every command, option and value this ifmeter
        accepts; interface names come from the running daemon (`ifmeter list --json`).
        Installed by `make install`; to try it: source <(ifmeter completion bash)
        """
    static let options: [OptionSpec] = []
    static let arguments = [ArgumentSpec(name: "SHELL", choices: ["bash"])]

    init(_ parsed: ParsedArguments) {}

    func run(_ context: CommandContext) -> Int32 {
        context.output.write(Self.bash())
        return 0
    }

    /// The script. The command is found first (an option's value is never taken for one);
    /// then a value is completed by its option as that command declares it, an option by the
    /// command's options, and the first word by the command names.
    static func bash() -> String {
        var valueCases: [String] = []
        var optionCases: [String] = []
        var argumentCases: [String] = []
        var valueOptions: Set<String> = []
        for command in Subcommands.all {
            for option in OptionSpec.common + command.options where option.takesValue {
                valueOptions.formUnion(option.names)
                let patterns = option.names.map { "\"\(command.name) \($0)\"" }.joined(separator: "|")
                valueCases.append("        \(patterns))\n            \(action(option.completion))\n            return ;;")
            }
            optionCases.append("        \(command.name)) options=\"\(command.options.flatMap(\.names).joined(separator: " "))\" ;;")
            if let first = command.arguments.first, !first.choices.isEmpty {
                argumentCases.append("            \(command.name)) words=\"\(first.choices.joined(separator: " "))\" ;;")
            }
        }
        let commands = Subcommands.all.map { $0.name }.joined(separator: " ")
        // vnStat's switches choose their command too (`ifmeter -d -<TAB>` offers days' options).
        let switches = Subcommands.all.filter { !$0.aliases.isEmpty }
            // Quoted: `-?` unquoted is a pattern that matches every short option.
            .map { "\($0.aliases.map { "\"\($0)\"" }.joined(separator: "|"))) if [[ -z $command ]]; then command=\($0.name); fi; continue ;;" }
            .joined(separator: "\n        ")
        let common = OptionSpec.common.flatMap(\.names).joined(separator: " ")
        return """
            # bash completion for ifmeter(1), written by `ifmeter completion bash` from the
            # commands this ifmeter has. Interface names come from the running daemon; nothing
            # is completed from it when the daemon is not running.
            _ifmeter() {
                local cur prev command="" word skip=0 index
                cur=${COMP_WORDS[COMP_CWORD]}
                prev=${COMP_WORDS[COMP_CWORD-1]}
                for ((index = 1; index < COMP_CWORD; index++)); do
                    word=${COMP_WORDS[index]}
                    if ((skip)); then skip=0; continue; fi
                    case " \(valueOptions.sorted().joined(separator: " ")) " in *" $word "*) skip=1; continue ;; esac
                    case $word in
                    \(switches)
                    esac
                    case " \(commands) " in *" $word "*) if [[ -z $command ]]; then command=$word; fi ;; esac
                done
                case "${command:-\(SummaryCommand.name)} $prev" in
            \(valueCases.joined(separator: "\n"))
                esac
                local options="" words=""
                case ${command:-\(SummaryCommand.name)} in
            \(optionCases.joined(separator: "\n"))
                esac
                if [[ $cur == -* ]]; then
                    COMPREPLY=($(compgen -W "\(common) $options" -- "$cur"))
                elif [[ -z $command ]]; then
                    COMPREPLY=($(compgen -W "\(commands)" -- "$cur"))
                elif [[ $prev == "$command" ]]; then
                    case $command in
            \(argumentCases.joined(separator: "\n"))
                    esac
                    COMPREPLY=($(compgen -W "$words" -- "$cur"))
                fi
            }
            complete -F _ifmeter ifmeter

            """
    }

    /// How a value of this kind is completed.
    private static func action(_ completion: OptionSpec.Completion) -> String {
        switch completion {
        case .none: "COMPREPLY=()"
        case .words(let words): "COMPREPLY=($(compgen -W \"\(words.joined(separator: " "))\" -- \"$cur\"))"
        case .interfaces:
            #"COMPREPLY=($(compgen -W "$(ifmeter list --json --all 2>/dev/null | grep -o '"name":"[^"]*"' | cut -d'"' -f4)" -- "$cur"))"#
        case .files: "COMPREPLY=($(compgen -f -- \"$cur\"))"
        case .directories: "COMPREPLY=($(compgen -d -- \"$cur\"))"
        }
    }
}
