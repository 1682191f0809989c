#if canImport(Glibc)
import Glibc
#endif

/// An errno value, and the one place one is put into words: `Errno(EACCES)` reads
/// "Permission denied" wherever a message names a failed call.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    public var code: Int32

    public init(_ code: Int32) { self.code = code }

    /// The calling thread's errno now.
    public static var current: Errno { Errno(errno) }

    public var description: String { String(cString: strerror(code)) }
}

/// Calls `body` until it returns something other than a failure with `EINTR`, and gives its
/// result or the errno it failed with (swift-system's `valueOrErrno(retryOnInterrupt:)`): the
/// one place an interrupted call is retried.
public func valueOrErrno<I: FixedWidthInteger>(
    retryOnInterrupt: Bool = true, _ body: () -> I
) -> Result<I, Errno> {
    while true {
        let result = body()
        if result >= 0 { return .success(result) }
        let error = errno
        if error == EINTR && retryOnInterrupt { continue }
        return .failure(Errno(error))
    }
}

/// `body`'s raw result, retried while it fails with `EINTR`; on failure `errno` still holds
/// why, for callers that switch on it.
public func retryingEINTR<I: FixedWidthInteger>(_ body: () -> I) -> I {
    while true {
        let result = body()
        if result >= 0 || errno != EINTR { return result }
    }
}
