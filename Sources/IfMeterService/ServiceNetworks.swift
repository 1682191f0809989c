import IfMeterCore

/// The service's part in counting per network (docs/NETWORKS.md): what NetworkManager says each
/// device is on, kept in ``NetworkAssignments``.
extension MeterService {
    /// What NetworkManager says each device is on now, after the sample that closes what they
    /// were on before (``NetworkAssignments``).
    public mutating func reportNetworks(_ devices: [DeviceNetwork], at wall: Double) {
        let reported = configuration.hideNetworkNames
            ? devices.map { DeviceNetwork(interface: $0.interface, network: $0.network?.withNameHidden) } : devices
        let changed = networks.report(reported, at: wall)
        for record in changed { saves.pending.networks[record.network.uuid] = record }
        if !changed.isEmpty { plans.membersChanged() }
    }

    /// Whether some interface's traffic is counted to a network now (`network:unknown` too).
    public var hasInterfacesOnNetworks: Bool { !networks.subjectOf.isEmpty }

    /// How many networks have been counted on (`network:unknown` aside).
    public var networkCount: Int { networks.records.count }

    /// NetworkManager left the bus: its devices' networks are unknown until it is back.
    public mutating func networkManagerGone() {
        networks.managerGone()
    }
}
