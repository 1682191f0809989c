import IfMeterCore
import IfMeterHistory

/// One network's figures: what crossed any interface while on it, since it was first seen.
/// Another view of the interfaces' bytes: networks add up to their interfaces.
public struct NetworkFigures: Hashable, Sendable {
    /// What NetworkManager said of it last; nil for `network:unknown`.
    public var record: NetworkRecord?
    /// `network:UUID`, or `network:unknown`.
    public var subject: String
    /// Saved and not yet saved traffic since its history began.
    public var total: BucketTally
    /// `events-lost` events since it was first seen.
    public var eventsLost: Int
    /// The interface it is active on now; nil when it is not.
    public var interface: String?

    /// A VPN's or WireGuard's traffic is counted again on the network beneath it.
    public var isTunnel: Bool { record?.network.isTunnel ?? false }

    /// The labels of its total.
    public var labels: [EstimateLabel] { total.labels(tunnel: isTunnel, eventsLost: eventsLost, subject: subject) }

    /// As an interface's figures, for the usage tables every subject is answered through.
    public var asInterfaceFigures: InterfaceFigures {
        InterfaceFigures(
            name: subject, interfaceClass: isTunnel ? InterfaceClass.tunnel.rawValue : "network",
            classReason: "a NetworkManager connection",
            kind: record?.network.type ?? "unknown", total: total, since: record?.firstSeen, eventsLost: eventsLost,
            present: nil, lastSeen: interface == nil ? record?.lastSeen : nil)
    }
}
