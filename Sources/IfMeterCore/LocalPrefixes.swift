/// The prefixes that count as local (docs/SCOPES.md): the built-in ones, every on-link prefix of
/// the daemon's namespace's links (from their addresses and their routes without a gateway),
/// and `local_prefixes` from the config. What the daemon writes into the programs' map, and
/// the rule they apply, here in Swift for tests: a packet is local when both its addresses are.
public struct LocalPrefixes: Sendable, Equatable {
    /// The links' on-link prefixes, as last read from the kernel.
    public var onLink: Set<LocalPrefix>
    /// `local_prefixes`, as the config has them.
    public var configured: Set<LocalPrefix>

    public init(onLink: Set<LocalPrefix> = [], configured: Set<LocalPrefix> = []) {
        self.onLink = onLink
        self.configured = configured
    }

    /// Everything the map holds, each prefix once.
    public var all: Set<LocalPrefix> { onLink.union(configured).union(LocalPrefix.builtIn) }

    /// The scope of a packet between `source` and `destination` (4 or 16 bytes each): local
    /// when both are within a local prefix. Its far end is the one that is not this host's,
    /// and this host's own addresses are within their links' prefixes; a forwarded packet has
    /// two far ends, and is local only when both are.
    public func scope(source: [UInt8], destination: [UInt8]) -> TrafficScope {
        let prefixes = all
        func isLocal(_ address: [UInt8]) -> Bool { prefixes.contains { $0.contains(address) } }
        return isLocal(source) && isLocal(destination) ? .local : .internet
    }
}
