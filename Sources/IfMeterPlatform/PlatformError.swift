import IfMeterCore
#if canImport(Glibc)
import Glibc
#endif

/// Why the daemon's platform (its loop, threads, sockets, HTTP listener) or the daemon itself
/// cannot start or go on, in words a user can act on, with the failing call and errno when
/// there is one, and what kind of failure it is: the kind is the exit status
/// (sysexits.h), so a script or systemd (`RestartPreventExitStatus=`) can tell a bad
/// configuration from a busy database.
public struct PlatformError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Int32, Hashable, Sendable {
        /// EX_USAGE: a bad command line.
        case usage = 64
        /// EX_DATAERR: the database is not ifmeter's, is corrupt, or is from a newer version.
        case dataError = 65
        /// EX_UNAVAILABLE: something it needs is held or missing (another ifmeterd on the
        /// database or socket, no netlink).
        case unavailable = 69
        /// EX_SOFTWARE: a failure that is ifmeterd's own.
        case software = 70
        /// EX_OSERR: a system call that should not fail did.
        case osError = 71
        /// EX_CANTCREAT: a directory, socket or file it must create cannot be.
        case cannotCreate = 73
        /// EX_IOERR: reading or writing the disk failed.
        case ioError = 74
        /// EX_NOPERM: permission denied on something it must use.
        case noPermission = 77
        /// EX_CONFIG: the config file, or a directory or socket it is pointed at, is unusable.
        case configuration = 78
    }

    public var kind: Kind
    public var message: String
    /// The failing system call, when there is one.
    public var call: String?
    public var errno: Int32?

    public init(_ kind: Kind, _ message: String, call: String? = nil, errno: Int32? = nil) {
        self.kind = kind
        self.message = message
        self.call = call
        self.errno = errno
    }

    public var description: String { message }

    /// The process exit status for this error.
    public var exitStatus: Int32 { kind.rawValue }

    /// A failed system call: its name and errno ("sd_event_new failed: …").
    public static func system(_ call: String, _ code: Int32, kind: Kind = .osError) -> PlatformError {
        PlatformError(kind, "\(call) failed: \(Errno(code).description)", call: call, errno: code)
    }
}
