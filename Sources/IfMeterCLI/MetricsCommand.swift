import IfMeterCore
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// `ifmeter metrics`: the exposition `/metrics` serves, on stdout or — with `--textfile DIR` —
/// as `DIR/ifmeter.prom` for node_exporter's textfile collector, replaced atomically.
struct MetricsCommand: Subcommand {
    static let name = "metrics"
    static let summary = "the Prometheus exposition /metrics serves; --textfile DIR for node_exporter"
    static let usage = "ifmeter metrics [--openmetrics] [--textfile DIR]"
    static let about = """
        The Prometheus metrics ifmeterd serves on /metrics (docs/METRICS.md): continuous
        per-interface totals across counter resets, re-creation, restarts and reboots.
        Answered while the daemon is still loading too (ifmeter_up 0).
        """
    static let openMetrics = OptionSpec(names: ["--openmetrics"], help: "OpenMetrics 1.0 instead of the text format 0.0.4")
    static let textfile = OptionSpec(
        names: ["--textfile"], value: "DIR",
        help: "write DIR/ifmeter.prom for node_exporter's textfile collector\n(--collector.textfile.directory=DIR), replaced atomically;\nwithout the process_* metrics node_exporter has itself",
        completion: .directories)
    static let options = [openMetrics, textfile]

    /// The file node_exporter's textfile collector reads (it reads `*.prom`).
    static let textfileName = "ifmeter.prom"

    var openMetrics: Bool
    var textfile: String?

    init(_ parsed: ParsedArguments) {
        openMetrics = parsed.isSet(Self.openMetrics)
        textfile = parsed.value(Self.textfile)
    }

    // Answered while the daemon is still loading too (`ifmeter_up 0`), so no Session.
    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let socketCandidates = context.socketCandidates
        guard let path = socketCandidates.first(where: exists) else {
            throw CLIError(.unavailable, DaemonClient.notRunning(socketCandidates.joined(separator: " or ")))
        }
        let client = try DaemonClient(path: path)
        // A textfile must not carry process_* metrics: node_exporter reports its own process
        // under those names and would refuse the duplicates.
        let result = try client.call(
            MetricsRequest(format: openMetrics ? .openmetrics : .prometheus, process: textfile == nil),
            reading: MetricsResult.self)
        guard let textfile else {
            context.output.write(result.text)
            return 0
        }
        try Self.writeAtomically(result.text, directory: textfile)
        return 0
    }

    /// Writes `DIR/.ifmeter.prom.PID` (a name the collector skips: it reads `*.prom` only),
    /// syncs it, and renames it over `DIR/ifmeter.prom`, so a reader sees the old file or the
    /// new one, never a part.
    static func writeAtomically(_ text: String, directory: String) throws(CLIError) {
        let target = directory + "/" + textfileName
        let temporary = directory + "/.\(textfileName).\(getpid())"
        guard let fd = FileDescriptor(adopting: open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)) else {
            let code = errno
            throw CLIError(code == ENOENT ? .noInput : code == EACCES ? .noPermission : .failure,
                           "cannot write \(temporary): \(Errno(code).description)")
        }
        var bytes = Array(text.utf8)
        var offset = 0
        var failure: Int32?
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { raw in
                retryingEINTR { write(fd.rawValue, raw.baseAddress! + offset, raw.count - offset) }
            }
            if written < 0 {
                failure = errno
                break
            }
            offset += written
        }
        if failure == nil && fsync(fd.rawValue) != 0 { failure = errno }
        fd.close()
        bytes = []
        if failure == nil && rename(temporary, target) != 0 { failure = errno }
        if let failure {
            unlink(temporary)
            throw CLIError(failure == EACCES ? .noPermission : .failure,
                           "cannot write \(target): \(Errno(failure).description)")
        }
    }
}
