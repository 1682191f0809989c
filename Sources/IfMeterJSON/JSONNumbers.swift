/// Numbers: a plain integer (what the wire's counters, times and ids are) read straight from
/// the bytes at hand; anything else — a fraction, an exponent, a number split between two
/// chunks, a malformed one — through its text, checked against RFC 8259.
extension JSONReader {
    public mutating func readUInt64() throws -> UInt64 {
        if let (negative, magnitude, end) = try plainInteger(), !negative {
            position = end
            return magnitude
        }
        let text = try numberToken()
        guard let value = UInt64(text) else { throw error("expected an unsigned integer, got \(text)") }
        return value
    }

    public mutating func readInt64() throws -> Int64 {
        if let (negative, magnitude, end) = try plainInteger() {
            if !negative, let value = Int64(exactly: magnitude) {
                position = end
                return value
            }
            if negative, magnitude <= Int64.min.magnitude {
                position = end
                return Int64(truncatingIfNeeded: 0 &- magnitude)
            }
        }
        let text = try numberToken()
        guard let value = Int64(text) else { throw error("expected an integer, got \(text)") }
        return value
    }

    public mutating func readInt() throws -> Int {
        Int(try readInt64())
    }

    public mutating func readInt32() throws -> Int32 {
        let value = try readInt64()
        guard let narrow = Int32(exactly: value) else { throw error("\(value) is out of range") }
        return narrow
    }

    /// A number, or `null` (which ``JSONWriter`` writes for a non-finite double) as NaN.
    public mutating func readDouble() throws -> Double {
        if try readNull() { return .nan }
        // Below 2⁵³ an integer is exactly a double.
        if let (negative, magnitude, end) = try plainInteger(), magnitude < 1 << 53 {
            position = end
            return negative ? -Double(magnitude) : Double(magnitude)
        }
        let text = try numberToken()
        guard let value = Double(text), value.isFinite else { throw error("expected a number, got \(text)") }
        return value
    }

    /// An integer without fraction or exponent in the bytes at hand, and where it ends; nothing
    /// is consumed (the caller moves to `end` if the value fits what it reads, and otherwise
    /// reads the token again, to say what is wrong). Nil for any other number or anything that
    /// is not one, for one that reaches the end of the bytes at hand (it may go on in the next
    /// chunk), and past 2⁶⁴ − 1.
    private mutating func plainInteger() throws -> (negative: Bool, magnitude: UInt64, end: Int)? {
        _ = try peek()
        var index = position
        let end = buffer.count
        let negative = buffer[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        let first = index
        var value: UInt64 = 0
        while index < end {
            let digit = buffer[index] &- UInt8(ascii: "0")
            guard digit < 10 else { break }
            let (tens, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = tens.addingReportingOverflow(UInt64(digit))
            guard !overflow, !carry else { return nil }
            value = sum
            index += 1
        }
        guard index < end, index > first, buffer[first] != UInt8(ascii: "0") || index == first + 1 else { return nil }
        switch buffer[index] {
        case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "+"), UInt8(ascii: "-"): return nil
        default: return (negative, value, index)
        }
    }

    mutating func numberToken() throws -> String {
        let first = try peek()
        guard first == UInt8(ascii: "-") || (first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9")) else {
            throw error("expected a value")
        }
        var token: [UInt8] = []
        while true {
            if position == buffer.count, !(try fill()) { break }
            let byte = buffer[position]
            guard (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
                    || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e")
                    || byte == UInt8(ascii: "E") else { break }
            token.append(byte)
            position += 1
            guard token.count <= 64 else { throw error("a number longer than 64 characters") }
        }
        guard Self.isJSONNumber(token) else { throw error("not a JSON number") }
        return String(decoding: token, as: UTF8.self)
    }

    /// RFC 8259's number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`. The loose scan
    /// above only finds where the token ends; `-`, `1.` and `1e` end there too.
    public static func isJSONNumber(_ token: [UInt8]) -> Bool {
        var index = token.startIndex
        func digits() -> Int {
            let start = index
            while index < token.endIndex, token[index] >= UInt8(ascii: "0"), token[index] <= UInt8(ascii: "9") { index += 1 }
            return index - start
        }
        if index < token.endIndex, token[index] == UInt8(ascii: "-") { index += 1 }
        let integerStart = index
        guard digits() > 0, token[integerStart] != UInt8(ascii: "0") || index - integerStart == 1 else { return false }
        if index < token.endIndex, token[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { return false }
        }
        if index < token.endIndex, token[index] == UInt8(ascii: "e") || token[index] == UInt8(ascii: "E") {
            index += 1
            if index < token.endIndex, token[index] == UInt8(ascii: "+") || token[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { return false }
        }
        return index == token.endIndex
    }
}
