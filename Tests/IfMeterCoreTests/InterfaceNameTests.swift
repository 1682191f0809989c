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
}
