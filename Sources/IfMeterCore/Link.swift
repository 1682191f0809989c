/// What the kernel says about one network interface: identity, type, state and counters.
///
/// The daemon holds one for every present link, so its storage is packed (120 bytes where the
/// plain fields took 264, docs/BENCHMARKS.md): optional numbers are kept with a sentinel, the
/// small fields side by side, the sysfs facts (the same for most links) shared, and the
/// counters boxed — a link held after its message was read keeps none (the meter has them).
public struct Link: Hashable, Sendable {
    /// The namespace the link is in; its ifindex is unique there only.
    public var namespace: NamespaceID
    public var ifindex: Int32
    public var name: String
    /// The netlink `IFLA_INFO_KIND` (`veth`, `tun`, `bridge`, …); empty when the driver has none.
    public var kind: String
    private var packedAddress: PackedAddress
    public var operState: OperState
    /// True when the counters are 32-bit (`struct rtnl_link_stats`) and wrap at 2³².
    public var countersAre32Bit: Bool
    /// The `ARPHRD_*` hardware type.
    public var arpType: UInt16
    public var flags: InterfaceFlags
    public var mtu: UInt32
    // 0 for none: no link has ifindex 0.
    private var masterIndex: Int32
    private var parentIndex: Int32
    // -1 for none, as the kernel says it (NETNSA_NSID_NOT_ASSIGNED); nsid 0 is a real one.
    private var peerNsid: Int32
    /// Who owns the namespace at the other end, once attribution found out (docs/NAMESPACES.md):
    /// then ``name`` is the owner's subject (`container:web`) and ``counters`` are the owner's
    /// point of view (rx and tx swapped). Nil for every other link.
    public var owner: LinkOwner?
    // UInt64.max for unknown: no link runs at 2^64 − 1 bit/s.
    private var speed: UInt64
    private var sharedSysfs: SharedSysfsFacts?
    private var boxedCounters: BoxedCounters?

    /// Hardware address as lowercase colon-separated hex; empty when the link has none.
    public var address: String {
        get { packedAddress.text }
        set { packedAddress = PackedAddress(newValue) }
    }
    /// The ifindex of the bridge or bond this link is enslaved to, if any.
    public var master: Int32? {
        get { masterIndex == 0 ? nil : masterIndex }
        set { masterIndex = newValue ?? 0 }
    }
    /// The ifindex of the link this one is stacked on (a veth's peer, a vlan's parent), if any.
    public var parent: Int32? {
        get { parentIndex == 0 ? nil : parentIndex }
        set { parentIndex = newValue ?? 0 }
    }
    /// `IFLA_LINK_NETNSID`: the nsid (as this link's namespace numbers them) of the namespace
    /// ``parent`` is in, when that is another one — a host-side veth whose peer is in a
    /// container. Nil when the peer is here or the link has none.
    public var peerNamespaceID: Int32? {
        get { peerNsid < 0 ? nil : peerNsid }
        set { peerNsid = newValue.map { $0 < 0 ? -1 : $0 } ?? -1 }
    }
    /// Nil when the source gave no counters for this link.
    public var counters: LinkCounters? {
        get { boxedCounters?.counters }
        set { boxedCounters = newValue.map(BoxedCounters.init) }
    }
    /// Link speed from sysfs `speed`, in bits per second; nil when unknown.
    public var speedBitsPerSecond: UInt64? {
        get { speed == .max ? nil : speed }
        set { speed = newValue ?? .max }
    }
    /// What sysfs said about the link when the kernel announced it (read then, never per
    /// sample); nil when nobody read it.
    public var sysfs: SysfsFacts? {
        get { sharedSysfs?.facts }
        set { sharedSysfs = newValue.map(SharedSysfsFacts.of) }
    }

    /// The link's identity while it exists.
    public var key: LinkKey { LinkKey(namespace, ifindex: ifindex) }

    public init(
        namespace: NamespaceID = .own, ifindex: Int32, name: String, kind: String = "", arpType: UInt16,
        flags: InterfaceFlags = [], operState: OperState = .unknown, mtu: UInt32 = 0,
        address: String = "", master: Int32? = nil, parent: Int32? = nil, peerNamespaceID: Int32? = nil,
        owner: LinkOwner? = nil, counters: LinkCounters? = nil, countersAre32Bit: Bool = false,
        speedBitsPerSecond: UInt64? = nil, sysfs: SysfsFacts? = nil
    ) {
        self.namespace = namespace
        self.ifindex = ifindex
        self.name = name
        self.kind = kind
        self.packedAddress = PackedAddress(address)
        self.operState = operState
        self.countersAre32Bit = countersAre32Bit
        self.arpType = arpType
        self.flags = flags
        self.mtu = mtu
        self.masterIndex = master ?? 0
        self.parentIndex = parent ?? 0
        self.peerNsid = peerNamespaceID.map { $0 < 0 ? -1 : $0 } ?? -1
        self.owner = owner
        self.speed = speedBitsPerSecond ?? .max
        self.sharedSysfs = sysfs.map(SharedSysfsFacts.of)
        self.boxedCounters = counters.map(BoxedCounters.init)
    }
}

/// A link's counters out of line: 8 bytes in a link that has none, which is every link a table
/// keeps (``MeterService`` drops them; the meter holds the last it applied).
final class BoxedCounters: Hashable, Sendable {
    let counters: LinkCounters

    init(_ counters: LinkCounters) {
        self.counters = counters
    }

    static func == (lhs: BoxedCounters, rhs: BoxedCounters) -> Bool { lhs === rhs || lhs.counters == rhs.counters }
    func hash(into hasher: inout Hasher) { hasher.combine(counters) }
}

/// A colon-separated hex address kept without its colons: a MAC's 12 digits fit in a String's
/// inline storage, where its 17 characters take a 64-byte heap allocation, once per link held.
/// Any other text is kept as it is.
struct PackedAddress: Hashable, Sendable {
    private var stored: String
    private var packed: Bool

    init(_ text: String) {
        let bytes = Array(text.utf8)
        let isColonSeparatedHex = bytes.count % 3 == 2 && bytes.indices.allSatisfy { index in
            index % 3 == 2 ? bytes[index] == UInt8(ascii: ":") : Self.isHexDigit(bytes[index])
        }
        if isColonSeparatedHex {
            stored = String(decoding: bytes.indices.filter { $0 % 3 != 2 }.map { bytes[$0] }, as: UTF8.self)
            packed = true
        } else {
            stored = text
            packed = false
        }
    }

    var text: String {
        guard packed else { return stored }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(stored.utf8.count / 2 * 3)
        for (offset, byte) in stored.utf8.enumerated() {
            if offset > 0, offset % 2 == 0 { bytes.append(UInt8(ascii: ":")) }
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
             UInt8(ascii: "A")...UInt8(ascii: "F"): true
        default: false
        }
    }
}

/// The `IFF_*` interface flags that ifmeter looks at.
public struct InterfaceFlags: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let up = InterfaceFlags(rawValue: 0x1)
    public static let loopback = InterfaceFlags(rawValue: 0x8)
    public static let pointToPoint = InterfaceFlags(rawValue: 0x10)
    public static let noARP = InterfaceFlags(rawValue: 0x80)
    public static let lowerUp = InterfaceFlags(rawValue: 0x10000)
}

/// RFC 2863 operational state, as the kernel reports it in `IFLA_OPERSTATE`.
public enum OperState: String, Hashable, Sendable {
    case unknown, notPresent = "notpresent", down, lowerLayerDown = "lowerlayerdown"
    case testing, dormant, up

    /// Maps the kernel's `IF_OPER_*` number; anything newer than this list is `unknown`.
    public init(kernelValue: UInt8) {
        switch kernelValue {
        case 1: self = .notPresent
        case 2: self = .down
        case 3: self = .lowerLayerDown
        case 4: self = .testing
        case 5: self = .dormant
        case 6: self = .up
        default: self = .unknown
        }
    }
}

/// A link appearing, changing or disappearing, as one `RTNLGRP_LINK` message announced it.
public enum LinkEvent: Hashable, Sendable {
    /// `RTM_NEWLINK`: the link was created, or its name, state or flags changed.
    case newOrChanged(Link)
    /// `RTM_DELLINK`: the link is gone; its counters are the kernel's final values.
    case deleted(Link)

    public var link: Link {
        switch self {
        case .newOrChanged(let link), .deleted(let link): link
        }
    }
}

/// What the kernel's link event socket told, in the order it told it: an event, or — when
/// events were lost — a full dump to resynchronise from.
public enum LinkObservation: Hashable, Sendable {
    case event(LinkEvent)
    /// Events were lost (the socket overflowed, a read failed, or `unparseable` messages could
    /// not be read); `links` is a full dump of `namespace` taken afterwards.
    case resync(links: [Link], namespace: NamespaceID = .own, unparseable: Int)
    /// A link of another namespace, heard because the feed listens to every namespace it has
    /// an nsid for (the container's end of a host-side veth, which reports its own counters to
    /// the last). Not a link of the feed's namespace: attribution reads it, the meter never does.
    case peer(nsid: Int32, LinkEvent)
    /// `RTM_DELNSID`: the namespace the feed numbered `nsid` was destroyed, and the kernel may
    /// give the number to the next namespace that needs one. Whatever was known of the old
    /// namespace by that number no longer holds.
    case namespaceIDDeleted(Int32)
    /// The peers socket's copy of a link message of the feed's own namespace (a change, or with
    /// `deleted` a deletion, of the link at `ifindex`): where it falls among other namespaces'
    /// deletions is the kernel's order, which the two sockets' reads alone do not keep. Attribution
    /// takes a container end's final counters only when its host end's deletion is next.
    case hostMark(ifindex: Int32, deleted: Bool)
    /// Comes just before `link`'s deletion: the socket that hears other namespaces lost
    /// messages about then, so the final counters of the link's end in another namespace may be
    /// among them. Only a link counted as an owner's is concerned: its figures are labelled
    /// `events-lost`, nobody else's.
    case peerEventsLost(before: Link)
}
