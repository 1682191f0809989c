/// Exit statuses of `ifmeter` (docs/CLI.md). `check` has its own, Nagios-style (``CheckStatus``).
public enum ExitStatus: Int32, Sendable {
    case ok = 0
    /// Something went wrong that is none of the below (a database error the daemon reported).
    case failure = 1
    /// Bad arguments (sysexits.h `EX_USAGE`).
    case usage = 64
    /// A file given does not exist or cannot be read (`EX_NOINPUT`).
    case noInput = 66
    /// ifmeterd is not running: no socket, or nobody listening (`EX_UNAVAILABLE`).
    case unavailable = 69
    /// ifmeterd failed to answer: a database error it reported, or a request it could not serve
    /// (`EX_SOFTWARE`).
    case daemonFailed = 70
    /// ifmeterd refused the connection: it serves as many clients as it may, or this user has
    /// as many connections as one user may (`too_many_clients`); try again when some have closed.
    case busy = 73
    /// The connection broke before the answer was complete: closed, timed out, or dropped by
    /// the daemon for idling or not reading (`EX_IOERR`).
    case connectionLost = 74
    /// ifmeterd is starting and has no figures yet (`EX_TEMPFAIL`): ask again shortly.
    case starting = 75
    /// ifmeterd speaks another protocol version, or answered something unreadable (`EX_PROTOCOL`).
    case protocolMismatch = 76
    /// The socket (or an admin command) is not allowed to this user (`EX_NOPERM`).
    case noPermission = 77
}

/// A failure to report on stderr with the exit status it maps to.
public struct CLIError: Error, Sendable, CustomStringConvertible {
    public var status: ExitStatus
    public var message: String

    public init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    public var description: String { message }

    static func usage(_ message: String) -> CLIError { CLIError(.usage, message) }
}
