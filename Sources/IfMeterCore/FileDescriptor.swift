#if canImport(Glibc)
import Glibc
#endif

/// A file descriptor and the duty to close it: closed when the value ends (a thrown error, a
/// return, its owner's end), or at a chosen point by ``close()``. Not copyable, so no two
/// values close one descriptor, and none is used once it is closed.
public struct FileDescriptor: ~Copyable, Sendable {
    /// The descriptor, for the calls that take one; it stays this value's.
    public let rawValue: Int32

    /// Owns `rawValue`, a call's result: nil when it is negative (the call failed; `errno`
    /// still says why).
    public init?(adopting rawValue: Int32) {
        guard rawValue >= 0 else { return nil }
        self.rawValue = rawValue
    }

    /// Closes it now, where closing is a step of its own (before a rename, an unlock, a reopen).
    /// Never retried on `EINTR`: Linux has freed the descriptor by then, and a second close
    /// could close one another thread was just given.
    public consuming func close() {
        Glibc.close(rawValue)
        discard self
    }

    /// Gives the descriptor to something that closes it itself, unclosed.
    public consuming func release() -> Int32 {
        let rawValue = rawValue
        discard self
        return rawValue
    }

    deinit { Glibc.close(rawValue) }
}
