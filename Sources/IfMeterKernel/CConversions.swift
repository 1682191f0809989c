import CLinkStats
import IfMeterCore

extension LinkCounters {
    init(_ c: ifm_counters) {
        self.init(
            rxBytes: c.rx_bytes, txBytes: c.tx_bytes, rxPackets: c.rx_packets,
            txPackets: c.tx_packets, rxErrors: c.rx_errors, txErrors: c.tx_errors,
            rxDropped: c.rx_dropped, txDropped: c.tx_dropped)
    }
}

extension Link {
    package init(_ c: ifm_link) {
        let name = withUnsafeBytes(of: c.name) { InterfaceName.decode(Array($0.prefix(while: { $0 != 0 }))) }
        let kind = withUnsafeBytes(of: c.kind) { Self.string(fromNulTerminated: $0) }
        let address = withUnsafeBytes(of: c.addr) { bytes in
            bytes.prefix(Int(c.addr_len)).map { byte in
                let hex = String(byte, radix: 16)
                return byte < 0x10 ? "0" + hex : hex
            }.joined(separator: ":")
        }
        self.init(
            ifindex: c.ifindex, name: name, kind: kind, arpType: c.arptype,
            flags: InterfaceFlags(rawValue: c.flags), operState: OperState(kernelValue: c.operstate),
            mtu: c.mtu, address: address, master: c.master == 0 ? nil : c.master,
            // IFLA_LINK naming the link itself means none; but a peer in another namespace may
            // have the same ifindex there (a host-side veth 2 into a container's eth0 2).
            parent: c.link == 0 || (c.link == c.ifindex && c.link_netnsid < 0) ? nil : c.link,
            peerNamespaceID: c.link_netnsid >= 0 ? c.link_netnsid : nil,
            counters: c.has_stats != 0 ? LinkCounters(c.counters) : nil,
            countersAre32Bit: c.stats_are_32bit != 0)
    }

    private static func string(fromNulTerminated bytes: UnsafeRawBufferPointer) -> String {
        String(decoding: bytes.prefix(while: { $0 != 0 }), as: UTF8.self)
    }
}
