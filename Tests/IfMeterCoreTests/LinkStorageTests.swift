@testable import IfMeterCore
import IfMeterTestSupport
import Testing

@Suite("Link address", .ownThread, .timeLimit(.minutes(3)))
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

@Suite("Link storage", .ownThread, .timeLimit(.minutes(3)))
struct LinkStorageTests {
    @Test("every optional reads back as given, nil and the values a sentinel could be mistaken for")
    func optionals() {
        let counters = LinkCounters(rxBytes: 1, txBytes: 2, rxPackets: 3, txPackets: 4)
        for master in [nil, 1, Int32.max] as [Int32?] {
            for nsid in [nil, 0, 7] as [Int32?] {
                for speed in [nil, 0, 10_000_000_000, UInt64.max - 1] as [UInt64?] {
                    for given in [nil, LinkCounters(), counters] as [LinkCounters?] {
                        let link = Link(ifindex: 3, name: "veth0", arpType: 1, master: master, parent: master,
                                        peerNamespaceID: nsid, counters: given, speedBitsPerSecond: speed)
                        #expect(link.master == master && link.parent == master)
                        #expect(link.peerNamespaceID == nsid)
                        #expect(link.speedBitsPerSecond == speed)
                        #expect(link.counters == given)
                        var changed = link
                        changed.counters = given == nil ? LinkCounters() : nil
                        #expect(changed != link)
                        changed.counters = given
                        #expect(changed == link && changed.hashValue == link.hashValue)
                    }
                }
            }
        }
    }

    @Test("links with the same sysfs facts share one copy of them, and each reads back its own")
    func sharedFacts() throws {
        let veth = SysfsFacts(driver: "veth", speedBitsPerSecond: 10_000_000_000)
        let wifi = SysfsFacts(hasPhy80211: true, devtype: "wlan", driver: "iwlwifi", hasDevice: true)
        let links = (0..<100).map { Link(ifindex: $0 + 1, name: "v\($0)", arpType: 1, sysfs: $0 == 50 ? wifi : veth) }
        #expect(links.allSatisfy { $0.sysfs == ($0.ifindex == 51 ? wifi : veth) })
        #expect(SharedSysfsFacts.of(veth) === SharedSysfsFacts.of(SysfsFacts(driver: "veth", speedBitsPerSecond: 10_000_000_000)))
        #expect(SharedSysfsFacts.of(veth) !== SharedSysfsFacts.of(wifi))
        var changed = links[0]
        changed.sysfs = wifi
        #expect(changed != links[0] && changed.sysfs == wifi)
        changed.sysfs = nil
        #expect(changed.sysfs == nil)
    }

    @Test("the records held per link stay within what docs/BENCHMARKS.md counts them at")
    func sizes() {
        #expect(MemoryLayout<Link>.stride <= 120)
        #expect(MemoryLayout<TrackedInterface>.stride <= 144)
        #expect(MemoryLayout<Rate>.stride <= 64)
    }
}
