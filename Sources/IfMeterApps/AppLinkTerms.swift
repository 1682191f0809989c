import IfMeterCore

/// A link's facts that turn an application's counts into the link's own terms: the program
/// sees IP packets, and the link's counters count each packet with its link-layer header
/// (docs/APPS.md, "Exact").
public struct AppLink: Hashable, Sendable {
    public var ifindex: Int32
    /// The link's name: what its remainder is named after.
    public var name: String
    /// Bytes a packet carries on this link besides its IP packet, in the link's counters.
    public var headerLength: UInt64
    /// Whether the link is of a class the interface scope program is attached to (Ethernet,
    /// Wi-Fi, cellular: docs/SCOPES.md): its traffic is split even while no program covers it,
    /// as unknown. A link of another class is split only while a program covers it.
    public var scoped: Bool

    public init(ifindex: Int32, name: String, headerLength: UInt64, scoped: Bool = false) {
        self.ifindex = ifindex
        self.name = name
        self.headerLength = headerLength
        self.scoped = scoped
    }

    /// The classes the interface scope program is attached to: what a bill counts.
    public static func isScoped(_ linkClass: InterfaceClass) -> Bool {
        linkClass == .ethernet || linkClass == .wifi || linkClass == .cellular
    }

    /// The bytes a link of ARP type `arpType` counts per packet besides the IP packet: the
    /// Ethernet header on Ethernet, veth, bridges and loopback (which writes a fake one);
    /// nothing on tun, PPP, raw-IP modems and IP tunnels, whose counters count the IP packet.
    public static func headerLength(arpType: UInt16) -> UInt64 {
        switch arpType {
        case ARPHRD.ether, ARPHRD.loopback: 14
        default: 0
        }
    }

    /// `traffic` counted by the program (IP packets) as this link counts it.
    public func inLinkTerms(_ traffic: Traffic) -> Traffic {
        var counted = traffic
        counted.rxBytes = traffic.rxBytes &+ traffic.rxPackets &* headerLength
        counted.txBytes = traffic.txBytes &+ traffic.txPackets &* headerLength
        return counted
    }
}
