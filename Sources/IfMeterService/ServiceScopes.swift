import IfMeterApps
import IfMeterCore
import IfMeterHistory

/// The traffic scopes' part of the service (docs/SCOPES.md): each counted link's split into
/// local, internet and unknown (``ScopeSplit``), copied to the network the link is on, and what
/// a save keeps of the interface scope program's map. The applications' scopes are counted with
/// them (``ServiceApps``).
struct ServiceScopes: Sendable {
    private(set) var split: ScopeSplit
    /// Whether the map has been read since the start: until then a save keeps what was loaded.
    private(set) var reading = false
    /// The state the last save began with; nil before the first save and after one that failed.
    private var lastBegun: ScopeCounterState?
    /// Every scope subject with history, with when it was first counted: what the views find
    /// by name (``MeterService/figures(named:)``).
    private(set) var subjects: [String: Double]

    private static let scope = ScopeKind()

    init(loaded: ScopeCounterState?, subjects: [String: Double] = [:], bootID: String) {
        split = ScopeSplit(bootID: loaded?.bootID ?? bootID, mapID: loaded?.mapID, last: loaded?.counters ?? [:])
        lastBegun = loaded
        self.subjects = subjects
    }

    /// Whether a sample's link deltas are split: the map was read, now or before a restart (a
    /// daemon that never read it counts no `scope:` subjects at all).
    var counting: Bool { reading || split.hasRead }

    /// One sample: `counts` (nil when the map could not be read, or the daemon reads none)
    /// against `linkDeltas`, the same ingest's deltas of links. Each `scope:S/IFACE` is also
    /// counted on the network its link is on (`networkOf`), as `scope:S/network:UUID`.
    mutating func ingest(_ counts: ScopeCounts?, linkDeltas: [MeterDelta], link: (Int32) -> AppLink?,
                         networkOf: (Int32) -> String?, bootID: String, at time: Double) -> [MeterDelta] {
        if counts != nil { reading = true }
        guard counting else { return [] }
        // A link counted as its owner's (a container's host-side veth, `container:web`) is not an
        // interface: a scope of it is no subject, and its owner's figures are not split. Links of
        // other classes than the program's (bridges, veths, tunnels) are split only while it
        // covers them: else every one would be a subject of unknown traffic, and say nothing.
        let covered = { [split] (ifindex: Int32) -> Bool in
            counts.map { $0.covers(ifindex) } ?? (split.last[ScopeCounterKey(ifindex: ifindex, scope: .local)] != nil)
        }
        let interface = { (ifindex: Int32) -> AppLink? in
            link(ifindex).flatMap {
                ($0.scoped || covered(ifindex)) && Self.scope.accepts(Substring(TrafficScope.unknown.name + "/" + $0.name)) ? $0 : nil
            }
        }
        var out = split.split(counts, linkDeltas: linkDeltas, link: interface, bootID: bootID, at: time)
        for delta in out {
            guard let network = networkOf(delta.ifindex), let (scope, _) = ScopeKind.parse(delta.name) else { continue }
            var copy = delta
            copy.name = ScopeKind.subject(network, scope: scope)
            out.append(copy)
        }
        for delta in out where subjects[delta.name] == nil { subjects[delta.name] = time }
        return out
    }

    /// What a save beginning now writes; nil when the map was not read since the start or is
    /// as the last save began with.
    mutating func beginSave() -> ScopeCounterState? {
        guard reading, let mapID = split.mapID else { return nil }
        let now = ScopeCounterState(bootID: split.bootID, mapID: mapID, counters: split.last)
        guard now != lastBegun else { return nil }
        lastBegun = now
        return now
    }

    /// A save failed: the next writes the state again, whatever the saves between wrote.
    mutating func saveFailed() { lastBegun = nil }

    /// A subject's history deleted (`forget`).
    mutating func forget(_ subject: String) { subjects[subject] = nil }

    /// Counted as well (``AppAttribution``'s scoped copies of applications): known from now on.
    mutating func counted(_ names: some Sequence<String>, at time: Double) {
        for name in names where subjects[name] == nil && name.hasPrefix("scope:") { subjects[name] = time }
    }
}
