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
    /// Takes a concrete slice and moves whole runs between newlines: a generic byte-by-byte
    /// loop was the largest cost of reading a request.
    public mutating func append(_ bytes: ArraySlice<UInt8>) -> [Item] {
        var items: [Item] = []
        var rest = bytes
        while !rest.isEmpty {
            let newline = rest.firstIndex(of: UInt8(ascii: "\n"))
            let run = rest[..<(newline ?? rest.endIndex)]
            if !discarding {
                if pending.count + run.count > maximumLength {
                    items.append(.tooLong)
                    pending.removeAll(keepingCapacity: true)
                    discarding = true
                } else {
                    pending += run
                }
            }
            guard let newline else { break }
            if discarding {
                discarding = false
            } else {
                if pending.last == UInt8(ascii: "\r") { pending.removeLast() }
                if !pending.isEmpty { items.append(.line(pending)) }
            }
            pending.removeAll(keepingCapacity: true)
            rest = rest[(newline + 1)...]
        }
        return items
    }

    /// ``append(_:)-(ArraySlice<UInt8>)`` of a whole array.
    public mutating func append(_ bytes: [UInt8]) -> [Item] {
        append(bytes[...])
    }
}
