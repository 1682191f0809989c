/// The `ARPHRD_*` hardware types the classifier recognises (from `<linux/if_arp.h>`).
public enum ARPHRD {
    public static let ether: UInt16 = 1
    public static let ppp: UInt16 = 512
    public static let rawIP: UInt16 = 519
    public static let ipip: UInt16 = 768
    public static let tunnel6: UInt16 = 769
    public static let loopback: UInt16 = 772
    public static let sit: UInt16 = 776
    public static let ipgre: UInt16 = 778
    public static let ieee80211Radiotap: UInt16 = 803
    public static let none: UInt16 = 65534
    /// "Nothing is known": what the getifaddrs source reports for links without an address.
    public static let void: UInt16 = 0xFFFF

    /// The kernel's name for a type, for `class_reason` and diagnostics.
    public static func name(_ type: UInt16) -> String {
        switch type {
        case ether: "ARPHRD_ETHER"
        case ppp: "ARPHRD_PPP"
        case rawIP: "ARPHRD_RAWIP"
        case ipip: "ARPHRD_TUNNEL"
        case tunnel6: "ARPHRD_TUNNEL6"
        case loopback: "ARPHRD_LOOPBACK"
        case sit: "ARPHRD_SIT"
        case ipgre: "ARPHRD_IPGRE"
        case ieee80211Radiotap: "ARPHRD_IEEE80211_RADIOTAP"
        case none: "ARPHRD_NONE"
        case void: "ARPHRD_VOID"
        default: "ARPHRD \(type)"
        }
    }
}
