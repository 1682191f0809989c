/// Splits a byte stream into lines, with a limit on line length: a line that grows past it is
/// reported once and discarded up to its newline, so the connection stays usable.
public struct LineBuffer: Sendable {
    public enum Item: Hashable, Sendable {
        case line([UInt8])
        /// A line longer than the limit was dropped.
        case tooLong
    }

    public let maximumLength: Int
    private var pending: [UInt8] = []
    private var discarding = false

    public init(maximumLength: Int) {
        self.maximumLength = maximumLength
    }

    /// Bytes held for an unfinished line.
    public var buffered: Int { pending.count }

    /// Adds received bytes; returns the complete lines (and overlong-line notices) in order.
    public mutating func append(_ bytes: some Collection<UInt8>) -> [Item] {
        var items: [Item] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                if discarding {
                    discarding = false
                } else {
                    if pending.last == UInt8(ascii: "\r") { pending.removeLast() }
                    if !pending.isEmpty { items.append(.line(pending)) }
                }
                pending.removeAll(keepingCapacity: true)
            } else if !discarding {
                pending.append(byte)
                if pending.count > maximumLength {
                    items.append(.tooLong)
                    pending.removeAll(keepingCapacity: true)
                    discarding = true
                }
            }
        }
        return items
    }
}
