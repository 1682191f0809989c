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

    public static func error(_ message: String) { log(.error, message) }
    public static func warning(_ message: String) { log(.warning, message) }
    public static func notice(_ message: String) { log(.notice, message) }
}
