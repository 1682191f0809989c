/// What the HTTP listener's answers may cost the daemon at once, whoever asks: every HTTP
/// client is anonymous, so together they are bounded like one tenant of the socket.
///
/// - `makingLimit` answers are made off the loop at once (store queries, pages); a request
///   for another waits, its connection suspended, in the order requests came.
/// - While libmicrohttpd holds `heldLimit` bytes or more of answers not yet sent (slow readers
///   hold theirs), no new answer is started either. Bytes several answers share (one
///   exposition sent to many scrapers) count once.
///
/// Only answers made off the loop wait: `/metrics`, errors and static assets are answered at
/// once from what the daemon already holds. So the most the listener holds is `heldLimit`,
/// plus `makingLimit` answers, plus one exposition.
public struct HTTPAnswerBudget: Equatable {
    public var heldLimit: Int
    public var makingLimit: Int
    /// Bytes of answers libmicrohttpd holds unsent.
    public private(set) var held = 0
    /// Answers being made off the loop.
    public private(set) var making = 0
    /// Connections waiting to start theirs, in the order they asked.
    public private(set) var waiting: [Int32] = []

    public init(heldLimit: Int = 16 << 20, makingLimit: Int = 2) {
        (self.heldLimit, self.makingLimit) = (heldLimit, makingLimit)
    }

    private var hasRoom: Bool { making < makingLimit && held < heldLimit }

    /// Whether connection `fd` may start making its answer now (it then counts as making).
    /// If not, it waits behind the others, and is returned by the call that makes room for it.
    public mutating func admit(_ fd: Int32) -> Bool {
        guard waiting.isEmpty, hasRoom else {
            if !waiting.contains(fd) { waiting.append(fd) }
            return false
        }
        making += 1
        return true
    }

    /// An answer being made came back (sent, or dropped with its connection). Returns the
    /// connections that may start theirs now, each counted as making.
    public mutating func made() -> [Int32] {
        making -= 1
        return admitWaiting()
    }

    /// libmicrohttpd took (positive) or let go of (negative) `delta` bytes of answers.
    /// Returns the connections that may start theirs now, each counted as making.
    public mutating func heldChanged(by delta: Int) -> [Int32] {
        held += delta
        return admitWaiting()
    }

    /// Connection `fd` closed: it waits for nothing any more.
    public mutating func closed(_ fd: Int32) {
        waiting.removeAll { $0 == fd }
    }

    private mutating func admitWaiting() -> [Int32] {
        var admitted: [Int32] = []
        while hasRoom, !waiting.isEmpty {
            admitted.append(waiting.removeFirst())
            making += 1
        }
        return admitted
    }
}
