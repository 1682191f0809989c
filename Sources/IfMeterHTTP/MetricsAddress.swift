/// Where `/metrics` listens: a numeric IPv4 or IPv6 address and a port — `127.0.0.1:10951`,
/// `[::1]:10951`, `:10951` (every address, IPv4 and IPv6), or an address alone for
/// ``defaultPort``.
public struct MetricsAddress: Hashable, Sendable, CustomStringConvertible {
    /// The numeric address; empty for every address.
    public var host: String
    public var port: UInt16

    /// Free in Prometheus's list of default port allocations: the 9100–9999 block has been
    /// full since 2023, and allocations above it had not reached this far (docs/METRICS.md).
    public static let defaultPort: UInt16 = 10951

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `text`; the error says what a valid one looks like.
    public init(parsing text: String) throws(MetricsAddressError) {
        let (host, port): (Substring, Substring?)
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw MetricsAddressError(text) }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.isEmpty || rest.hasPrefix(":") else { throw MetricsAddressError(text) }
            port = rest.isEmpty ? nil : rest.dropFirst()
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            host = text[..<colon]
            port = text[text.index(after: colon)...]
        } else if text.contains(":") {
            // A bare IPv6 address: no port can follow it unbracketed.
            host = Substring(text)
            port = nil
        } else {
            host = Substring(text)
            port = nil
        }
        guard host.allSatisfy({ $0.isHexDigit || $0 == "." || $0 == ":" }), !host.contains("[") else {
            throw MetricsAddressError(text)
        }
        guard let number = port.map({ UInt16($0) }) ?? Self.defaultPort, number > 0 else { throw MetricsAddressError(text) }
        self.host = String(host)
        self.port = number
    }

    public var description: String {
        host.contains(":") || host.isEmpty ? "[\(host.isEmpty ? "::" : host)]:\(port)" : "\(host):\(port)"
    }
}

public struct MetricsAddressError: Error, Hashable, Sendable, CustomStringConvertible {
    public var text: String
    public init(_ text: String) { self.text = text }

    public var description: String {
        "expected a numeric address and port such as 127.0.0.1:\(MetricsAddress.defaultPort), "
            + "[::1]:\(MetricsAddress.defaultPort) or :\(MetricsAddress.defaultPort) (every address), got \"\(text)\""
    }
}
