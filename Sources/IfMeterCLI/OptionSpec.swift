import IfMeterCore

/// An option a command takes: its spellings, its value, its help line and how its value
/// is completed.
struct OptionSpec: Hashable, Sendable {
    /// How a shell completes an option's value.
    enum Completion: Hashable, Sendable {
        case none
        case words([String])
        /// The names the running daemon knows.
        case interfaces
        case files
        case directories
    }

    /// Short spelling first (`-i`, `--interface`); the last is the one help and errors use.
    var names: [String]
    /// The value's name in help (`NAME`); nil for a flag.
    var value: String?
    var help: String
    var completion: Completion = .none

    /// The spelling that identifies it.
    var key: String { names[names.count - 1] }
    var takesValue: Bool { value != nil }

    /// `-i, --interface NAME`, as help shows it.
    var spelled: String { names.joined(separator: ", ") + (value.map { " " + $0 } ?? "") }
}

extension OptionSpec {
    static let socket = OptionSpec(
        names: ["--socket"], value: "PATH",
        help: "ifmeterd's socket (default: $IFMETER_SOCKET, then the daemon's own default)", completion: .files)
    static let json = OptionSpec(names: ["--json"], help: "machine-readable output (docs/CLI.md)")
    static let si = OptionSpec(names: ["--si"], help: "SI units (kB, MB) instead of IEC (KiB, MiB)")
    static let bits = OptionSpec(names: ["-ru", "--rateunit", "--bits"], help: "rates in bits per second")
    static let help = OptionSpec(names: ["--help"], help: "help for the command")
    /// The options every command takes.
    static let common: [OptionSpec] = [socket, json, si, bits, help]

    static let interface = OptionSpec(
        names: ["-i", "--iface", "--interface"], value: "NAME",
        help: "one interface, by name or alias (repeat, or NAME,NAME, for several;\nNAME+NAME for their sum as one)",
        completion: .interfaces)
    static let interfaceClass = OptionSpec(
        names: ["--class"], value: "CLASS",
        help: "the interfaces of a class: wifi, cellular, ethernet, tunnel,\nvirtual, loopback, other (tables sum the class)",
        completion: .words(["wifi", "cellular", "ethernet", "tunnel", "virtual", "loopback", "other"]))
    static let all = OptionSpec(
        names: ["-a", "--all"], help: "also virtual links that are down and never carried traffic\n(left out by default)")
    /// `-i`, `--class`, `-a`: what a view is about (``Subjects``).
    static let subjects: [OptionSpec] = [interface, interfaceClass, all]

    static let from = OptionSpec(
        names: ["-b", "--begin", "--from"], value: "TIME",
        help: "periods starting at or after TIME: YYYY-MM-DD, \"YYYY-MM-DD HH:MM\",\nRFC 3339 or @UNIXSECONDS, in the daemon's time zone")
    static let to = OptionSpec(names: ["-e", "--end", "--to"], value: "TIME", help: "periods starting before TIME")
    static let rows = OptionSpec(names: ["--limit"], value: "N", help: "at most N rows, the newest")
    /// `--from`, `--to`, `--limit`: which rows of a history table.
    static let range: [OptionSpec] = [from, to, rows]

    /// `--split`: local, internet and unknown traffic beside each row (docs/SCOPES.md).
    static let split = OptionSpec(
        names: ["--split"], help: "each row's local, internet (and unknown) traffic beside its total\n(docs/SCOPES.md)")

    static let eventKind = OptionSpec(
        names: ["--kind"], value: "KIND", help: "only events of this kind",
        completion: .words(CounterEvent.Kind.allCases.map(\.rawValue)))
}
