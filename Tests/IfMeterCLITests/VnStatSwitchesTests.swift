import Foundation
@testable import IfMeterCLI
import IfMeterTestSupport
import Testing

/// The vnstat installed, if one is.
private let installedVnStat: String? = try? Command.resolve("vnstat")

/// Every switch `vnstat --longhelp` lists either works in `ifmeter` or says what to use, and
/// docs/CLI.md's table lists it (#61). The list is read from the vnstat installed, at run time.
@Suite("vnStat's switches", .enabled(if: installedVnStat != nil, "needs vnstat (scripts/install-deps --test)"),
       .ownThread, .timeLimit(.minutes(2)))
struct VnStatSwitchesTests {

    /// Each switch of `vnstat --longhelp`, and whether it takes a value (`<…>`, not `[…]`).
    static func longHelp() throws -> [(switch: String, takesValue: Bool)] {
        let text = try Command.check([installedVnStat ?? "vnstat", "--longhelp"])
        var switches: [(String, Bool)] = []
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ")
            guard let first = words.first, first.hasPrefix("-") else { continue }
            var spelled: [String] = []
            var value = false
            for word in words {
                if word.hasPrefix("-") {
                    spelled.append(String(word.hasSuffix(",") ? word.dropLast() : word))
                } else if word.hasPrefix("<") {
                    value = true
                } else if !word.hasPrefix("[") {
                    break
                }
            }
            switches += spelled.map { ($0, value) }
        }
        return switches
    }

    static var cliTable: String {
        get throws {
            let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("docs/CLI.md")
            let text = try String(contentsOf: url, encoding: .utf8)
            guard let start = text.range(of: "## vnStat's switches") else { return "" }
            return String(text[start.lowerBound...].prefix { _ in true }.split(separator: "\n## ", maxSplits: 1)[0])
        }
    }

    @Test("vnstat --longhelp lists the switches this test knows the shape of")
    func readsTheList() throws {
        let switches = try Self.longHelp().map(\.switch)
        // vnStat 2.10 has 40 spellings; a later one may add some, which the next test then checks.
        #expect(switches.count >= 40, "\(switches)")
        #expect(switches.contains("-d") && switches.contains("--days") && switches.contains("--setalias"))
    }

    @Test("every switch is in docs/CLI.md's table, and works or says what to use instead")
    func everySwitch() throws {
        let table = try Self.cliTable
        #expect(!table.isEmpty, "docs/CLI.md has a \"vnStat's switches\" section")
        for (spelled, takesValue) in try Self.longHelp() {
            #expect(table.contains("`\(spelled)`"), "\(spelled) in docs/CLI.md's table")
            // A value vnStat's switch takes: a time for --begin and --end, a name or number else;
            // the options of vnStat's lists with one (-d).
            let value = ["-b", "--begin", "-e", "--end"].contains(spelled) ? ["2026-11-01"] : takesValue ? ["1"] : []
            let line = (["-b", "--begin", "-e", "--end", "--limit"].contains(spelled) ? ["-d"] : []) + [spelled] + value
            do {
                try CLI.parse(arguments: line)
            } catch {
                #expect(error.status == .usage, "\(spelled): \(error.message)")
                #expect(error.message.hasPrefix("vnStat's \(spelled) is not supported: "), "\(spelled): \(error.message)")
                #expect(VnStatSwitches.instead[spelled] != nil)
            }
        }
        // --95th is `ifmeter 95th`'s (another change); the table names it.
        #expect(table.contains("`--95th`"))
    }

    @Test("vnStat's habits: a row count after a view's switch, --begin/--end, --iface, -ru, -q, -s, --iflist")
    func habits() throws {
        let days = try ParsedCommandLine(["-d", "7", "--iface", "eth0", "-b", "2026-11-01", "-e", "2026-11-08"])
        #expect(days.command is DaysCommand.Type)
        #expect(days.parsed.value(.rows) == "7")
        #expect(days.parsed.value(.interface) == "eth0")
        #expect(days.parsed.value(.from) == "2026-11-01" && days.parsed.value(.to) == "2026-11-08")
        #expect(try ParsedCommandLine(["-ru"]).parsed.isSet(.bits))
        #expect(try ParsedCommandLine(["-s"]).command == SummaryCommand.self)
        #expect(try ParsedCommandLine(["-q"]).command == SummaryCommand.self)
        #expect(try ParsedCommandLine(["--iflist"]).command == ListCommand.self)
        #expect(try ParsedCommandLine(["-hg"]).command == HoursCommand.self)
        // A number after a word that is not a switch is no row count.
        #expect(throws: CLIError.self) { try ParsedCommandLine(["days", "7"]) }
        #expect(throws: CLIError.self) { try ParsedCommandLine(["--xml"]) }
    }
}
