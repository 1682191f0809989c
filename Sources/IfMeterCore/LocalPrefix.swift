/// An address prefix that counts as local (docs/SCOPES.md), IPv4 or IPv6. IPv4 is held as
/// IPv6 holds it, mapped (`::ffff:a.b.c.d`, 96 bits more), which is how the BPF programs'
/// longest-prefix-match map keys both families in one trie.
public struct LocalPrefix: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// 16 bytes, network order, the bits past `length` zero.
    public let address: [UInt8]
    /// In the mapped form's bits: 96 + n for an IPv4 /n.
    public let length: UInt8

    /// `bytes` (4 or 16) masked to `length` bits of its own family (≤ 32 or ≤ 128).
    public init?(bytes: [UInt8], length: Int) {
        guard (bytes.count == 4 && (0...32).contains(length)) || (bytes.count == 16 && (0...128).contains(length)) else { return nil }
        let mapped = bytes.count == 4 ? Self.mappedPrefix + bytes : bytes
        let bits = bytes.count == 4 ? length + 96 : length
        self.address = mapped.enumerated().map { index, byte in
            let kept = max(0, min(8, bits - index * 8))
            return kept == 8 ? byte : byte & ~(UInt8(0xFF) >> kept)
        }
        self.length = UInt8(bits)
    }

    /// `10.0.0.0/8`, `fd00::/8`, `192.168.1.7` (a /32), `2001:db8::1` (a /128). Bits past the
    /// length are cleared, as the kernel does with a route.
    public init?(parsing text: some StringProtocol) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let bytes = IPAddressText.parse(parts[0]) else { return nil }
        var length = bytes.count * 8
        if parts.count == 2 {
            guard !parts[1].isEmpty, parts[1].utf8.count <= 3, parts[1].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                  let value = Int(parts[1]) else { return nil }
            length = value
        }
        self.init(bytes: bytes, length: length)
    }

    /// Whether it is an IPv4 prefix (within `::ffff:0:0/96`).
    public var isIPv4: Bool { length >= 96 && Array(address.prefix(12)) == Self.mappedPrefix }

    /// As the config writes it: `10.0.0.0/8`, `fe80::/10`.
    public var description: String {
        isIPv4 ? IPAddressText.format(Array(address.suffix(4))) + "/\(length - 96)"
            : IPAddressText.format(address) + "/\(length)"
    }

    /// Whether `bytes` (4 or 16) is within it.
    public func contains(_ bytes: [UInt8]) -> Bool {
        guard let host = LocalPrefix(bytes: bytes, length: bytes.count * 8) else { return false }
        return LocalPrefix(bytes: host.address, length: Int(length))?.address == address
    }

    public static func < (lhs: LocalPrefix, rhs: LocalPrefix) -> Bool {
        lhs.address == rhs.address ? lhs.length < rhs.length : lhs.address.lexicographicallyPrecedes(rhs.address)
    }

    static let mappedPrefix: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]

    /// What is local on every host, whatever its links: loopback, link-local, multicast, the
    /// limited broadcast and the unspecified address (a DHCP client's source, DAD's).
    public static let builtIn: [LocalPrefix] = [
        "127.0.0.0/8", "169.254.0.0/16", "224.0.0.0/4", "255.255.255.255/32", "0.0.0.0/32",
        "::1/128", "::/128", "fe80::/10", "ff00::/8",
    ].map { LocalPrefix(parsing: $0)! }
}
