import CLinkStats
import IfMeterCore
#if canImport(Glibc)
import Glibc
#endif

/// One address or route of the daemon's namespace, as libnl-route parsed it from the kernel's
/// message: only what decides whether a prefix is on a link (docs/SCOPES.md).
public struct PrefixRecord: Hashable, Sendable {
    public enum Kind: Sendable { case address, route }
    public var kind: Kind
    public var ifindex: Int32
    /// The local address, or the route's destination: 4 or 16 bytes.
    public var address: [UInt8]
    public var length: Int
    /// An address's point-to-point peer.
    public var peer: [UInt8]?
    /// A route's: whether a next hop has a gateway; its table; its `RTN_*` type.
    public var hasGateway: Bool
    public var table: UInt32
    public var type: UInt8

    public init(kind: Kind, ifindex: Int32, address: [UInt8], length: Int, peer: [UInt8]? = nil,
                hasGateway: Bool = false, table: UInt32 = OnLinkPrefixes.mainTable, type: UInt8 = OnLinkPrefixes.unicast) {
        self.kind = kind
        self.ifindex = ifindex
        self.address = address
        self.length = length
        self.peer = peer
        self.hasGateway = hasGateway
        self.table = table
        self.type = type
    }

    /// A record from the C parser; nil for one of another family or an unknown kind.
    init?(_ raw: ifm_prefix_record) {
        let size = raw.family == UInt8(AF_INET) ? 4 : raw.family == UInt8(AF_INET6) ? 16 : 0
        guard size > 0, raw.kind == UInt8(IFM_PREFIX_ADDRESS) || raw.kind == UInt8(IFM_PREFIX_ROUTE) else { return nil }
        func bytes<T>(_ tuple: T) -> [UInt8] { withUnsafeBytes(of: tuple) { Array($0.prefix(size)) } }
        self.init(kind: raw.kind == UInt8(IFM_PREFIX_ADDRESS) ? .address : .route, ifindex: raw.ifindex,
                  address: bytes(raw.address), length: Int(raw.length), peer: raw.has_peer != 0 ? bytes(raw.peer) : nil,
                  hasGateway: raw.has_gateway != 0, table: raw.table, type: raw.type)
    }
}

/// The on-link prefixes of the daemon's namespace (docs/SCOPES.md, "What is local"):
/// - every address's prefix (the address masked to its length), and a point-to-point peer
///   (its /32 or /128, and its prefix);
/// - every route of the main table, unicast, with no gateway, not /0, on a link that is
///   neither point-to-point nor NOARP (a tunnel's routes lead anywhere).
public enum OnLinkPrefixes {
    /// `RT_TABLE_MAIN`, `RTN_UNICAST`.
    public static let mainTable: UInt32 = 254
    public static let unicast: UInt8 = 1

    /// The rule, over records as the kernel gave them: a record that is no prefix (a length
    /// past its family's) is left out. `tunnels`: the ifindexes of point-to-point or NOARP links.
    public static func prefixes(of records: [PrefixRecord], tunnels: Set<Int32>) -> Set<LocalPrefix> {
        var prefixes = Set<LocalPrefix>()
        for record in records {
            switch record.kind {
            case .address:
                // A length of 0 would make every address local: only the host's own then.
                guard let host = LocalPrefix(bytes: record.address, length: record.address.count * 8) else { continue }
                prefixes.insert(host)
                if record.length > 0, let own = LocalPrefix(bytes: record.address, length: record.length) { prefixes.insert(own) }
                if let peer = record.peer, peer.count == record.address.count {
                    if let far = LocalPrefix(bytes: peer, length: peer.count * 8) { prefixes.insert(far) }
                    if record.length > 0, let net = LocalPrefix(bytes: peer, length: record.length) { prefixes.insert(net) }
                }
            case .route:
                guard record.table == mainTable, record.type == unicast, !record.hasGateway, record.length > 0,
                      !tunnels.contains(record.ifindex),
                      let prefix = LocalPrefix(bytes: record.address, length: record.length) else { continue }
                prefixes.insert(prefix)
            }
        }
        return prefixes
    }

    /// Reads the namespace's links, addresses and routes through `socket` (three dumps) and
    /// applies the rule.
    public static func read(through socket: NetlinkSocket) throws(KernelError) -> Set<LocalPrefix> {
        let tunnels = Set(try socket.dumpLinks().filter { !$0.flags.isDisjoint(with: [.pointToPoint, .noARP]) }.map(\.ifindex))
        var array = ifm_prefix_array()
        defer { ifm_prefix_array_free(&array) }
        let count = try KernelError.check(ifm_nl_dump_prefixes(socket.handle, &array), "netlink RTM_GETADDR and RTM_GETROUTE dumps")
        let records = UnsafeBufferPointer(start: array.items, count: count).compactMap(PrefixRecord.init)
        return prefixes(of: records, tunnels: tunnels)
    }

    /// The records the C parser finds in `bytes` as if they came off a socket: the fuzzing entry.
    public static func parse(_ bytes: [UInt8]) -> [PrefixRecord] {
        var array = ifm_prefix_array()
        defer { ifm_prefix_array_free(&array) }
        let result = bytes.withUnsafeBytes { ifm_parse_prefixes($0.baseAddress, $0.count, &array) }
        guard result == 0 else { return [] }
        return UnsafeBufferPointer(start: array.items, count: array.count).compactMap(PrefixRecord.init)
    }
}

/// A netlink socket that hears addresses and routes change (RTNLGRP_IPV4/IPV6_IFADDR and
/// _ROUTE). Poll ``fileDescriptor``; ``drain()`` says only that something changed: the daemon
/// reads everything again (``OnLinkPrefixes/read(through:)``), so no event can be missed.
public final class PrefixEventSocket {
    private let handle: OpaquePointer

    public init() throws(KernelError) {
        var handle: OpaquePointer?
        _ = try KernelError.check(ifm_nl_open_prefix_events(&handle), "netlink address and route subscription")
        self.handle = handle!
    }

    deinit { ifm_nl_close(handle) }

    public var fileDescriptor: Int32 { ifm_nl_fd(handle) }

    /// Takes every queued message off the socket: true when there was any (or some were lost).
    public func drain() throws(KernelError) -> Bool {
        let result = ifm_nl_drain(handle)
        if result == -ENOBUFS { return true }
        return try KernelError.check(result, "netlink address and route events") > 0
    }
}
