import IfMeterPresentation
import IfMeterCore
@testable import IfMeterCLI
import IfMeterTestSupport
import Testing

@Suite("ifmeter: units, times, arguments", .ownThread, .timeLimit(.minutes(3)))
struct CLIUnitTests {
    @Test("bytes and rates in IEC, SI and bits")
    func units() {
        let iec = Units()
        #expect(iec.bytes(0) == "0 B")
        #expect(iec.bytes(1023) == "1023 B")
        #expect(iec.bytes(1536) == "1.50 KiB")
        #expect(iec.bytes(10 << 30) == "10.00 GiB")
        #expect(Units(base: .si).bytes(1_500_000) == "1.50 MB")
        #expect(iec.rate(1_048_576) == "1.00 MiB/s")
        #expect(Units(base: .si, bits: true).rate(1_250_000) == "10.00 Mbit/s")
        #expect(Units(bits: true).rate(128) == "1.00 Kibit/s")
    }

    @Test("times in UTC and with an offset: RFC 3339, Unix seconds, and what is not a time")
    func times() {
        let utc = TimeText(utc: true)
        #expect(utc.parse("2026-03-29") == 1_774_742_400)
        #expect(utc.parse("2026-03-29T12:00:00Z") == 1_774_785_600)
        #expect(utc.parse("2026-03-29T14:00:00+02:00") == 1_774_785_600)
        #expect(utc.parse("@1774785600") == 1_774_785_600)
        #expect(utc.parse("2026-13-01") == nil)
        #expect(utc.parse("yesterday") == nil)
        #expect(utc.format(1_774_746_000, "%H:%M") == "01:00")
    }

    @Test("commands, vnStat switches and per-command options")
    func arguments() throws {
        #expect(try ParsedCommandLine([]).command == SummaryCommand.self)
        #expect(try ParsedCommandLine(["-d", "-i", "eth0"]).command == DaysCommand.self)
        let hours = try ParsedCommandLine(["-i", "eth0,wlan0", "hours"])
        #expect(try Subjects(hours.parsed).interfaces == ["eth0", "wlan0"])
        #expect(try ParsedCommandLine(["-tr"]).command == RateCommand.self)
        #expect(try ParsedCommandLine(["days", "--help"]).helpRequested)
        let help = try ParsedCommandLine(["help", "check"])
        #expect(help.command == CheckCommand.self && help.helpRequested)
        let chartLine = try ParsedCommandLine(["chart", "days", "-o", "x.svg", "--si"])
        let chart = try ChartCommand(chartLine.parsed)
        #expect(chart.table.period == .day && chart.path == "x.svg" && chart.table.limit == 30 && chartLine.parsed.isSet(.si))
        let check = try CheckCommand(try ParsedCommandLine(["check", "-i", "wwan0", "--limit", "10GiB", "--warn=90%", "--projected"]).parsed)
        #expect(check.limit == "10GiB" && check.warn == "90%" && check.projected && check.interfaces == ["wwan0"])
        let importing = ImportCommand(try ParsedCommandLine(["import", "vnstat", "/tmp/v.db", "--dry-run"]).parsed)
        #expect(importing.path == "/tmp/v.db" && importing.dryRun && !importing.utc)
        #expect(try TopCommand(try ParsedCommandLine(["top"]).parsed).table.limit == 10)
    }

    @Test("bad command lines say what is wrong", arguments: [
        (["frobnicate"], "unknown command \"frobnicate\""),
        (["days", "--follow"], "--follow is not an option of `ifmeter days`"),
        (["--nope"], "unknown option --nope"),
        (["days", "--limit", "0"], "--limit: expected a positive number of rows"),
        (["days", "-i"], "-i needs a value"),
        (["chart"], "chart: say which chart"),
        (["chart", "weeks"], "chart: say which chart"),
        (["import"], "import: say which source"),
        (["days", "months"], "months: a second command after days"),
        (["-i", "eth0", "--class", "wifi"], "give -i/--interface or --class, not both"),
        (["--json=yes"], "--json takes no value"),
        (["live", "--count", "0"], "--count: expected a positive number"),
        (["check", "-i", "a", "--direction", "up"], "--direction: expected rx, tx or both"),
        (["notify"], "notify: say what to do"),
        // vnStat's switches with a mode or time after them (#61): what to use, not "unknown command".
        (["--json", "d"], "vnStat's --json d is not supported: ifmeter's --json takes no mode"),
        (["--json", "d", "5"], "vnStat's --json d is not supported"),
        (["--oneline", "b"], "vnStat's --oneline b is not supported"),
        (["-l", "1"], "vnStat's -l 1 is not supported: `ifmeter live` takes no mode"),
        (["-tr", "5"], "vnStat's -tr 5 is not supported: `ifmeter rate` takes no time"),
        (["-ru", "1"], "vnStat's -ru 1 is not supported"),
        (["--iflist", "1"], "vnStat's --iflist 1 is not supported: `ifmeter list` takes no mode"),
    ])
    func badArguments(arguments: [String], message: String) {
        #expect {
            let line = try ParsedCommandLine(arguments)
            _ = try CLI.parse(line.command, line.parsed)
        } throws: { error in
            let error = error as? CLIError
            return error?.status == .usage && error?.message.contains(message) == true
        }
    }

    @Test("a command named in arguments that do not parse; an option's value is not a command")
    func names() {
        #expect(ParsedCommandLine.names(CheckCommand.self, in: ["--socket", "/s", "check", "--bogus"]))
        #expect(!ParsedCommandLine.names(CheckCommand.self, in: ["days", "-i", "check", "--bogus"]))
        #expect(!ParsedCommandLine.names(CheckCommand.self, in: ["--socket", "check"]))
    }

    @Test("the registry: every name, switch and spelling means one thing; every option has help")
    func registry() {
        let names = Subcommands.all.map { $0.name }
        #expect(Set(names).count == names.count)
        let aliases = Subcommands.all.flatMap { $0.aliases }
        #expect(Set(aliases).count == aliases.count)
        #expect(Set(names).isDisjoint(with: aliases))
        for command in Subcommands.all {
            let spellings = (OptionSpec.common + command.options).flatMap(\.names)
            #expect(Set(spellings).count == spellings.count, "\(command.name) repeats an option")
            #expect(Help.text(for: command).hasPrefix("usage: ifmeter"), "\(command.name)")
            for option in command.options {
                #expect(!option.help.isEmpty, "\(command.name) \(option.key)")
                // A spelling takes a value everywhere or nowhere: the parser splits words before it knows the command.
                #expect(Subcommands.optionsBySpelling[option.key]?.takesValue == option.takesValue, "\(option.key)")
            }
        }
    }

    @Test("the hour graph scales to the busiest hour")
    func bar() {
        #expect(PeriodView.bar(rx: 300, tx: 100, peak: 400, width: 8) == "rrrrrrtt")
        #expect(PeriodView.bar(rx: 0, tx: 100, peak: 400, width: 8) == "tt")
        #expect(PeriodView.bar(rx: 0, tx: 0, peak: 0, width: 8) == "")
    }

    @Test("marks and their legend")
    func marks() {
        var marks = Marks()
        #expect(marks.mark(Continuity(resets: 1, gaps: 2)) == "*!")
        #expect(marks.mark(Continuity()) == "")
        let footer = marks.footer()
        #expect(footer.contains("* a counter reset") && footer.contains("! a gap") && !footer.contains("~ "))
        #expect(footer.hasSuffix(EstimateLabel.footnote + "\n"))
    }
}

/// Local times: the process's zone is Europe/Berlin here, in a child (``ZonedChild``).
@Suite("Local times", .enabled(if: ZonedChild.isChild, ZonedChild.skipReason), .ownThread, .timeLimit(.minutes(3)))
struct TimeTextZoneTests {
    @Test("local dates across DST, and offsets that override the zone")
    func localTimes() {
        let local = TimeText(utc: false)
        #expect(local.parse("2026-03-29") == 1_774_738_800)  // 00:00 CET
        #expect(local.parse("2026-03-29 03:00") == 1_774_746_000)  // 03:00 CEST, one hour after 02:00 CET
        #expect(local.parse("2026-03-29T12:00:00Z") == 1_774_785_600)
        #expect(local.parse("2026-03-29T14:00:00+02:00") == 1_774_785_600)
        #expect(local.parse("@1774785600") == 1_774_785_600)
        #expect(local.format(1_774_746_000, "%H:%M %Z") == "03:00 CEST")
    }
}
