import Foundation
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
        // Every command the binary knows is in the man page and in the completion.
        let manual = try String(contentsOfFile: root + "/share/man/man1/ifmeter.1", encoding: .utf8)
        let completion = root + "/share/bash-completion/completions/ifmeter"
        let completed = try Command.check(["bash", "-c", """
            source "$1"; COMP_WORDS=(ifmeter ""); COMP_CWORD=1; _ifmeter; echo "${COMPREPLY[@]}"
            COMP_WORDS=(ifmeter check --); COMP_CWORD=2; _ifmeter; echo "${COMPREPLY[@]}"
            """, "bash", completion]).split(separator: "\n").map { Set($0.split(separator: " ").map(String.init)) }
        let help = try Command.check([root + "/bin/ifmeter", "--help"])
        for command in ["summary", "5min", "hours", "days", "months", "years", "top", "list", "events", "status",
                        "rate", "live", "log", "check", "chart", "plans", "notify"] {
            #expect(help.contains("  \(command) "), "\(command) in --help")
            #expect(manual.contains(command), "\(command) in ifmeter.1")
            #expect(completed.first?.contains(command) == true, "\(command) completed")
        }
        // Every key docs/CONFIG.md documents is in ifmeterd.conf(5).
        let configDoc = try String(contentsOfFile: Daemon.packageRoot + "/docs/CONFIG.md", encoding: .utf8)
        let keys = configDoc.split(separator: "\n").filter { $0.hasPrefix("| `") }
            .compactMap { $0.dropFirst(3).split(separator: "`").first.map(String.init) }
            .map { $0.hasSuffix("[IFACE]") ? String($0.dropLast("[IFACE]".count)) : $0 }
        let configPage = try String(contentsOfFile: root + "/share/man/man5/ifmeterd.conf.5", encoding: .utf8)
        #expect(keys.count >= 20)
        for key in keys { #expect(configPage.contains(key), "\(key) in ifmeterd.conf.5") }
        #expect(completed.last == ["--socket", "--json", "--si", "--bits", "--help", "--interface", "--period",
                                   "--limit", "--warn", "--projected", "--direction", "--plan"])
    }
}
