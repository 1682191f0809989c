/// Which network namespace a link is in, as the daemon numbers the namespaces it meters: 0 is
/// its own (every link metered today, and every row written before namespaces had a number).
/// Other namespaces get theirs from the feed that meters them; the kernel's own names for a
/// namespace (inode, nsid) are facts a feed keeps, not this key.
public struct NamespaceID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The daemon's own network namespace.
    public static let own = NamespaceID(rawValue: 0)

    public static func < (lhs: NamespaceID, rhs: NamespaceID) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { "netns \(rawValue)" }
}

/// A link's identity while it exists: an ifindex is unique only within its namespace, so two
/// namespaces' `eth0` (both often ifindex 2) are two links. Ordered by namespace, then ifindex.
public struct LinkKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var namespace: NamespaceID
    public var ifindex: Int32

    public init(_ namespace: NamespaceID = .own, ifindex: Int32) {
        self.namespace = namespace
        self.ifindex = ifindex
    }

    public static func < (lhs: LinkKey, rhs: LinkKey) -> Bool {
        (lhs.namespace, lhs.ifindex) < (rhs.namespace, rhs.ifindex)
    }

    public var description: String { namespace == .own ? "ifindex \(ifindex)" : "\(namespace) ifindex \(ifindex)" }
}
