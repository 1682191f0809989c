/// vnStat's switches (`vnstat --longhelp`, 2.10) that `ifmeter` does not take, each with what
/// to use instead: a vnStat user's habit gets an answer, never "unknown option". The switches
/// that work are the commands' and options' own spellings (`-d`, `--begin`, `--iface`, `-ru`);
/// docs/CLI.md's table lists both, and `VnStatSwitchesTests` checks it against `vnstat --longhelp`.
enum VnStatSwitches {
    static let instead: [String: String] = [
        "--xml": "ifmeter writes JSON, not XML: add --json to any view",
        "--alert": "use `ifmeter check -i IFACE --limit SIZE [--period day|month] [--warn PERCENT]` (Nagios exit codes)",
        "--add": "ifmeterd meters every interface by itself; nothing to add",
        "--remove": "ifmeterd meters every interface; `classify = NAME = ignore` in ifmeterd.conf stops metering one, "
            + "and the `forget` request deletes its history (docs/PROTOCOL.md)",
        "--rename": "ifmeter keeps history under the kernel's name; `ifmeter alias IFACE NAME` shows another name beside it",
        "--setalias": "use `ifmeter alias IFACE NAME` (or alias[IFACE] = NAME in ifmeterd.conf)",
        "-D": "ifmeterd says what it does in its journal (`journalctl -u ifmeterd`); `ifmeter status` shows its state",
        "--debug": "ifmeterd says what it does in its journal (`journalctl -u ifmeterd`); `ifmeter status` shows its state",
        "--style": "ifmeter has one style; --json for scripts, --oneline for one line an interface",
        "--dbdir": "ifmeterd keeps its database in its state directory: `ifmeterd --state-dir DIR`",
        "--locale": "ifmeter writes times in the zone of TZ and numbers in one format; set TZ",
        "--config": "the config is ifmeterd's: `ifmeterd --config FILE` (docs/CONFIG.md)",
        "--showconfig": "read ifmeterd.conf itself; `ifmeterd --check-config` checks it",
    ]

    /// The error for `word`, if it is a vnStat switch ifmeter does not take: a usage error (64)
    /// that names what to use.
    static func refusal(_ word: String) -> CLIError? {
        instead[word].map { CLIError(.usage, "vnStat's \(word) is not supported: \($0)") }
    }

    /// vnStat's switches that take an optional mode or time after them (`vnstat --json d`,
    /// `vnstat -l 1`, `vnstat -tr 5`), which ifmeter's spellings do not: what to use instead.
    static let modes: [String: String] = [
        "--json": "ifmeter's --json takes no mode: add it to a view (`ifmeter days --json`, `ifmeter months --json`)",
        "--oneline": "ifmeter's --oneline takes no mode: `ifmeter --oneline` (its own fields)",
        "-l": "`ifmeter live` takes no mode: it shows rates in bytes (--bits for bit/s)",
        "--live": "`ifmeter live` takes no mode: it shows rates in bytes (--bits for bit/s)",
        "-tr": "`ifmeter rate` takes no time: it shows the rates over ifmeterd's last interval (`ifmeter live` to watch them)",
        "--traffic": "`ifmeter rate` takes no time: it shows the rates over ifmeterd's last interval (`ifmeter live` to watch them)",
        "-ru": "ifmeter's --bits (-ru) takes no mode: bytes per second without it, bits per second with it",
        "--rateunit": "ifmeter's --bits (--rateunit) takes no mode: bytes per second without it, bits per second with it",
        "--iflist": "`ifmeter list` takes no mode",
        "--dbiflist": "`ifmeter list` takes no mode",
    ]

    /// The error for `word` where a command was expected, if it follows a vnStat switch that
    /// takes a mode (`modes`): a usage error (64) that names what to use, never "unknown command".
    static func modeRefusal(_ word: String, after switchWord: String) -> CLIError? {
        modes[switchWord].map { CLIError(.usage, "vnStat's \(switchWord) \(word) is not supported: \($0)") }
    }

    /// vnStat's view switches take an optional row count after them (`vnstat -d 7`): the
    /// number `word`, after the switch `after` that chose `command`, as `--limit`.
    static func takesLimit(_ word: String, after switchWord: String, of command: any Subcommand.Type) -> Bool {
        switchWord.hasPrefix("-") && !word.isEmpty && word.allSatisfy(\.isASCII) && word.allSatisfy(\.isNumber)
            && command.options.contains(.rows)
    }
}
