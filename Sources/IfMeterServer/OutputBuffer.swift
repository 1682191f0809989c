/// Bytes waiting to be written to a client: appended whole, sent from the front. What was sent
/// is skipped by an offset rather than removed: removing the front of a large answer after
/// each partial write moved the rest of it every time.
public struct OutputBuffer {
    private var bytes: [UInt8] = []
    private var sent = 0
    /// Whether the last byte sent ended a line (the sent front may be gone already).
    private var sentEndsLine = true

    public var isEmpty: Bool { sent == bytes.count }

    /// Bytes not yet sent.
    public var count: Int { bytes.count - sent }

    /// Queues `more` after what is waiting; when nothing is, takes the array as it is.
    public mutating func append(_ more: [UInt8]) {
        if isEmpty {
            (bytes, sent) = (more, 0)
        } else {
            bytes += more
        }
    }

    /// Calls `body` with the bytes not yet sent.
    public func withUnsentBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[sent...])) }
    }

    /// Marks the first `count` unsent bytes sent. The sent front is dropped once it is most of
    /// the storage, so a client that keeps receiving (a watch) never grows it without bound.
    public mutating func consume(_ count: Int) {
        if count > 0 { sentEndsLine = bytes[sent + count - 1] == Self.newline }
        sent += count
        if sent == bytes.count {
            removeAll()
        } else if sent > bytes.count / 2 {
            bytes.removeFirst(sent)
            sent = 0
        }
    }

    /// Drops every unsent line but the rest of one already partly sent, so that what is
    /// appended next starts a line of its own and the peer never reads a torn line.
    public mutating func dropUnsentLines() {
        let keep = sentEndsLine ? sent : (bytes[sent...].firstIndex(of: Self.newline).map { $0 + 1 } ?? bytes.count)
        bytes.removeSubrange(keep...)
        if sent == bytes.count { removeAll() }
    }

    public mutating func removeAll() {
        (bytes, sent, sentEndsLine) = ([], 0, true)
    }

    private static let newline = UInt8(ascii: "\n")
}
