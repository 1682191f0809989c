/// A pull parser that reads JSON as it arrives: a type reads itself member by member into its
/// own fields (`init(reading:)`), with no `Codable` and no intermediate tree. Input comes from
/// `more`, called whenever the bytes at hand run out, so an answer of megabytes is parsed while
/// the rest of it is still on the socket and is never held twice.
///
/// Hostile input is an error, never a crash or a hang: nesting is bounded (``maximumDepth``),
/// numbers are checked for range, strings for escapes and UTF-8 control characters.
public struct JSONReader {
    // Internal, not private: the number readers (JSONNumbers.swift) read them too.
    var buffer: [UInt8]
    var position = 0
    /// Bytes consumed and dropped from `buffer` so far, for error offsets.
    private var dropped = 0
    private var depth = 0
    private let more: () throws -> [UInt8]?
    private var atEnd = false
    /// Containers deeper than this are refused.
    private let maximumDepth: Int
    /// The last few long strings read (``readString()``): an answer repeats its footnote and
    /// labels thousands of times, and a repeat then shares the first one's storage instead of
    /// allocating its own.
    private var recentStrings: [String] = []
    private var nextRecent = 0

    /// How deep containers may nest unless a reader is told otherwise.
    public static let maximumDepth = 64

    /// Reads `bytes`, all there is; containers may nest `maximumDepth` deep.
    public init(_ bytes: [UInt8], maximumDepth: Int = JSONReader.maximumDepth) {
        buffer = bytes
        more = { nil }
        self.maximumDepth = maximumDepth
    }

    /// Reads what `more` returns, call by call; nil means the input ended.
    public init(more: @escaping () throws -> [UInt8]?) {
        buffer = []
        self.more = more
        maximumDepth = Self.maximumDepth
    }

    /// Where the reader is, in bytes from the start of the input.
    public var offset: Int { dropped + position }

    // MARK: Values

    /// Reads an object, calling `member` with each key; `member` must read that key's value.
    public mutating func readObject(_ member: (inout JSONReader, String) throws -> Void) throws {
        try expect(UInt8(ascii: "{"), "an object")
        try enter()
        if try peek() == UInt8(ascii: "}") {
            position += 1
        } else {
            while true {
                let key = try readString()
                try expect(UInt8(ascii: ":"), "':' after a key")
                try member(&self, key)
                let next = try next()
                if next == UInt8(ascii: "}") { break }
                guard next == UInt8(ascii: ",") else { throw error("expected ',' or '}' in an object") }
            }
        }
        depth -= 1
        compact()
    }

    /// Reads an array, calling `element` for each element; `element` must read it.
    public mutating func readArray(_ element: (inout JSONReader) throws -> Void) throws {
        try expect(UInt8(ascii: "["), "an array")
        try enter()
        if try peek() == UInt8(ascii: "]") {
            position += 1
        } else {
            while true {
                try element(&self)
                let next = try next()
                if next == UInt8(ascii: "]") { break }
                guard next == UInt8(ascii: ",") else { throw error("expected ',' or ']' in an array") }
                compact()
            }
        }
        depth -= 1
    }

    /// Consumes a `null` and returns true, or returns false with nothing consumed.
    public mutating func readNull() throws -> Bool {
        guard try peek() == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    public mutating func readBool() throws -> Bool {
        switch try peek() {
        case UInt8(ascii: "t"): try literal("true"); return true
        case UInt8(ascii: "f"): try literal("false"); return false
        default: throw error("expected true or false")
        }
    }

    public mutating func readString() throws -> String {
        try expect(UInt8(ascii: "\""), "a string")
        var start = position
        var escaped: [UInt8]?
        while true {
            if position == buffer.count {
                // The string continues in the next chunk: keep what was read so far.
                escaped = (escaped ?? []) + buffer[start...]
                guard try fill() else { throw error("the input ended inside a string") }
                start = position
                continue
            }
            let byte = buffer[position]
            if byte == UInt8(ascii: "\"") {
                let text: String
                if var escaped {
                    escaped += buffer[start..<position]
                    text = try Self.validated(escaped[...], offset: offset)
                } else {
                    text = try recent(buffer[start..<position])
                }
                position += 1
                return text
            }
            if byte < 0x20 { throw error("a control character inside a string") }
            if byte == UInt8(ascii: "\\") {
                escaped = (escaped ?? []) + buffer[start..<position]
                position += 1
                try readEscape(into: &escaped!)
                start = position
                continue
            }
            position += 1
        }
    }

    public mutating func readStrings() throws -> [String] {
        var values: [String] = []
        try readArray { values.append(try $0.readString()) }
        return values
    }

    /// Reads and drops one value of any kind (a member this reader does not know).
    public mutating func skipValue() throws {
        switch try peek() {
        case UInt8(ascii: "{"): try readObject { reader, _ in try reader.skipValue() }
        case UInt8(ascii: "["): try readArray { try $0.skipValue() }
        case UInt8(ascii: "\""): _ = try readString()
        case UInt8(ascii: "t"), UInt8(ascii: "f"): _ = try readBool()
        case UInt8(ascii: "n"): try literal("null")
        default: _ = try numberToken()
        }
    }

    /// After the value: only spaces up to the end of the line (or of the input). Returns false
    /// when the input ended before a newline.
    public mutating func readLineEnd() throws -> Bool {
        while true {
            if position == buffer.count, !(try fill()) { return false }
            let byte = buffer[position]
            position += 1
            if byte == UInt8(ascii: "\n") { return true }
            guard byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r") else {
                position -= 1
                throw error("unexpected data after the value")
            }
        }
    }

    /// Whether only white space is left of the input.
    public mutating func isAtEnd() throws -> Bool {
        do {
            _ = try peek()
            return false
        } catch {
            return position == buffer.count
        }
    }

    /// The next value's characters when it is a JSON number, for a reader with rules of its own
    /// for numbers (which integers it takes, say).
    public mutating func readNumberText() throws -> String {
        try numberToken()
    }

    /// The bytes read but not consumed (after the last value's line).
    public var remainder: ArraySlice<UInt8> { buffer[position...] }

    // MARK: Tokens

    /// The next byte that is not white space, not consumed.
    public mutating func peek() throws -> UInt8 {
        while true {
            if position == buffer.count, !(try fill()) { throw error("the input ended early") }
            let byte = buffer[position]
            guard byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
                    || byte == UInt8(ascii: "\n") else { return byte }
            position += 1
        }
    }

    private mutating func next() throws -> UInt8 {
        let byte = try peek()
        position += 1
        return byte
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws {
        guard try peek() == byte else { throw error("expected \(what)") }
        position += 1
    }

    private mutating func enter() throws {
        depth += 1
        guard depth <= maximumDepth else { throw error("nested deeper than \(maximumDepth)") }
    }

    private mutating func literal(_ word: StaticString) throws {
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        for byte in expected {
            if position == buffer.count, !(try fill()) { throw error("the input ended early") }
            guard buffer[position] == byte else { throw error("expected \(word)") }
            position += 1
        }
    }

    /// The characters of a number as text, at most 64 of them, checked against JSON's grammar.
    private mutating func readEscape(into out: inout [UInt8]) throws {
        if position == buffer.count, !(try fill()) { throw error("the input ended inside a string") }
        let byte = buffer[position]
        position += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(byte)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hexQuad()
            if (0xD800..<0xDC00).contains(scalar) {
                // A high surrogate must be followed by an escaped low one.
                try literal("\\u")
                let low = try hexQuad()
                guard (0xDC00..<0xE000).contains(low) else { throw error("an unpaired surrogate escape") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw error("an unpaired surrogate escape") }
            out.append(contentsOf: Array(String(Character(unicode)).utf8))
        default:
            throw error("an unknown escape \\\(Character(Unicode.Scalar(byte)))")
        }
    }

    private mutating func hexQuad() throws -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            if position == buffer.count, !(try fill()) { throw error("the input ended inside a string") }
            let byte = buffer[position]
            position += 1
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("a bad \\u escape")
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// ASCII, which is most of what the wire carries, needs no validating: the generic
    /// validation looked up type metadata for every string read.
    /// `bytes` as a string, the one read lately when it is one of them. Short strings are
    /// stored inline by Swift and never looked up.
    private mutating func recent(_ bytes: ArraySlice<UInt8>) throws -> String {
        guard bytes.count > 15 else { return try Self.validated(bytes, offset: offset) }
        // As buffers: a String's UTF8View compares through a generic iterator.
        for text in recentStrings where text.utf8.count == bytes.count {
            if text.utf8.withContiguousStorageIfAvailable({ s in bytes.withUnsafeBufferPointer { s.elementsEqual($0) } }) ?? false { return text }
        }
        let text = try Self.validated(bytes, offset: offset)
        if recentStrings.count < 8 {
            recentStrings.append(text)
        } else {
            recentStrings[nextRecent] = text
            nextRecent = (nextRecent + 1) % 8
        }
        return text
    }

    private static func validated(_ bytes: ArraySlice<UInt8>, offset: Int) throws -> String {
        if bytes.allSatisfy({ $0 < 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw JSONReadError("a string that is not UTF-8", offset: offset)
        }
        return text
    }

    // MARK: Input

    /// Appends the next chunk; false at the end of the input.
    mutating func fill() throws -> Bool {
        guard !atEnd else { return false }
        guard let chunk = try more(), !chunk.isEmpty else {
            atEnd = true
            return false
        }
        buffer += chunk
        return true
    }

    /// Drops consumed bytes once there are many, between values (no token spans the cut), and
    /// only once they are at least what is left: each drop moves the rest to the front, so
    /// dropping every 64 KB of a 93 MB answer held whole moved gigabytes (quadratic), where
    /// this moves fewer bytes than were read (linear).
    private mutating func compact() {
        guard position >= 1 << 16, position >= buffer.count - position else { return }
        buffer.removeSubrange(..<position)
        dropped += position
        position = 0
    }

    func error(_ message: String) -> JSONReadError {
        JSONReadError(message, offset: offset)
    }
}
