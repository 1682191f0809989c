/// Decides each interface's ``InterfaceClass`` and says why
/// (docs/decisions/kernel-and-platform.md, "Classification").
///
/// Order, first match wins:
/// 1. configured ``ClassRule``s, in their order;
/// 2. definitive evidence — flags, sysfs, uevent, driver, netlink kind, ARPHRD type — checked
///    class by class: loopback, an owner's host side, wifi, cellular, tunnel, virtual;
/// 3. name conventions (`wwan*`, `tun*`, `wg*`, …), only when no evidence decided, so a veth
///    that happens to be called `wg-test` is still virtual;
/// 4. no `device` link in sysfs → virtual; `ARPHRD_ETHER` on a device → ethernet;
/// 5. everything else is `other`, never a silent guess.
///
/// Pure: the sysfs facts come with the link (``Link/sysfs``, read when the kernel announced it)
/// or from the caller.
public struct Classifier: Hashable, Sendable {
    public var rules: [ClassRule]

    public init(rules: [ClassRule] = []) {
        self.rules = rules
    }

    /// Classifies with the facts read when the link was announced (none: netlink alone).
    public func classify(_ link: Link) -> Classification {
        classify(link, facts: link.sysfs ?? SysfsFacts())
    }

    /// Classifies with sysfs facts the caller already read.
    public func classify(_ link: Link, facts: SysfsFacts) -> Classification {
        if let verdict = Self.applyRules(rules, to: link.name) { return verdict }
        return Self.detect(link, facts: facts)
    }

    static func applyRules(_ rules: [ClassRule], to name: String) -> Classification? {
        for (index, rule) in rules.enumerated() where rule.matches(name) {
            let reason = "config rule \(index + 1): \(rule)"
            switch rule.action {
            case .assign(let interfaceClass): return .classified(interfaceClass, reason: reason)
            case .ignore: return .ignored(reason: reason)
            }
        }
        return nil
    }

    /// Classification from evidence alone: pure, so tests feed it facts directly.
    public static func detect(_ link: Link, facts: SysfsFacts) -> Classification {
        for detector in evidenceDetectors {
            if let verdict = detector(link, facts) { return verdict }
        }
        if let verdict = byName(link.name) { return verdict }
        if !facts.hasDevice {
            return .classified(.virtual, reason: "no sysfs device link")
        }
        if link.arpType == ARPHRD.ether {
            let driver = facts.driver.map { ", driver \($0)" } ?? ""
            return .classified(.ethernet, reason: "ARPHRD_ETHER on a device\(driver)")
        }
        let kind = link.kind.isEmpty ? "" : ", kind \(link.kind)"
        return .classified(.other, reason: "no rule matched (\(ARPHRD.name(link.arpType))\(kind))")
    }

    private static let evidenceDetectors: [@Sendable (Link, SysfsFacts) -> Classification?] = [
        loopback, hostSide, wifi, cellular, tunnel, virtualByKind,
    ]

    /// A link counted as its owner's (``Link/owner``) is the host's end of the owner's NIC: a
    /// veth or a virtual machine's tap, which carries the owner's traffic once, not a tunnel
    /// over another link.
    static func hostSide(_ link: Link, _ facts: SysfsFacts) -> Classification? {
        guard let owner = link.owner else { return nil }
        // One reason per kind of owner, not per owner: a reason is kept once for all links it
        // holds for.
        return .classified(.virtual, reason: "host side of a \(owner.kind.noun)'s NIC (\(owner.kind.rawValue), kind \(link.kind))")
    }

    static func loopback(_ link: Link, _ facts: SysfsFacts) -> Classification? {
        if link.flags.contains(.loopback) { return .classified(.loopback, reason: "IFF_LOOPBACK") }
        if link.arpType == ARPHRD.loopback {
            return .classified(.loopback, reason: "ARPHRD_LOOPBACK")
        }
        return nil
    }

    static func wifi(_ link: Link, _ facts: SysfsFacts) -> Classification? {
        if facts.hasPhy80211 { return .classified(.wifi, reason: "sysfs phy80211") }
        if facts.hasWireless { return .classified(.wifi, reason: "sysfs wireless/") }
        if facts.devtype == "wlan" { return .classified(.wifi, reason: "uevent DEVTYPE=wlan") }
        if link.arpType == ARPHRD.ieee80211Radiotap {
            return .classified(.wifi, reason: "ARPHRD_IEEE80211_RADIOTAP (monitor mode)")
        }
        return nil
    }

    static let cellularDrivers: Set<String> = ["qmi_wwan", "cdc_mbim", "option", "huawei_cdc_ncm"]
    static let tetheringDrivers: Set<String> = ["rndis_host"]
    static let modemEthernetDrivers: Set<String> = ["cdc_ether", "cdc_ncm"]

    static func cellular(_ link: Link, _ facts: SysfsFacts) -> Classification? {
        if facts.devtype == "wwan" { return .classified(.cellular, reason: "uevent DEVTYPE=wwan") }
        if link.kind == "rmnet" { return .classified(.cellular, reason: "netlink kind rmnet") }
        if link.arpType == ARPHRD.rawIP { return .classified(.cellular, reason: "ARPHRD_RAWIP") }
        if link.arpType == ARPHRD.ppp { return .classified(.cellular, reason: "ARPHRD_PPP") }
        if let driver = facts.driver {
            if cellularDrivers.contains(driver) {
                return .classified(.cellular, reason: "driver \(driver)")
            }
            if tetheringDrivers.contains(driver) {
                return .classified(.cellular, reason: "USB tethering driver \(driver)")
            }
            if modemEthernetDrivers.contains(driver) && facts.hasSiblingTTY {
                return .classified(.cellular, reason: "driver \(driver) with a sibling tty (modem)")
            }
        }
        return nil
    }

    static let tunnelKinds: Set<String> = [
        "tun", "wireguard", "ipip", "gre", "gretap", "sit", "vti", "ip6tnl", "xfrm", "ip6gre",
    ]
    static let tunnelARPTypes: Set<UInt16> = [
        ARPHRD.none, ARPHRD.ipip, ARPHRD.tunnel6, ARPHRD.sit, ARPHRD.ipgre,
    ]

    static func tunnel(_ link: Link, _ facts: SysfsFacts) -> Classification? {
        if let flags = facts.tunFlags {
            // IFF_TUN = 0x1, IFF_TAP = 0x2 in <linux/if_tun.h>.
            let mode = flags & 0x3 == 0x2 ? "tap" : "tun"
            return .classified(.tunnel, reason: "sysfs tun_flags (\(mode))")
        }
        if tunnelKinds.contains(link.kind) {
            return .classified(.tunnel, reason: "netlink kind \(link.kind)")
        }
        if tunnelARPTypes.contains(link.arpType) {
            return .classified(.tunnel, reason: ARPHRD.name(link.arpType))
        }
        return nil
    }

    static let virtualKinds: Set<String> = [
        "veth", "bridge", "bond", "vlan", "macvlan", "ipvlan", "vxlan", "dummy", "ifb", "team",
    ]

    static func virtualByKind(_ link: Link, _ facts: SysfsFacts) -> Classification? {
        virtualKinds.contains(link.kind)
            ? .classified(.virtual, reason: "netlink kind \(link.kind)") : nil
    }

    static let namePrefixes: [(prefix: String, interfaceClass: InterfaceClass)] = [
        ("wwan", .cellular), ("rmnet", .cellular), ("ccmni", .cellular), ("pdp_ip", .cellular),
        ("tun", .tunnel), ("tap", .tunnel), ("wg", .tunnel), ("utun", .tunnel),
    ]

    static func byName(_ name: String) -> Classification? {
        for (prefix, interfaceClass) in namePrefixes where name.hasPrefix(prefix) {
            return .classified(interfaceClass, reason: "name \(prefix)*")
        }
        return nil
    }
}
