import IfMeterPlatform
import IfMeterWire
import IfMeterCore
#if canImport(Glibc)
import Glibc
#endif

/// What bounds the server: its configured limits, its work per loop turn, and one client's state.
extension Server {
    /// Requests taken from one client per loop turn; the rest wait behind other ready work.
    public static let requestsPerTurn = 8
    /// Bytes read from one client per loop turn.
    public static let readSize = 16384
    /// Connections accepted per loop turn.
    public static let acceptsPerTurn = 64

    public struct Limits: Hashable, Sendable {
        public var maxLineLength: Int
        public var admission: Admission.Limits
        /// Unread output a watcher may have queued before it is cut off.
        public var clientBuffer: Int
        /// Unread answers one uid's connections may hold before its requests for large answers
        /// wait (``UIDShares``).
        public var unreadPerUID: Int
        /// Seconds without a complete request; watchers are exempt.
        public var idleTimeout: Duration

        public init(maxLineLength: Int, admission: Admission.Limits, clientBuffer: Int, unreadPerUID: Int, idleTimeout: Duration) {
            (self.maxLineLength, self.admission, self.clientBuffer) = (maxLineLength, admission, clientBuffer)
            (self.unreadPerUID, self.idleTimeout) = (unreadPerUID, idleTimeout)
        }
    }

    /// One connected peer.
    public final class Client {
        /// Its connection's descriptor, by which the server knows it.
        public let fd: Int32
        /// Owns ``fd`` until ``Server/close(_:)`` takes and closes it.
        var connection: FileDescriptor?
        /// From `SO_PEERCRED` / `SO_PEERGROUPS` at accept time.
        public let uid: uid_t
        public let groups: [gid_t]
        public let isAdmin: Bool
        var input: LineBuffer
        /// Lines read but not yet handled.
        var queued: [LineBuffer.Item] = []
        var output = OutputBuffer()
        var source: EventSource?
        /// When the last complete request arrived (or the connection did).
        var lastActivity: UInt64
        /// The `id` of this client's `watch` request, while it watches.
        public var watchID: RequestID??
        /// Set while the daemon owes this client an answer it gives later (`sample`): the
        /// client's next request waits, so answers keep the order of requests.
        var awaitingAnswer = false
        /// A request waiting for its uid's share (``UIDShares``); the lines after it wait too.
        var parked: RequestLine?
        /// The cost of the request being answered, as the policy gave it.
        var answering: RequestCost = []
        public var isOpen: Bool { connection != nil }
        /// Set when the client was cut off (``cutOff(_:_:)``): only its notice is still being
        /// written, and the connection closes once it is, or at this instant.
        var closingAt: UInt64?

        init(_ connection: consuming FileDescriptor, uid: uid_t, groups: [gid_t], isAdmin: Bool, maxLineLength: Int, now: UInt64) {
            fd = connection.rawValue
            self.connection = consume connection
            self.uid = uid
            self.groups = groups
            self.isAdmin = isAdmin
            input = LineBuffer(maximumLength: maxLineLength)
            lastActivity = now
        }
    }
}
