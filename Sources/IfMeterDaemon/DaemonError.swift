#if canImport(Glibc)
import Glibc
#endif

/// Why the daemon cannot start or go on, in words a user can act on.
public struct DaemonError: Error, Hashable, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }

    /// A failed system call: its name and errno.
    static func system(_ call: String, _ code: Int32) -> DaemonError {
        DaemonError("\(call) failed: \(String(cString: strerror(code)))")
    }
}
