import IfMeterCore

/// A network ifmeter has counted traffic on, as the store keeps it: what NetworkManager said of
/// it last, when it was first and last seen, and the interface it was last on.
public struct NetworkRecord: Hashable, Sendable {
    public var network: Network
    public var firstSeen: Double
    public var lastSeen: Double
    /// The interface it was on when last seen.
    public var interface: String?
    /// Whether it was active on ``interface`` when last recorded: after a restart, what that
    /// interface carried while the daemon was down is counted to no network but
    /// `network:unknown`.
    public var active: Bool

    public init(network: Network, firstSeen: Double, lastSeen: Double, interface: String?, active: Bool) {
        self.network = network
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.interface = interface
        self.active = active
    }
}
