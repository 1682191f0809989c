import CLinkStats
import Testing

/// The C shim's parsers on messages built here (no kernel needed): one message libnl refuses
/// costs only itself.
@Suite("Netlink message parsing", .timeLimit(.minutes(3)))
struct MessageParserTests {
    /// An RTM_NEWLINK (16) or RTM_DELLINK (17) message: header, `ifinfomsg` (cut to
    /// `bodyLength` bytes), and an IFLA_IFNAME attribute when the body is whole.
    func message(type: UInt16, ifindex: Int32, name: String, bodyLength: Int = 16) -> [UInt8] {
        var body = [UInt8](repeating: 0, count: 16)
        withUnsafeBytes(of: ifindex.littleEndian) { body.replaceSubrange(4..<8, with: $0) }
        var attributes: [UInt8] = []
        if bodyLength == 16 {
            let value = Array(name.utf8) + [0]
            let length = UInt16(4 + value.count)
            attributes = withUnsafeBytes(of: length.littleEndian, Array.init) + withUnsafeBytes(of: UInt16(3).littleEndian, Array.init) + value
            attributes += [UInt8](repeating: 0, count: (4 - attributes.count % 4) % 4)
        }
        let payload = Array(body.prefix(bodyLength)) + attributes
        let total = UInt32(16 + payload.count)
        var header = withUnsafeBytes(of: total.littleEndian, Array.init)
        header += withUnsafeBytes(of: type.littleEndian, Array.init) + [0, 0] + [UInt8](repeating: 0, count: 8)
        return header + payload + [UInt8](repeating: 0, count: (4 - payload.count % 4) % 4)
    }

    @Test("a message libnl refuses is counted and skipped; the ones around it are parsed")
    func refusedMessageSkipped() {
        let bytes = message(type: 16, ifindex: 7, name: "good0")
            + message(type: 16, ifindex: 8, name: "", bodyLength: 4)  // ifinfomsg cut short
            + message(type: 17, ifindex: 9, name: "gone0")
        var events = ifm_event_array()
        defer { ifm_event_array_free(&events) }
        let result = bytes.withUnsafeBytes { ifm_parse_link_events($0.baseAddress, $0.count, &events) }
        #expect(result == 0)
        #expect(events.skipped == 1)
        #expect(events.count == 2)
        let parsed = UnsafeBufferPointer(start: events.items, count: events.count)
        #expect(parsed.map(\.link.ifindex) == [7, 9])
        #expect(parsed.map(\.type) == [Int32(IFM_EVENT_NEW_LINK), Int32(IFM_EVENT_DEL_LINK)])
    }
}
