#if canImport(Glibc)
import Glibc
#endif

/// IP addresses as text, by the C library's `inet_pton` and `inet_ntop`: what they accept and
/// write, nothing looser (no `10.1`, no zone ids).
public enum IPAddressText {
    /// 4 bytes for an IPv4 address, 16 for IPv6; nil for anything else.
    public static func parse(_ text: some StringProtocol) -> [UInt8]? {
        let string = String(text)
        guard !string.utf8.contains(0), string.utf8.count <= 45 else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, string, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, string, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    /// `192.0.2.1`, `2001:db8::1`; 4 or 16 bytes.
    public static func format(_ bytes: [UInt8]) -> String {
        precondition(bytes.count == 4 || bytes.count == 16, "an IP address is 4 or 16 bytes")
        var text = [CChar](repeating: 0, count: 64)
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        _ = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &text, socklen_t(text.count)) }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
