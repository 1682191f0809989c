/// An interface name as the kernel gives it: up to 15 bytes, any byte but NUL, `/`, `:` and
/// whitespace, in no particular encoding. Decoding lossily would turn two names that are not
/// UTF-8 into the same U+FFFD name (two links counted as one re-created link), so every byte
/// that is not part of valid UTF-8 is written `\xHH`, and a backslash `\\`. The one escaping
/// is what the socket, the database and the estimate log all carry.
public enum InterfaceName {
    /// The name as ifmeter shows and stores it; distinct byte strings stay distinct.
    public static func decode(_ bytes: [UInt8]) -> String {
        if !bytes.contains(UInt8(ascii: "\\")), let valid = String(validating: bytes, as: UTF8.self) {
            return valid
        }
        var result = ""
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "\\") {
                result += "\\\\"
                index += 1
                continue
            }
            // The longest valid UTF-8 sequence starting here (1 to 4 bytes), else one raw byte.
            if let length = (1...4).reversed().first(where: { length in
                index + length <= bytes.count
                    && String(validating: bytes[index..<index + length], as: UTF8.self)?.unicodeScalars.count == 1
            }) {
                result += String(decoding: bytes[index..<index + length], as: UTF8.self)
                index += length
            } else {
                let hex = String(bytes[index], radix: 16)
                result += "\\x" + (bytes[index] < 0x10 ? "0" + hex : hex)
                index += 1
            }
        }
        return result
    }

    /// `text` safe to print on a terminal: control characters (C0, DEL, C1), the direction
    /// marks, overrides and isolates, and the invisible characters (zero-width spaces and
    /// joiners, the byte-order mark, line and paragraph separators) become `\xHH` or
    /// `\u{HHHH}`, so a name can neither send an escape sequence to whoever reads it, nor
    /// reorder the text around it, nor pass for another name (`Home` and `Home` with U+200B). With `keepingLines`, line
    /// feeds and tabs stay (whole lines of output). Everything else as is.
    public static func printable(_ text: String, keepingLines: Bool = false) -> String {
        guard text.utf8.contains(where: mayBeUnsafe) else { return text }
        var result: [UInt8] = []
        result.reserveCapacity(text.utf8.count + 16)
        appendPrintable(text, keepingLines: keepingLines, to: &result)
        return String(decoding: result, as: UTF8.self)
    }

    /// ``printable(_:keepingLines:)`` appended to `output` as UTF-8, straight from the text's
    /// own bytes (the client writes whole views through it).
    public static func appendPrintable(_ text: String, keepingLines: Bool, to output: inout [UInt8]) {
        let done: ()? = text.utf8.withContiguousStorageIfAvailable { appendPrintable($0, keepingLines: keepingLines, to: &output) }
        // A bridged or lazily made string has no contiguous UTF-8 of its own: copy it once.
        if done == nil { Array(text.utf8).withUnsafeBufferPointer { appendPrintable($0, keepingLines: keepingLines, to: &output) } }
    }

    /// Every unsafe scalar starts with a byte below 0x20, 0x7f, 0xc2 (C1), 0xd8 (U+061C), 0xe2
    /// (U+200B…U+200F, U+2028…U+202E, U+2060…U+2069) or 0xef (U+FEFF).
    private static func mayBeUnsafe(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == 0x7f || byte == 0xc2 || byte == 0xd8 || byte == 0xe2 || byte == 0xef
    }

    /// The scan on valid UTF-8: copies runs of safe bytes, and escapes C0 and DEL (`\xHH`),
    /// C1 (`c2 80`…`c2 9f`, `\xHH`), and as `\u{HHHH}` the Arabic letter mark (`d8 9c`), the
    /// zero-width characters and marks (`e2 80 8b`…`8f`), the separators, embeddings and
    /// overrides (`e2 80 a8`…`ae`), the word joiner and invisible operators (`e2 81 a0`…`a4`),
    /// the isolates (`e2 81 a6`…`a9`) and the byte-order mark (`ef bb bf`).
    private static func appendPrintable(_ bytes: UnsafeBufferPointer<UInt8>, keepingLines: Bool, to output: inout [UInt8]) {
        var index = 0
        var safeFrom = 0
        func escape(_ scalar: UInt32, length: Int) {
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[safeFrom..<index]))
            let hex = String(scalar, radix: 16).utf8
            if scalar <= 0xff {
                output.append(contentsOf: "\\x".utf8)
                if scalar < 0x10 { output.append(UInt8(ascii: "0")) }
                output.append(contentsOf: hex)
            } else {
                output.append(contentsOf: "\\u{".utf8)
                output.append(contentsOf: hex)
                output.append(UInt8(ascii: "}"))
            }
            index += length
            safeFrom = index
        }
        while index < bytes.count {
            let byte = bytes[index]
            let next = index + 1 < bytes.count ? bytes[index + 1] : 0
            let third = index + 2 < bytes.count ? bytes[index + 2] : 0
            switch byte {
            case 0x0a where keepingLines, 0x09 where keepingLines: index += 1
            case 0..<0x20, 0x7f: escape(UInt32(byte), length: 1)
            case 0xc2 where (0x80...0x9f).contains(next): escape(UInt32(next), length: 2)
            case 0xd8 where next == 0x9c: escape(0x061c, length: 2)
            case 0xe2 where next == 0x80 && ((0x8b...0x8f).contains(third) || (0xa8...0xae).contains(third)):
                escape(0x2000 | UInt32(third & 0x3f), length: 3)
            case 0xe2 where next == 0x81 && ((0xa0...0xa4).contains(third) || (0xa6...0xa9).contains(third)):
                escape(0x2040 | UInt32(third & 0x3f), length: 3)
            case 0xef where next == 0xbb && third == 0xbf: escape(0xfeff, length: 3)
            default: index += 1
            }
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[safeFrom..<index]))
    }
}
