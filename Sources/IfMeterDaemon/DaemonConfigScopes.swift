import IfMeterCore

/// The config's keys of traffic scopes (docs/SCOPES.md, docs/CONFIG.md).
public struct ScopeSettings: Hashable, Sendable {
    /// `local_prefixes = CIDR [CIDR…]`, every line's together: local besides the links' own.
    public var localPrefixes: Set<LocalPrefix> = []
    /// `attach_socket`: where `ifmeterd-attach.socket` listens, which the daemon asks to cover
    /// a link with the scope programs.
    public var attachSocket = "/run/ifmeter/attach.sock"

    public init() {}
}

extension DaemonConfig {
    /// `local_prefixes` (repeatable, each line adding) and `attach_socket`; false for another key.
    mutating func setScopes(key: String, value: String) throws(ValueError) -> Bool {
        switch key {
        case "local_prefixes":
            let words = value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," })
            guard !words.isEmpty else { throw ValueError("local_prefixes: expected one or more prefixes (10.0.0.0/8 fd00::/8)") }
            for word in words { scopes.localPrefixes.insert(try Self.localPrefix(word)) }
            // The map holds 16,384 with the links' own and the built-in ones: a config past
            // half of it would fail its write at run time, and leave the map as it was.
            guard scopes.localPrefixes.count <= Self.maximumLocalPrefixes else {
                throw ValueError("local_prefixes: \(scopes.localPrefixes.count) prefixes; at most \(Self.maximumLocalPrefixes) (summarise them: 10.0.0.0/8 for its /24s)")
            }
        case "attach_socket":
            guard value.hasPrefix("/"), !value.split(separator: "/").contains(".."), !value.utf8.contains(0),
                  !value.hasSuffix("/"), value.utf8.count <= 107 else {
                throw ValueError("attach_socket: expected an absolute path of a socket (up to 107 bytes, no ..), got \"\(value)\"")
            }
            scopes.attachSocket = value
        default: return false
        }
        return true
    }

    /// One prefix as the config writes it: its bits past the length must be clear (a typo's
    /// usual shape), and it must not be every address of its family.
    static func localPrefix(_ word: Substring) throws(ValueError) -> LocalPrefix {
        guard let prefix = LocalPrefix(parsing: word) else {
            throw ValueError("local_prefixes: \"\(word)\" is not an address or prefix (10.0.0.0/8, 192.168.1.7, fd00::/8)")
        }
        let written = word.split(separator: "/", maxSplits: 1).first.map { LocalPrefix(parsing: $0) } ?? nil
        if let written, word.contains("/"), written.address != prefix.address {
            throw ValueError("local_prefixes: \(word) has bits set past its length; did you mean \(prefix)?")
        }
        guard prefix.length > (prefix.isIPv4 ? 96 : 0) else {
            throw ValueError("local_prefixes: \(word) would make every address local; name the networks that are")
        }
        // IPv4 is held within ::ffff:0:0/96 (LocalPrefix): an IPv6 prefix as wide that holds it
        // (::/80, ::/1) would make every IPv4 address local.
        if !prefix.isIPv4, prefix.length <= 96, prefix.contains(Self.mappedIPv4) {
            throw ValueError("local_prefixes: \(word) holds ::ffff:0:0/96, every IPv4 address as IPv6 writes it; name the networks that are local")
        }
        return prefix
    }

    /// The most `local_prefixes` a config may name: half the map's 16,384.
    static let maximumLocalPrefixes = 8192

    /// `::ffff:0.0.0.0`, where every IPv4 address lies in the map's mapped form.
    private static let mappedIPv4: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 0, 0]
}
