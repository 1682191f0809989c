import IfMeterPresentation
import IfMeterCore
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// `ifmeter import vnstat [PATH]`: the daemon brings vnStat's history into its store (admin
/// only: the same peer check as `forget`); this prints what came in per interface.
struct ImportCommand: Subcommand {
    static let name = "import"
    static let summary = "bring a vnStat database's history into ifmeter (admin)"
    static let usage = "ifmeter import vnstat [PATH] [--dry-run] [--utc]"
    static let about = """
        Brings each interface's history from a vnStat 2.x database (default
        /var/lib/vnstat/vnstat.db, opened read-only: a running vnstatd is not disturbed)
        into ifmeterd's store: every resolution into the same one, and vnStat's all-time
        total. Traffic vnStat counted before ifmeter first saw an interface is added to
        ifmeter's buckets and total; where both counted, ifmeter's own count wins and
        vnStat's buckets for that time are left out (reported). A second import of the
        same database adds nothing. Imported figures are labelled imported-vnstat (marked v).
        Root, ifmeterd's user or admin_group only.
        """
    static let dryRun = OptionSpec(names: ["--dry-run"], help: "print what would be imported; change nothing")
    static let utc = OptionSpec(names: ["--utc"], help: "vnStat ran with UseUTC 1 (its dates are UTC, not local time)")
    static let options = [dryRun, utc]
    static let arguments = [ArgumentSpec(name: "SOURCE", choices: ["vnstat"]), ArgumentSpec(name: "PATH", optional: true)]

    static let defaultVnStatDatabase = "/var/lib/vnstat/vnstat.db"

    var path: String?
    var dryRun: Bool
    var utc: Bool

    init(_ parsed: ParsedArguments) {
        path = parsed.arguments.dropFirst().first
        dryRun = parsed.isSet(Self.dryRun)
        utc = parsed.isSet(Self.utc)
    }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let result = try fetch(socketCandidates: context.socketCandidates)
        context.write(result) { Self.render($0, units: context.units) }
        return 0
    }

    func fetch(socketCandidates: [String]) throws(CLIError) -> ImportResult {
        let given = path ?? Self.defaultVnStatDatabase
        // The daemon runs elsewhere: it gets the absolute path, and a missing file is said here.
        var resolved = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard realpath(given, &resolved) != nil else {
            throw CLIError(.noInput, "cannot read \(given): \(Errno.current.description)")
        }
        let session = try Session(socketCandidates: socketCandidates)
        let request = ImportRequest(
            vnStatPath: String(decoding: resolved.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self), dryRun: dryRun, utc: utc)
        return try session.client.call(request, reading: ImportResult.self)
    }

    static func render(_ result: ImportResult, units: Units) -> String {
        var table = Table([.left, .right, .right, .right, .right, .right, .right, .left])
        table.add(["interface", "5min", "hour", "day", "month", "year", "total added", ""])
        for interface in result.interfaces {
            let periods = ["5min", "hour", "day", "month", "year"].map { String(interface.buckets[$0] ?? 0) }
            var notes: [String] = []
            if interface.alreadyImported > 0 { notes.append("\(interface.alreadyImported) already imported") }
            if interface.overlapSkipped > 0 { notes.append("\(interface.overlapSkipped) left out: ifmeter counted then itself") }
            table.add([interface.name] + periods
                      + [units.bytes(interface.totalRxBytes &+ interface.totalTxBytes), notes.joined(separator: "; ")])
        }
        let new = result.interfaces.reduce(0) { $0 + $1.buckets.values.reduce(0, +) }
        let verb = result.dryRun ? "would import" : "imported"
        return "From \(result.path) ifmeter \(verb) \(new) new buckets"
            + (result.dryRun ? " (dry run: nothing changed)" : "") + ":\n" + table.render()
            + "Imported figures are labelled imported-vnstat (marked v): vnStat's own counting.\n"
    }
}
