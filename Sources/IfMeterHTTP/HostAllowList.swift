#if canImport(Glibc)
import Glibc
#endif

/// The `Host` headers the HTTP listener answers: its defence against DNS rebinding, where a web
/// page a local browser loads points its own name at 127.0.0.1 and then reads the listener's
/// answers as its own origin's (every interface, container and VM name and figure).
///
/// A rebinding needs a DNS name that the attacker controls, so what is answered is:
/// - an IP address literal (`127.0.0.1:10951`, `[::1]`), any: a page at an address is that
///   address's origin, not the attacker's;
/// - `localhost` and names under `.localhost`, which resolve to loopback only (RFC 6761);
/// - the host's own name, and the names configured (`http_allowed_hosts`); `*` there turns the
///   check off, for a listener behind a proxy that checks names itself;
/// - a request with no `Host` at all (HTTP/1.0), which no browser sends.
///
/// Names compare without case and without a trailing dot; anything else, malformed headers
/// included, is refused (HTTP 421).
public struct HostAllowList: Hashable, Sendable {
    /// Lowercased, no trailing dot.
    public private(set) var names: Set<String>
    /// `*` was configured: every name is answered.
    public private(set) var anyName: Bool

    /// The defaults and `configured` (names, or `*`); a name that cannot be one is refused.
    public init(hostName: String?, configured: [String] = []) throws(HostAllowListError) {
        names = []
        anyName = false
        if let hostName, let name = Self.name(hostName) { names.insert(name) }
        for entry in configured {
            if entry == "*" {
                anyName = true
            } else if let name = Self.name(entry) {
                names.insert(name)
            } else {
                throw HostAllowListError(entry)
            }
        }
    }

    /// Whether a request whose `Host` header is `header` (nil: none) is answered.
    public func allows(_ header: String?) -> Bool {
        guard let header else { return true }
        switch Self.host(of: header) {
        case .address?: return true
        case .name(let name)?: return anyName || name == "localhost" || name.hasSuffix(".localhost") || names.contains(name)
        case nil: return false
        }
    }

    /// What a `Host` header names.
    public enum Host: Hashable, Sendable {
        case address
        case name(String)
    }

    /// The host part of a `Host` header (`name`, `name:port`, `1.2.3.4:port`, `[v6]:port`); nil
    /// when it is not one (RFC 9110 §7.2: uri-host [":" port]).
    public static func host(of header: String) -> Host? {
        var text = Substring(header)
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        guard !text.isEmpty, text.utf8.count <= 300 else { return nil }
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), isPort(text[text.index(after: close)...]) else { return nil }
            return isAddress(String(text[text.index(after: text.startIndex)..<close]), family: AF_INET6) ? .address : nil
        }
        var hostPart = text
        if let colon = text.lastIndex(of: ":") {
            guard isPort(text[colon...]) else { return nil }
            hostPart = text[..<colon]
        }
        // "1.0.0.0." is the address as a browser reads it (the URL standard takes a trailing
        // dot after an IPv4 address), and never a name.
        let withoutDot = hostPart.last == "." ? hostPart.dropLast() : hostPart
        if isAddress(String(withoutDot), family: AF_INET) { return .address }
        return name(String(hostPart)).map(Host.name)
    }

    /// `:digits` or nothing.
    private static func isPort(_ text: Substring) -> Bool {
        guard let colon = text.first else { return true }
        let digits = text.dropFirst()
        return colon == ":" && !digits.isEmpty && digits.count <= 5 && digits.utf8.allSatisfy { (0x30...0x39).contains($0) }
    }

    private static func isAddress(_ text: String, family: Int32) -> Bool {
        var address = in6_addr()
        return inet_pton(family, text, &address) == 1
    }

    /// A DNS name as compared: lowercased ASCII letters, digits, `-` and `.`, at most 253
    /// bytes, one trailing dot dropped, a last label that is not all digits; nil for anything
    /// else.
    static func name(_ text: String) -> String? {
        var bytes = Array(text.utf8)
        if bytes.last == UInt8(ascii: ".") { bytes.removeLast() }
        // "a.." would be read as "a.", which is read again as "a": a name has no empty label.
        guard !bytes.isEmpty, bytes.count <= 253, bytes.first != UInt8(ascii: "."), bytes.last != UInt8(ascii: "."),
              bytes.allSatisfy({ $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") || (0x30...0x39).contains($0)
                  || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }),
              !bytes.indices.dropFirst().contains(where: { bytes[$0] == UInt8(ascii: ".") && bytes[$0 - 1] == UInt8(ascii: ".") })
        else { return nil }
        // A last label of digits only makes a host the URL standard reads as an IPv4 address,
        // or refuses: never a name (the fuzz target found "1.0.0.0." read as the name "1.0.0.0").
        let lastLabel = bytes.split(separator: UInt8(ascii: ".")).last ?? []
        guard !lastLabel.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return String(decoding: bytes.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }, as: UTF8.self)
    }
}

/// A `http_allowed_hosts` entry that is no DNS name.
public struct HostAllowListError: Error, Hashable, Sendable, CustomStringConvertible {
    public var entry: String
    public init(_ entry: String) { self.entry = entry }
    public var description: String {
        "\"\(entry)\" is not a host name (letters, digits, - and ., such as metrics.example.org), nor *"
    }
}
