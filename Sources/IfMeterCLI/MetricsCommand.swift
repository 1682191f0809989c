import IfMeterCore
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// `ifmeter metrics`: the exposition `/metrics` serves, on stdout or — with `--textfile DIR` —
/// as `DIR/ifmeter.prom` for node_exporter's textfile collector, replaced atomically.
enum MetricsCommand {
    /// The file node_exporter's textfile collector reads (it reads `*.prom`).
    static let textfileName = "ifmeter.prom"

    static func run(_ invocation: Invocation, socketCandidates: [String], output: Output) throws(CLIError) {
        guard let path = socketCandidates.first(where: exists) else {
            throw CLIError(.unavailable, DaemonClient.notRunning(socketCandidates.joined(separator: " or ")))
        }
        let client = try DaemonClient(path: path)
        // A textfile must not carry process_* metrics: node_exporter reports its own process
        // under those names and would refuse the duplicates.
        let result = try client.call(
            Request(.metrics, format: invocation.openMetrics ? "openmetrics" : "prometheus",
                    process: invocation.textfile == nil),
            reading: MetricsResult.self)
        guard let directory = invocation.textfile else {
            output.write(result.text)
            return
        }
        try writeAtomically(result.text, directory: directory)
    }

    /// Writes `DIR/.ifmeter.prom.PID` (a name the collector skips: it reads `*.prom` only),
    /// syncs it, and renames it over `DIR/ifmeter.prom`, so a reader sees the old file or the
    /// new one, never a part.
    static func writeAtomically(_ text: String, directory: String) throws(CLIError) {
        let target = directory + "/" + textfileName
        let temporary = directory + "/.\(textfileName).\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else {
            let code = errno
            throw CLIError(code == ENOENT ? .noInput : code == EACCES ? .noPermission : .failure,
                           "cannot write \(temporary): \(Errno(code).description)")
        }
        var bytes = Array(text.utf8)
        var offset = 0
        var failure: Int32?
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { raw in
                retryingEINTR { write(fd, raw.baseAddress! + offset, raw.count - offset) }
            }
            if written < 0 {
                failure = errno
                break
            }
            offset += written
        }
        if failure == nil && fsync(fd) != 0 { failure = errno }
        close(fd)
        bytes = []
        if failure == nil && rename(temporary, target) != 0 { failure = errno }
        if let failure {
            unlink(temporary)
            throw CLIError(failure == EACCES ? .noPermission : .failure,
                           "cannot write \(target): \(Errno(failure).description)")
        }
    }
}
