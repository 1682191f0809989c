import CLinkStats
import IfMeterTestSupport
import Testing

/// The C shim's parsers on messages built here (no kernel needed): one message libnl refuses
/// costs only itself.
@Suite("Netlink message parsing", .ownThread, .timeLimit(.minutes(3)))
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
        let result = bytes.withUnsafeBytes { ifm_parse_link_events($0.baseAddress, $0.count, -1, 0, &events) }
        #expect(result == 0)
        #expect(events.skipped == 1)
        #expect(events.count == 2)
        let parsed = UnsafeBufferPointer(start: events.items, count: events.count)
        #expect(parsed.map(\.link.ifindex) == [7, 9])
        #expect(parsed.map(\.type) == [Int32(IFM_EVENT_NEW_LINK), Int32(IFM_EVENT_DEL_LINK)])
    }

    /// An RTM_DELNSID (89): header, `rtgenmsg` (padded to 4), and NETNSA_NSID (1) of
    /// `attributeLength` bytes.
    func nsidDeletion(_ nsid: Int32, attributeLength: Int = 4) -> [UInt8] {
        let value = Array(withUnsafeBytes(of: nsid.littleEndian, Array.init).prefix(attributeLength))
        var attribute = withUnsafeBytes(of: UInt16(4 + value.count).littleEndian, Array.init)
            + withUnsafeBytes(of: UInt16(1).littleEndian, Array.init) + value
        attribute += [UInt8](repeating: 0, count: (4 - attribute.count % 4) % 4)
        let payload = [UInt8](repeating: 0, count: 4) + attribute
        let total = UInt32(16 + payload.count)
        return withUnsafeBytes(of: total.littleEndian, Array.init) + withUnsafeBytes(of: UInt16(89).littleEndian, Array.init)
            + [0, 0] + [UInt8](repeating: 0, count: 8) + payload
    }

    func parsed(_ bytes: [UInt8], source: Int32 = -1, deletionsOnly: Bool = false) -> (events: [ifm_link_event], skipped: Int) {
        var events = ifm_event_array()
        defer { ifm_event_array_free(&events) }
        let result = bytes.withUnsafeBytes { ifm_parse_link_events($0.baseAddress, $0.count, source, deletionsOnly ? 1 : 0, &events) }
        #expect(result == 0)
        return (Array(UnsafeBufferPointer(start: events.items, count: events.count)), events.skipped)
    }

    @Test("an nsid's deletion is read with its number; one whose NETNSA_NSID is not 4 bytes is counted unparseable")
    func nsidDeletions() {
        let (events, skipped) = parsed(nsidDeletion(5) + nsidDeletion(7, attributeLength: 2) + message(type: 16, ifindex: 3, name: "a"), source: -1)
        #expect(skipped == 1)
        #expect(events.map(\.type) == [Int32(IFM_EVENT_DEL_NSID), Int32(IFM_EVENT_NEW_LINK)])
        #expect(events.map(\.nsid) == [5, -1])
        #expect(events.map(\.source_nsid) == [-1, -1])
        #expect(events[0].link.ifindex == 0 && events[1].link.ifindex == 3)
    }

    @Test("another namespace's messages, read for deletions only: its changes and nsids are dropped unparsed, its deletions kept with their source")
    func peerDeletionsOnly() {
        let bytes = message(type: 16, ifindex: 4, name: "d0") + nsidDeletion(2)
            + message(type: 16, ifindex: 4, name: "", bodyLength: 4) + message(type: 17, ifindex: 4, name: "eth0")
        let (events, skipped) = parsed(bytes, source: 9, deletionsOnly: true)
        #expect(skipped == 0)
        #expect(events.map(\.type) == [Int32(IFM_EVENT_DEL_LINK)])
        #expect(events.map(\.source_nsid) == [9])
        let all = parsed(bytes, source: 9)
        #expect(all.events.count == 3 && all.skipped == 1)
    }
}
