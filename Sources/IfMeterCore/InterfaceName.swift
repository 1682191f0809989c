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

    /// `text` safe to print on a terminal: control characters (C0, DEL, C1) and the
    /// direction overrides become `\xHH` or `\u{HHHH}`, so a name can neither send an escape
    /// sequence to whoever reads it nor reorder the text around it. With `keepingLines`, line
    /// feeds and tabs stay (whole lines of output). Everything else as is.
    public static func printable(_ text: String, keepingLines: Bool = false) -> String {
        // Fast path on the bytes: every unsafe scalar starts with a byte below 0x20, 0x7f,
        // 0xc2 (C1) or 0xe2 (the overrides).
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7f || $0 == 0xc2 || $0 == 0xe2 }) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            guard isUnsafe(scalar), !(keepingLines && (scalar == "\n" || scalar == "\t")) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            let hex = String(scalar.value, radix: 16)
            result += scalar.value <= 0xff ? "\\x" + (scalar.value < 0x10 ? "0" + hex : hex) : "\\u{\(hex)}"
        }
        return result
    }

    private static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7f...0x9f, 0x202a...0x202e, 0x2066...0x2069: true
        default: false
        }
    }
}
