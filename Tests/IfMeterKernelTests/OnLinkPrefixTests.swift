import Foundation
import IfMeterCore
import IfMeterKernel
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The on-link prefixes from a real namespace's addresses and routes, and the socket that hears
/// them change (docs/SCOPES.md, "What is local").
@Suite("On-link prefixes", .ownThread, .timeLimit(.minutes(2)))
struct OnLinkPrefixTests {
    static func prefix(_ text: String) -> LocalPrefix { LocalPrefix(parsing: text)! }

    @Test("the rule: addresses' prefixes and peers; routes of the main table, unicast, without a gateway, not /0, not on a tunnel")
    func rule() {
        let records: [PrefixRecord] = [
            PrefixRecord(kind: .address, ifindex: 2, address: [192, 168, 1, 7], length: 24),
            PrefixRecord(kind: .address, ifindex: 3, address: [10, 64, 1, 5], length: 32, peer: [10, 64, 0, 1]),
            PrefixRecord(kind: .address, ifindex: 2, address: [9, 9, 9, 9], length: 0),
            PrefixRecord(kind: .route, ifindex: 2, address: [203, 0, 113, 0], length: 24),
            PrefixRecord(kind: .route, ifindex: 2, address: [198, 51, 100, 0], length: 24, hasGateway: true),
            PrefixRecord(kind: .route, ifindex: 2, address: [0, 0, 0, 0], length: 0),
            PrefixRecord(kind: .route, ifindex: 2, address: [100, 64, 0, 0], length: 10, table: 100),
            PrefixRecord(kind: .route, ifindex: 2, address: [100, 65, 0, 0], length: 16, type: 2),
            PrefixRecord(kind: .route, ifindex: 4, address: [172, 16, 0, 0], length: 12),
            PrefixRecord(kind: .route, ifindex: 2, address: [1, 2, 3, 4], length: 40),
        ]
        #expect(OnLinkPrefixes.prefixes(of: records, tunnels: [4]) == Set([
            "192.168.1.7/32", "192.168.1.0/24", "10.64.1.5/32", "10.64.0.1/32", "9.9.9.9/32", "203.0.113.0/24",
        ].map(Self.prefix)))
    }

    @Test("a namespace's own: its address's prefix and a route without a gateway; a new address is heard",
          .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason))
    func namespace() throws {
        let pair = try VethPair(subnet: 99)
        try pair.left.ip("route", "add", "203.0.113.0/24", "dev", pair.leftName)
        try pair.left.ip("route", "add", "198.51.100.0/24", "via", pair.rightAddress)
        let (prefixes, heard) = try pair.left.inside { () throws -> (Set<LocalPrefix>, Bool) in
            let events = try PrefixEventSocket()
            let prefixes = try OnLinkPrefixes.read(through: try NetlinkSocket())
            #expect(try events.drain() == false)
            try pair.left.ip("address", "add", "192.0.2.1/28", "dev", pair.leftName)
            var poll = pollfd(fd: events.fileDescriptor, events: Int16(POLLIN), revents: 0)
            guard Glibc.poll(&poll, 1, 10_000) == 1 else { return (prefixes, false) }
            return (prefixes, try events.drain())
        }
        #expect(prefixes.isSuperset(of: ["10.99.0.0/24", "10.99.0.1/32", "203.0.113.0/24"].map(Self.prefix)))
        #expect(!prefixes.contains(Self.prefix("198.51.100.0/24")))
        #expect(heard)
        let after = try pair.left.inside { try OnLinkPrefixes.read(through: try NetlinkSocket()) }
        #expect(after.contains(Self.prefix("192.0.2.0/28")))
    }

    @Test("the parser takes any bytes")
    func anyBytes() {
        #expect(OnLinkPrefixes.parse([]).isEmpty)
        #expect(OnLinkPrefixes.parse([UInt8](repeating: 0xff, count: 64)).isEmpty)
    }
}
