import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// Human diagnostics on stderr, each line prefixed with its syslog priority as `sd-daemon.h`
/// defines (`<3>` error … `<7>` debug), so journald keeps the level. One line per thing worth
/// a person's attention, never one per sample.
public enum Diagnostics {
    public enum Level: Int32, Sendable {
        case error = 3, warning = 4, notice = 5, info = 6
    }

    public static func log(_ level: Level, _ message: String) {
        var line = "<\(level.rawValue)>ifmeterd: \(message)\n"
        // One write(2) per line, so concurrent writers never interleave.
        line.withUTF8 { bytes in _ = write(STDERR_FILENO, bytes.baseAddress, bytes.count) }
    }

    /// A line with structured fields (`KEY=value`, keys upper-case) for `journalctl KEY=value`:
    /// sent to the journal itself when stderr is the journal (systemd sets `JOURNAL_STREAM`),
    /// else the plain line on stderr.
    public static func log(_ level: Level, _ message: String, fields: [(String, String)]) {
        guard getenv("JOURNAL_STREAM") != nil else { return log(level, message) }
        let entries = ["MESSAGE=ifmeterd: \(message)", "PRIORITY=\(level.rawValue)", "SYSLOG_IDENTIFIER=ifmeterd"]
            + fields.map { "\($0.0)=\($0.1)" }
        // One buffer holding every entry, so each iovec points into memory alive for the call.
        var bytes: [UInt8] = []
        var ranges: [Range<Int>] = []
        for entry in entries {
            let start = bytes.count
            bytes += entry.utf8
            ranges.append(start..<bytes.count)
        }
        let sent = bytes.withUnsafeMutableBytes { buffer -> Int32 in
            var vectors = ranges.map { iovec(iov_base: buffer.baseAddress! + $0.lowerBound, iov_len: $0.count) }
            return sd_journal_sendv(&vectors, Int32(vectors.count))
        }
        if sent < 0 { log(level, message) }
    }

    public static func error(_ message: String) { log(.error, message) }
    public static func warning(_ message: String) { log(.warning, message) }
    public static func notice(_ message: String) { log(.notice, message) }
}
