/// One cgroup's counters on one link of the daemon's network namespace, as the counting
/// program keeps them (docs/APPS.md, "The BPF program"): IP packets, no link-layer header.
public struct AppCounterKey: Hashable, Sendable {
    /// The cgroup's id: the inode number of its directory in the unified hierarchy.
    public var cgroupID: UInt64
    public var ifindex: Int32
    /// Where the packets' far ends were (docs/SCOPES.md): the program keeps an entry a scope.
    public var scope: TrafficScope

    public init(cgroupID: UInt64, ifindex: Int32, scope: TrafficScope = .unknown) {
        self.cgroupID = cgroupID
        self.ifindex = ifindex
        self.scope = scope
    }

    /// Where the program counts what its full map had no room for: no cgroup has id 0.
    public static func overflow(ifindex: Int32) -> AppCounterKey { AppCounterKey(cgroupID: 0, ifindex: ifindex) }

    /// Where what neither map had room for is kept: on no link.
    public static let lost = AppCounterKey(cgroupID: 0, ifindex: 0)

    /// Counted by no cgroup: what a full map had no room for.
    public var isOverflow: Bool { cgroupID == 0 }
}

/// One entry of a read: a cgroup's counters on one link.
public struct AppCount: Hashable, Sendable {
    public var key: AppCounterKey
    public var traffic: Traffic

    public init(key: AppCounterKey, traffic: Traffic) {
        self.key = key
        self.traffic = traffic
    }
}

/// One read of the program's maps.
public struct AppCounts: Sendable, Equatable {
    /// The counts map's id: a map made anew (a reboot, the program attached again) has a new
    /// one, and its counters start from zero.
    public var mapID: UInt32
    /// Every entry, cumulative since the map was made (or the entry was last taken), each key
    /// once, in no order: a list, not a table, since a read of 10,000 entries is compared with
    /// the last one entry by entry, and hashing each into a new table cost more than the rest.
    public var counters: [AppCount]
    /// Entries taken from the map since the last read (their cgroups are gone), with their
    /// final counters: counted once more, then forgotten.
    public var finals: [AppCounterKey: Traffic]
    /// What neither the counts map nor the overflow map had room for, on no known link.
    public var lost: Traffic

    public init(mapID: UInt32, counters: [AppCount], finals: [AppCounterKey: Traffic] = [:], lost: Traffic = .zero) {
        self.mapID = mapID
        self.counters = counters
        self.finals = finals
        self.lost = lost
    }

    /// A read of `counters`, by key.
    public init(mapID: UInt32, counters: [AppCounterKey: Traffic], finals: [AppCounterKey: Traffic] = [:],
                lost: Traffic = .zero) {
        self.init(mapID: mapID, counters: counters.map { AppCount(key: $0.key, traffic: $0.value) }, finals: finals, lost: lost)
    }
}

/// What one read counted for one entry, in the program's terms (IP packets).
public struct AppCounterDelta: Hashable, Sendable {
    public var key: AppCounterKey
    public var traffic: Traffic
    public var flags: MeterDelta.Flags

    public init(key: AppCounterKey, traffic: Traffic, flags: MeterDelta.Flags = []) {
        self.key = key
        self.traffic = traffic
        self.flags = flags
    }
}
