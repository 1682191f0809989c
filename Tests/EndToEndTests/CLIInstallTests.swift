import Foundation
@testable import IfMeterCLI
import IfMeterTestSupport
import Testing

/// What `make install` puts on a machine for the client: binary, man pages, bash completion.
@Suite("ifmeter installed", .ownThread, .timeLimit(.minutes(10)))
struct CLIInstallTests {
    @Test("install-files puts ifmeter, three lint-clean man pages and a working completion in place")
    func installed() throws {
        let destdir = try TemporaryPath()
        try Command.check(["make", "-C", Daemon.packageRoot, "install-files", "BUILT=\(Command.buildProductsDirectory)",
                           "DESTDIR=\(destdir.path)", "PREFIX=/usr"])
        let root = destdir.path + "/usr"
        #expect(try Command.check([root + "/bin/ifmeter", "--version"]).hasPrefix("ifmeter 0.1.0"))
        for page in ["man1/ifmeter.1", "man5/ifmeterd.conf.5", "man8/ifmeterd.8"] {
            let path = root + "/share/man/" + page
            #expect(FileManager.default.fileExists(atPath: path), "\(page)")
            let mandoc = try #require(try? Command.resolve("mandoc"), "mandoc lints the man pages; make test installs it")
            let lint = try Command.run([mandoc, "-T", "lint", "-W", "warning", path])
            #expect(lint.status == 0 && lint.stdout.isEmpty && lint.stderr.isEmpty, "\(page): \(lint.stdout)\(lint.stderr)")
        }
        // Every command the binary has (its registry, which help and the completion are
        // written from) is in --help, the man page and the completion, with all its options.
        let manual = try String(contentsOfFile: root + "/share/man/man1/ifmeter.1", encoding: .utf8)
        let completion = root + "/share/bash-completion/completions/ifmeter"
        func complete(_ words: [String]) throws -> Set<String> {
            let quoted = words.map { "'\($0)'" }.joined(separator: " ")
            let line = try Command.check(["bash", "-c", """
                source "$1"; COMP_WORDS=(ifmeter \(quoted)); COMP_CWORD=\(words.count); _ifmeter; echo "${COMPREPLY[@]}"
                """, "bash", completion])
            return Set(line.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init))
        }
        let help = try Command.check([root + "/bin/ifmeter", "--help"])
        let commands = try complete([""])
        let common = Set(OptionSpec.common.flatMap(\.names))
        for command in Subcommands.all where command != HelpCommand.self && command != VersionCommand.self {
            #expect(help.contains("  \(command.name) "), "\(command.name) in --help")
            #expect(manual.contains(command.name), "\(command.name) in ifmeter.1")
            #expect(commands.contains(command.name), "\(command.name) completed")
            let options = try complete([command.name, "-"])
            #expect(options == common.union(command.options.flatMap(\.names)), "\(command.name)'s options completed")
            for option in command.options {
                #expect(manual.contains(option.key.replacingOccurrences(of: "-", with: "\\-")), "\(command.name) \(option.key) in ifmeter.1")
                if case .words(let words) = option.completion {
                    #expect(try complete([command.name, option.key, ""]) == Set(words), "\(command.name) \(option.key)'s values")
                }
            }
            if let first = command.arguments.first, !first.choices.isEmpty {
                #expect(try complete([command.name, ""]) == Set(first.choices), "\(command.name)'s \(first.name)")
            }
        }
        // An option's value is not taken for a command, and a command's options follow it anywhere.
        #expect(try complete(["--socket", "days", "-"]) == common.union(SummaryCommand.options.flatMap(\.names)))
        #expect(try complete(["-i", "eth0", "check", "--pl"]) == ["--plan"])
        // vnStat's switches are their commands: days' options after -d, top's after --top.
        #expect(try complete(["-d", "--"]) == common.union(DaysCommand.options.flatMap(\.names)).filter { $0.hasPrefix("--") })
        #expect(try complete(["--top", "--li"]) == ["--limit"])
        #expect(try complete(["-a", "--onel"]) == ["--oneline"])
        // Every key docs/CONFIG.md documents is in ifmeterd.conf(5).
        let configDoc = try String(contentsOfFile: Daemon.packageRoot + "/docs/CONFIG.md", encoding: .utf8)
        let keys = configDoc.split(separator: "\n").filter { $0.hasPrefix("| `") }
            .compactMap { $0.dropFirst(3).split(separator: "`").first.map(String.init) }
            .map { $0.hasSuffix("[IFACE]") ? String($0.dropLast("[IFACE]".count)) : $0 }
        let configPage = try String(contentsOfFile: root + "/share/man/man5/ifmeterd.conf.5", encoding: .utf8)
        #expect(keys.count >= 20)
        for key in keys { #expect(configPage.contains(key), "\(key) in ifmeterd.conf.5") }
    }
}
