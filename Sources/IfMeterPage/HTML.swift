/// Text made safe for HTML: every name on a page passes through here, since a Linux interface
/// may be named `<b>x` or `a"b&`.
public enum HTML {
    /// Escaped for element text and double-quoted attribute values alike. Control characters
    /// (an SSID may hold ESC or NUL) are no text in HTML, where they are parse errors, and a
    /// page fetched to a terminal would act on them: each becomes U+FFFD. Direction marks,
    /// overrides and isolates and the invisible characters are shown as `\u{HHHH}`, as the
    /// terminal shows them: a name may neither reorder what follows it nor pass for another.
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\t", "\n", "\r": out.unicodeScalars.append(character)
            case "\u{0}"..."\u{1F}", "\u{7F}"..."\u{9F}": out += "\u{FFFD}"
            case "\u{061C}", "\u{200B}"..."\u{200F}", "\u{2028}"..."\u{202E}", "\u{2060}"..."\u{2064}", "\u{2066}"..."\u{2069}",
                 "\u{FEFF}":
                out += "\\u{" + String(character.value, radix: 16) + "}"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    /// Percent-encoded for a URL's query value: everything but unreserved ASCII.
    public static func queryValue(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out += "%" + String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 15)]], as: UTF8.self)
            }
        }
        return out
    }
}
