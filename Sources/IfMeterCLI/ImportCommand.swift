import IfMeterCore
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// `ifmeter import vnstat [PATH]`: the daemon brings vnStat's history into its store (admin
/// only: the same peer check as `forget`); this prints what came in per interface.
enum ImportCommand {
    static let defaultVnStatDatabase = "/var/lib/vnstat/vnstat.db"

    static func run(_ invocation: Invocation, socketCandidates: [String]) throws(CLIError) -> ImportResult {
        let given = invocation.importPath ?? defaultVnStatDatabase
        // The daemon runs elsewhere: it gets the absolute path, and a missing file is said here.
        var resolved = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard realpath(given, &resolved) != nil else {
            throw CLIError(.noInput, "cannot read \(given): \(Errno.current.description)")
        }
        let session = try Session(socketCandidates: socketCandidates)
        var request = Request(.importHistory)
        request.source = "vnstat"
        request.path = String(decoding: resolved.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        request.dryRun = invocation.dryRun
        request.utc = invocation.utc
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
