#if canImport(Glibc)
import Glibc
#endif

/// A Unix socket path as a `sockaddr_un`: one construction for the daemon's `bind`, its check
/// for a live socket, and every client's `connect`.
public struct UnixSocketAddress {
    public let path: String
    private var storage = sockaddr_un()

    /// The longest path `sun_path` holds (its last byte is the terminating NUL).
    public static let maximumPathLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// Nil when `path` is too long for a Unix socket.
    public init?(path: String) {
        let bytes = Array(path.utf8)
        guard bytes.count <= Self.maximumPathLength else { return nil }
        self.path = path
        storage.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &storage.sun_path) { $0.copyBytes(from: bytes + [0]) }
    }

    /// Calls `body` with the address as a `sockaddr` and its length, for `bind` or `connect`.
    public func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        withUnsafePointer(to: storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}
