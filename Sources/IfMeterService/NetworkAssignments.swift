import IfMeterCore
import IfMeterHistory

/// Which network each interface NetworkManager manages is on, and every network counted on:
/// what splits an interface's deltas between the networks it was on (docs/NETWORKS.md).
///
/// A switch is a sample boundary: the daemon samples at once when NetworkManager says a device
/// changed, ingests that sample, and only then reports the new state here, so no delta of one
/// network is counted to the next. An interface's network is unknown (`network:unknown`) from
/// a start until NetworkManager is first read, if NetworkManager ever put it on a network, and
/// while NetworkManager is gone.
struct NetworkAssignments: Sendable {
    /// Whether NetworkManager has been read, and whether it is on the bus now.
    enum Manager: Sendable, Equatable {
        case notRead, running, gone
    }

    private(set) var manager = Manager.notRead
    /// The subject each interface's deltas also count under: a network's, or `network:unknown`.
    private(set) var subjectOf: [String: String] = [:]
    /// Every network counted on, by UUID.
    private(set) var records: [String: NetworkRecord]

    /// The networks the history holds (renamed from their UUIDs when `hidingNames`); with
    /// `enabled`, every interface one of them was on is on `network:unknown` until NetworkManager
    /// is read: while the daemon was down (or since its last save, after a crash) it may have
    /// joined one, and what it carried then is in the first sample.
    init(_ loaded: [NetworkRecord], enabled: Bool = true, hidingNames: Bool = false) {
        let kept = hidingNames ? loaded.map { record in
            var hidden = record
            hidden.network = record.network.withNameHidden
            return hidden
        } : loaded
        records = Dictionary(kept.map { ($0.network.uuid, $0) }) { _, last in last }
        guard enabled else { return }
        for record in kept {
            if let interface = record.interface { subjectOf[interface] = NetworkSubject.unknown }
        }
    }

    /// NetworkManager's devices now, each with the connection active on it. Returns the records
    /// that changed, for the store.
    mutating func report(_ devices: [DeviceNetwork], at time: Double) -> [NetworkRecord] {
        manager = .running
        var next: [String: String] = [:]
        var changed: [NetworkRecord] = []
        var active = Set<String>()
        for device in devices {
            guard let network = device.network else { continue }
            next[device.interface] = network.subject
            // A profile active on several devices at once (connection.multi-connect) is one
            // network on each: its record names the first.
            guard active.insert(network.uuid).inserted else { continue }
            let known = records[network.uuid]
            var record = known ?? NetworkRecord(network: network, firstSeen: time, lastSeen: time,
                                                interface: device.interface, active: true)
            if known == nil || record.network != network || record.interface != device.interface || !record.active {
                record.network = network
                record.interface = device.interface
                record.active = true
                record.lastSeen = time
                records[network.uuid] = record
                changed.append(record)
            }
        }
        for (uuid, record) in records where record.active && !active.contains(uuid) {
            var ended = record
            ended.active = false
            ended.lastSeen = time
            records[uuid] = ended
            changed.append(ended)
        }
        subjectOf = next
        return changed
    }

    /// Every network's name hidden (`network_names = hidden` taken by a reload); the records
    /// that changed, for the store.
    mutating func hideNames() -> [NetworkRecord] {
        var changed: [NetworkRecord] = []
        for (uuid, record) in records where record.network != record.network.withNameHidden {
            var hidden = record
            hidden.network = record.network.withNameHidden
            records[uuid] = hidden
            changed.append(hidden)
        }
        return changed
    }

    /// NetworkManager left the bus: what its devices carry from now on is on a network not known.
    mutating func managerGone() {
        manager = .gone
        for interface in subjectOf.keys { subjectOf[interface] = NetworkSubject.unknown }
    }

    /// The networks active now, seen until `time`: what a save records.
    mutating func activeSeen(at time: Double) -> [NetworkRecord] {
        guard manager == .running else { return [] }
        var seen: [NetworkRecord] = []
        for (uuid, record) in records where record.active {
            records[uuid]?.lastSeen = time
            seen.append(records[uuid]!)
        }
        return seen
    }

    /// Whether any interface is on a network (or on `network:unknown`).
    var hasAssignments: Bool { !subjectOf.isEmpty }

    /// Each delta of an interface on a network (or whose network is not known), again under
    /// that network's subject. Only the daemon's own namespace: NetworkManager's devices are there.
    func networkDeltas(of deltas: [MeterDelta]) -> [MeterDelta] {
        guard !subjectOf.isEmpty else { return [] }
        var copies: [MeterDelta] = []
        for delta in deltas where delta.namespace == .own {
            guard let subject = subjectOf[delta.name] else { continue }
            var copy = delta
            copy.name = subject
            copies.append(copy)
        }
        return copies
    }

    /// The interface a network is on now; nil when it is not active.
    func interface(of uuid: String) -> String? {
        guard let record = records[uuid], record.active, manager == .running else { return nil }
        return record.interface
    }

    /// Forgets a network's record (its history is being deleted).
    mutating func forget(_ subject: String) {
        guard NetworkSubject.isNetwork(subject) else { return }
        records[String(subject.dropFirst(NetworkSubject.prefix.count))] = nil
    }
}
