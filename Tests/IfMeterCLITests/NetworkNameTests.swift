import IfMeterCore
@testable import IfMeterCLI
import IfMeterPresentation
import IfMeterTestSupport
import IfMeterWire
import Testing

@Suite("How a network is named for people", .ownThread, .timeLimit(.minutes(3)))
struct NetworkNameTests {
    func network(_ name: String, ssid: [UInt8]? = nil, apn: String? = nil, operatorName: String? = nil) -> NetworkResult {
        NetworkResult(subject: "network:x", uuid: nil, name: name, ssidHex: ssid.map(Hex.encode), type: "wifi", metered: "no",
                      apn: apn, operatorName: operatorName, interface: nil, firstSeen: nil, lastSeen: nil, rxBytes: 0,
                      txBytes: 0, labels: [])
    }

    @Test("the connection's name; its SSID where that differs, bytes that are not UTF-8 as \\xNN; a SIM's operator and APN")
    func display() {
        #expect(NetworkName.display(network("Home", ssid: Array("Home".utf8))) == "Home")
        #expect(NetworkName.display(network("Home", ssid: Array("FRITZ!Box 7530".utf8))) == "Home (SSID FRITZ!Box 7530)")
        #expect(NetworkName.display(network("Café", ssid: [0x43, 0x61, 0x66, 0xE9, 0xFF])) == "Café (SSID Caf\\xe9\\xff)")
        #expect(NetworkName.display(network("SIM", apn: "internet.t-mobile", operatorName: "T-Mobile"))
            == "SIM (T-Mobile, APN internet.t-mobile)")
        #expect(NetworkName.display(network("Wired")) == "Wired")
        // A line feed would split a table's row; an ESC would start a terminal sequence.
        #expect(NetworkName.display(network("a\u{1B}[31m\nb")) == "a\\x1b[31m\\x0ab")
        #expect(NetworkName.display(network("Café", ssid: [0x43, 0x61, 0x66, 0xE9, 0xFF, 0x00, 0x0A])) == "Café (SSID Caf\\xe9\\xff\\x00\\x0a)")
        #expect(NetworkName.display(network("x", ssid: Array("y\u{85}\u{7F}".utf8))) == "x (SSID y\\x85\\x7f)")
    }

    @Test("a plan's networks: ten by name, then how many more")
    func planNetworks() {
        #expect(PlansView.named(["Home", "Pixel"]) == "Home, Pixel")
        let many = (0..<12).map { "Net \($0)" }
        #expect(PlansView.named(many) == (0..<10).map { "Net \($0)" }.joined(separator: ", ") + " and 2 more (ifmeter networks lists them)")
    }
}
