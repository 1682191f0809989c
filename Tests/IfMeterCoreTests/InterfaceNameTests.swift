import IfMeterCore
import Testing

@Suite("Interface names from the kernel")
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
        ("two\nlines\tand\u{07}", true, "two\nlines\tand\\x07"), ("no\nlines", false, #"no\x0alines"#),
    ] as [(String, Bool, String)])
    func printable(_ text: String, _ keepingLines: Bool, _ expected: String) {
        #expect(InterfaceName.printable(text, keepingLines: keepingLines) == expected)
    }
}
