import IfMeterCore
import Testing

@Suite("Link address")
struct LinkAddressTests {
    @Test("reads back exactly as it was given, whatever the text", arguments: [
        "", "02:00:5e:10:00:01", "AA:BB:CC:DD:EE:FF", "ab",
        "80:00:00:48:fe:80:00:00:00:00:00:00:02:02:c9:ff:fe:01:02:03",
        "1:2:3", "02:00:5e:10:00:0", "02-00-5e-10-00-01", "0g:00:5e:10:00:01", "::", ":ab",
        "é:ab", "ab:", "020:05e", "not an address at all",
    ])
    func roundTrip(address: String) {
        let link = Link(ifindex: 2, name: "eth0", arpType: 1, address: address)
        #expect(link.address == address)
        var changed = link
        changed.address = address + "0"
        #expect(changed.address == address + "0")
        #expect(changed != link)
        changed.address = address
        #expect(changed == link)
    }

    @Test("a random address of any length reads back", arguments: 0..<32)
    func randomBytes(length: Int) {
        let address = (0..<length).map { _ in
            let byte = UInt8.random(in: 0...255)
            return (byte < 0x10 ? "0" : "") + String(byte, radix: 16)
        }.joined(separator: ":")
        #expect(Link(ifindex: 1, name: "x", arpType: 1, address: address).address == address)
    }
}
