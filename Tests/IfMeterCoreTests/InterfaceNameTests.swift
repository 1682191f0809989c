import IfMeterCore
import IfMeterTestSupport
import Testing

@Suite("Interface names from the kernel", .ownThread, .timeLimit(.minutes(3)))
struct InterfaceNameTests {
    @Test("bytes that are not UTF-8 are escaped, so distinct names stay distinct", arguments: [
        ([0x77, 0x6C, 0x61, 0x6E, 0x30], "wlan0"),
        ([0xFF, 0x61], #"\xffa"#),
        ([0xFE, 0x61], #"\xfea"#),
        ([0x61, 0x5C, 0x62], #"a\\b"#),
        ([0xC3, 0xA9, 0x74, 0x68], "éth"),
        ([0x65, 0xC3], #"e\xc3"#),
        ([0x5C, 0x78, 0x66, 0x66, 0x61], #"\\xffa"#),
    ] as [([UInt8], String)])
    func decode(_ bytes: [UInt8], _ expected: String) {
        #expect(InterfaceName.decode(bytes) == expected)
    }

    @Test("a raw 0xff name and the literal text \\xff never collide")
    func noCollision() {
        #expect(InterfaceName.decode([0xFF]) != InterfaceName.decode(Array(#"\xff"#.utf8)))
    }

    @Test("printable: control and direction-override characters are escaped, everything else kept", arguments: [
        ("wlan0", false, "wlan0"), ("éth0", false, "éth0"),
        ("eth0\u{1B}[2J", false, #"eth0\x1b[2J"#), ("a\u{7F}b\u{9B}c", false, #"a\x7fb\x9bc"#),
        ("tun\u{202E}0", false, #"tun\u{202e}0"#), ("x\u{2066}", false, #"x\u{2066}"#),
        ("Home\u{200B}", false, #"Home\u{200b}"#), ("\u{FEFF}a\u{2060}b\u{061C}", false, #"\u{feff}a\u{2060}b\u{61c}"#),
        ("p\u{2029}q\u{200E}", false, #"p\u{2029}q\u{200e}"#), ("é\u{2010}", false, "é\u{2010}"),
        ("two\nlines\tand\u{07}", true, "two\nlines\tand\\x07"), ("no\nlines", false, #"no\x0alines"#),
    ] as [(String, Bool, String)])
    func printable(_ text: String, _ keepingLines: Bool, _ expected: String) {
        #expect(InterfaceName.printable(text, keepingLines: keepingLines) == expected)
    }

    /// The byte scan against the rule stated per scalar, over every scalar up to U+2FFF (all
    /// C0, C1, the overrides and their UTF-8 neighbours) and a few beyond, between safe text.
    @Test("printable's byte scan escapes exactly the scalars the rule names", arguments: [false, true])
    func printableMatchesTheRule(keepingLines: Bool) {
        func byRule(_ text: String) -> String {
            var result = ""
            for scalar in text.unicodeScalars {
                let unsafe = switch scalar.value {
                case 0..<0x20, 0x7f...0x9f, 0x61c, 0x200b...0x200f, 0x2028...0x202e, 0x2060...0x2064, 0x2066...0x2069, 0xfeff: true
                default: false
                }
                guard unsafe, !(keepingLines && (scalar == "\n" || scalar == "\t")) else {
                    result.unicodeScalars.append(scalar)
                    continue
                }
                let hex = String(scalar.value, radix: 16)
                result += scalar.value <= 0xff ? "\\x" + (scalar.value < 0x10 ? "0" + hex : hex) : "\\u{\(hex)}"
            }
            return result
        }
        let scalars = (0..<0x3000).compactMap(Unicode.Scalar.init) + ["\u{FEFF}", "\u{1F600}", "\u{10FFFF}"]
        for scalar in scalars {
            let text = "a" + String(scalar) + "—" + String(scalar) + String(scalar)
            #expect(InterfaceName.printable(text, keepingLines: keepingLines) == byRule(text), "U+\(String(scalar.value, radix: 16))")
            var appended = Array("x".utf8)
            InterfaceName.appendPrintable(text, keepingLines: keepingLines, to: &appended)
            #expect(appended == Array(("x" + byRule(text)).utf8))
        }
    }
}
