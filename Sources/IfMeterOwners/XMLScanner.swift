/// The XML libvirt writes, token by token: elements with their attributes, text, and the
/// comments and processing instructions it skips. A DOCTYPE or CDATA section fails the scan;
/// entity references are not decoded.
struct XMLScanner {
    enum Token {
        case open(String, attributes: [String: String], closed: Bool)
        case close(String)
        case text(ArraySlice<UInt8>)
        case failed
    }

    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func next() -> Token? {
        guard index < bytes.count else { return nil }
        guard bytes[index] == UInt8(ascii: "<") else {
            let start = index
            while index < bytes.count, bytes[index] != UInt8(ascii: "<") { index += 1 }
            // An entity reference is left as it is: no name or UUID that needs one is acceptable.
            return .text(bytes[start..<index])
        }
        if starts(with: "<!--") { return skip(past: "-->") }
        if starts(with: "<?") { return skip(past: "?>") }
        if starts(with: "<!") { return .failed }
        if starts(with: "</") {
            index += 2
            guard let name = name() else { return .failed }
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ">") else { return .failed }
            index += 1
            return .close(name)
        }
        index += 1
        guard let element = name() else { return .failed }
        var attributes: [String: String] = [:]
        while true {
            skipSpace()
            guard index < bytes.count else { return .failed }
            if bytes[index] == UInt8(ascii: ">") {
                index += 1
                return .open(element, attributes: attributes, closed: false)
            }
            if starts(with: "/>") {
                index += 2
                return .open(element, attributes: attributes, closed: true)
            }
            guard let attribute = name() else { return .failed }
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { return .failed }
            index += 1
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "'") || bytes[index] == UInt8(ascii: "\"") else { return .failed }
            let quote = bytes[index]
            index += 1
            let start = index
            while index < bytes.count, bytes[index] != quote, bytes[index] != UInt8(ascii: "<") { index += 1 }
            guard index < bytes.count, bytes[index] == quote else { return .failed }
            let value = bytes[start..<index]
            index += 1
            // An entity in a value is not decoded: the value is left out, and what needed it is
            // not found.
            if !value.contains(UInt8(ascii: "&")) { attributes[attribute] = String(decoding: value, as: UTF8.self) }
        }
    }

    private func starts(with prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard bytes.count - index >= count else { return false }
        return prefix.withUTF8Buffer { prefix in prefix.indices.allSatisfy { bytes[index + $0] == prefix[$0] } }
    }

    private mutating func skip(past end: StaticString) -> Token {
        let count = end.utf8CodeUnitCount
        while bytes.count - index >= count {
            if starts(with: end) {
                index += count
                return .text([])
            }
            index += 1
        }
        return .failed
    }

    private mutating func skipSpace() {
        while index < bytes.count, [0x20, 0x09, 0x0a, 0x0d].contains(bytes[index]) { index += 1 }
    }

    /// An element's or attribute's name: letters, digits, `-`, `_`, `.`, `:`.
    private mutating func name() -> String? {
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            guard (0x30...0x39).contains(byte) || (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: ":")
            else { break }
            index += 1
        }
        return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
    }
}
