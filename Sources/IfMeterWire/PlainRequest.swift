extension Request {
    /// The request in `line` when it is a flat object of plain members — what clients send for
    /// every command but `query` — read byte by byte without `Codable`; nil for anything else:
    /// nested values, escapes, non-ASCII text, fractions, exponents, signs, `null`, time strings,
    /// unknown or repeated keys, anything malformed. ``parse(_:)`` hands those to `JSONDecoder`,
    /// so every error message and every unusual form is still its. A plain request reads to
    /// exactly what `JSONDecoder` makes of it (the `request` fuzz target checks).
    public static func plain(_ line: some Collection<UInt8>) -> Request? {
        var scanner = PlainScanner(bytes: Array(line))
        return scanner.request()
    }
}

/// The scanner behind ``Request/plain(_:)``: every method returns nil (give up) rather than
/// throw, since giving up only means the general decoder takes the line.
private struct PlainScanner {
    let bytes: [UInt8]
    var position = 0

    /// A plain value: a string without escapes, a small non-negative integer, or a boolean.
    enum Value {
        case string(String)
        case integer(Int64)
        case bool(Bool)
    }

    mutating func request() -> Request? {
        var request = Request(v: nil, cmd: nil)
        var seen = Set<String>()
        skipSpace()
        guard take(UInt8(ascii: "{")) else { return nil }
        skipSpace()
        if !take(UInt8(ascii: "}")) {
            repeat {
                skipSpace()
                guard let key = string(), seen.insert(key).inserted else { return nil }
                skipSpace()
                guard take(UInt8(ascii: ":")) else { return nil }
                skipSpace()
                guard let value = value(), Self.assign(value, to: key, in: &request) else { return nil }
                skipSpace()
            } while take(UInt8(ascii: ","))
            guard take(UInt8(ascii: "}")) else { return nil }
        }
        skipSpace()
        return position == bytes.count ? request : nil
    }

    /// Sets the member `key` when `value` has the type `JSONDecoder` would read it as.
    private static func assign(_ value: Value, to key: String, in request: inout Request) -> Bool {
        switch (key, value) {
        case ("v", .integer(let number)): request.v = Int(number)
        case ("limit", .integer(let number)): request.limit = Int(number)
        case ("id", .integer(let number)): request.id = .number(number)
        case ("id", .string(let text)): request.id = .string(text)
        case ("from", .integer(let number)): request.from = TimeArgument(seconds: Double(number))
        case ("to", .integer(let number)): request.to = TimeArgument(seconds: Double(number))
        case ("cmd", .string(let text)): request.cmd = text
        case ("interface", .string(let text)): request.interface = text
        case ("class", .string(let text)): request.class = text
        case ("period", .string(let text)): request.period = text
        case ("kind", .string(let text)): request.kind = text
        case ("format", .string(let text)): request.format = text
        case ("source", .string(let text)): request.source = text
        case ("path", .string(let text)): request.path = text
        case ("select", .string(let text)): request.select = text
        case ("projection", .bool(let flag)): request.projection = flag
        case ("process", .bool(let flag)): request.process = flag
        case ("dry_run", .bool(let flag)): request.dryRun = flag
        case ("utc", .bool(let flag)): request.utc = flag
        case ("sum", .bool(let flag)): request.sum = flag
        default: return false
        }
        return true
    }

    private mutating func value() -> Value? {
        guard position < bytes.count else { return nil }
        switch bytes[position] {
        case UInt8(ascii: "\""): return string().map(Value.string)
        case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
        case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
        default: return integer().map(Value.integer)
        }
    }

    /// Printable ASCII between quotes, no backslash: the text is the bytes themselves.
    private mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = position
        while position < bytes.count, bytes[position] != UInt8(ascii: "\"") {
            guard (0x20..<0x7F).contains(bytes[position]), bytes[position] != UInt8(ascii: "\\") else { return nil }
            position += 1
        }
        guard position < bytes.count else { return nil }
        defer { position += 1 }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    /// 1 to 15 digits without a leading zero (exact as a Double too), not followed by a
    /// fraction or an exponent.
    private mutating func integer() -> Int64? {
        let start = position
        while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
            position += 1
        }
        let digits = bytes[start..<position]
        guard (1...15).contains(digits.count), digits.count == 1 || digits.first != UInt8(ascii: "0") else { return nil }
        if position < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[position]) {
            return nil
        }
        return digits.reduce(0) { $0 * 10 + Int64($1 - UInt8(ascii: "0")) }
    }

    private mutating func literal(_ word: String) -> Bool {
        let text = word.utf8
        guard bytes.count - position >= text.count, bytes[position..<(position + text.count)].elementsEqual(text) else {
            return false
        }
        position += text.count
        return true
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    /// JSON's whitespace: space, tab, line feed, carriage return.
    private mutating func skipSpace() {
        while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
    }
}
