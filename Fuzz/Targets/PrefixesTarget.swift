import IfMeterCore
import IfMeterKernel

/// `prefixes`: address and route messages as if they came off a netlink socket, through the C
/// parser (libnl-route, `ifm_parse_prefixes`) and the on-link rule (docs/SCOPES.md).
extension FuzzTargets {
    /// Invariants: no trap; every record's address is 4 or 16 bytes, a peer the same; every
    /// prefix the rule makes has its bits past its length clear and is one the map can hold.
    public static func prefixes(_ bytes: [UInt8]) {
        let records = OnLinkPrefixes.parse(bytes)
        for record in records {
            guard record.address.count == 4 || record.address.count == 16,
                  record.peer.map({ $0.count == record.address.count }) ?? true else { fatalError("\(record) has a bad address") }
        }
        let tunnels = Set(records.prefix(4).map(\.ifindex))
        for prefix in OnLinkPrefixes.prefixes(of: records, tunnels: tunnels) {
            guard prefix.address.count == 16, prefix.length <= 128,
                  LocalPrefix(bytes: prefix.address, length: Int(prefix.length)) == prefix else { fatalError("\(prefix) is not a prefix") }
        }
    }
}
