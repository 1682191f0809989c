/// Whether a connection is paid by the byte, as NetworkManager says (its `NMMetered`): set by
/// the profile (`connection.metered`) or guessed by NetworkManager (a phone's hotspot, a modem).
public enum Metered: String, Hashable, Sendable, CaseIterable {
    case unknown, yes, no
    case guessYes = "guess-yes"
    case guessNo = "guess-no"

    /// From NetworkManager's `Metered` property (0 unknown, 1 yes, 2 no, 3 guess-yes,
    /// 4 guess-no); any other value is `unknown`.
    public init(networkManager value: UInt32) {
        self = switch value {
        case 1: .yes
        case 2: .no
        case 3: .guessYes
        case 4: .guessNo
        default: .unknown
        }
    }

    /// Counted by a `metered = yes` plan: set or guessed so.
    public var isMetered: Bool { self == .yes || self == .guessYes }
}

/// A network: a NetworkManager connection that was active on a device. Its identity is the
/// connection's UUID; everything else is what NetworkManager said of it last.
public struct Network: Hashable, Sendable {
    /// The connection's UUID, checked where it entered (``isUUID(_:)``).
    public var uuid: String
    /// The connection's id: the name its user gave it (or NetworkManager, from the SSID).
    public var id: String
    /// What kind of network (``kind(ofConnectionType:)``): `wifi`, `ethernet`, `gsm`, `cdma`,
    /// `vpn`, `wireguard`, …
    public var type: String
    /// A Wi-Fi network's SSID as broadcast: up to 32 bytes of anything.
    public var ssid: [UInt8]?
    public var metered: Metered
    /// A mobile connection's access point name.
    public var apn: String?
    /// A mobile connection's operator, from ModemManager where it runs.
    public var operatorName: String?

    public init(uuid: String, id: String, type: String, ssid: [UInt8]? = nil, metered: Metered = .unknown,
                apn: String? = nil, operatorName: String? = nil) {
        self.uuid = uuid
        self.id = id
        self.type = type
        self.ssid = ssid
        self.metered = metered
        self.apn = apn
        self.operatorName = operatorName
    }

    /// The network as `network_names = hidden` keeps it: named `network-` and eight hex digits
    /// made from its UUID (random per connection profile, so the name tells nothing of the SSID
    /// or the place), with no SSID, APN or operator (a roaming operator names the country); its
    /// type and metered state stay.
    public var withNameHidden: Network {
        var hidden = self
        // FNV-1a: stable across runs and machines, unlike Swift's seeded Hasher.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in uuid.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let digits = String(hash >> 32, radix: 16)
        hidden.id = "network-" + String(repeating: "0", count: 8 - digits.count) + digits
        hidden.ssid = nil
        hidden.apn = nil
        hidden.operatorName = nil
        return hidden
    }

    /// A tunnel's connection (a VPN, WireGuard, a tun or IP tunnel device): what crosses it
    /// crosses the network beneath it again (`tunnel-double-counted`).
    public var isTunnel: Bool { Self.tunnelTypes.contains(type) }

    static let tunnelTypes: Set<String> = ["vpn", "wireguard", "tun", "ip-tunnel"]

    /// The subject its traffic is kept under: `network:` and its UUID.
    public var subject: String { NetworkSubject.prefix + uuid }

    /// A short type from a NetworkManager `connection.type`: `802-11-wireless` is `wifi`,
    /// `802-3-ethernet` is `ethernet`; others (`gsm`, `cdma`, `vpn`, `wireguard`, `bluetooth`,
    /// …) are kept if they are a plain word, else `other`.
    public static func kind(ofConnectionType type: String) -> String {
        switch type {
        case "802-11-wireless": return "wifi"
        case "802-3-ethernet": return "ethernet"
        case "802-11-olpc-mesh": return "mesh"
        default:
            let plain = !type.isEmpty && type.utf8.count <= 32
                && type.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }
            return plain ? type : "other"
        }
    }

    /// Whether `text` is a UUID as NetworkManager writes one (36 characters, lowercase hex and
    /// hyphens in the 8-4-4-4-12 pattern): the only text a subject is named by.
    public static func isUUID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (position, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(position) {
                guard byte == UInt8(ascii: "-") else { return false }
            } else {
                guard (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66) else { return false }
            }
        }
        return true
    }
}

/// What NetworkManager says one device is on now.
public struct DeviceNetwork: Hashable, Sendable {
    /// The interface its traffic crosses, in the daemon's namespace (a modem's IP interface,
    /// `wwan0`, not its control port).
    public var interface: String
    /// The connection active on it; nil while it is on none.
    public var network: Network?

    public init(interface: String, network: Network?) {
        self.interface = interface
        self.network = network
    }
}

/// The subjects networks' traffic is kept under, beside the interfaces'.
public enum NetworkSubject {
    /// `network:` then the connection's UUID.
    public static let prefix = NetworkKind().prefix! + ":"
    /// What an interface NetworkManager manages crossed while its network was not known:
    /// NetworkManager was not running, or the daemon was not.
    public static let unknown = prefix + NetworkKind.unknownName

    /// Whether `subject` is a network's (never an interface's or an owner's).
    public static func isNetwork(_ subject: String) -> Bool { subject.utf8.starts(with: prefix.utf8) }
}
