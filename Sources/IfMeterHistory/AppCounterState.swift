import IfMeterCore

/// What the daemon keeps of the counting program's map between runs (docs/APPS.md,
/// "Counting"): the boot and map it last read, each entry's counters as last read, and the
/// subject each cgroup id was named, so a cgroup gone while the daemon was stopped is still
/// counted under its name.
public struct AppCounterState: Sendable, Equatable {
    public var bootID: String
    public var mapID: UInt32?
    public var counters: [AppCounterKey: Traffic]
    public var names: [UInt64: String]
    /// Every subject with history, and when it was first counted (read at start; a save
    /// writes only the new ones, ``AppCounterWrite/subjects``).
    public var subjects: [String: Double]

    public init(bootID: String, mapID: UInt32?, counters: [AppCounterKey: Traffic] = [:], names: [UInt64: String] = [:],
                subjects: [String: Double] = [:]) {
        self.bootID = bootID
        self.mapID = mapID
        self.counters = counters
        self.names = names
        self.subjects = subjects
    }
}

/// What one save writes of ``AppCounterState``: the rows that changed since the last save that
/// worked, or all of them after one that failed. A steady save of 10,000 cgroups, most of them
/// idle, writes the few that moved.
public struct AppCounterWrite: Sendable, Equatable {
    public var bootID: String
    public var mapID: UInt32?
    /// Every row is replaced: the map is new, or the last save failed.
    public var replaceAll: Bool
    public var counters: [AppCounterKey: Traffic]
    public var removedCounters: [AppCounterKey]
    public var names: [UInt64: String]
    public var removedNames: [UInt64]
    /// Subjects counted for the first time, with when: their history's start.
    public var subjects: [String: Double] = [:]

    public init(bootID: String, mapID: UInt32?, replaceAll: Bool, counters: [AppCounterKey: Traffic],
                removedCounters: [AppCounterKey], names: [UInt64: String], removedNames: [UInt64]) {
        self.bootID = bootID
        self.mapID = mapID
        self.replaceAll = replaceAll
        self.counters = counters
        self.removedCounters = removedCounters
        self.names = names
        self.removedNames = removedNames
    }

    /// The rows of `now` that differ from `saved` (all of them when `saved` is nil).
    public init(from saved: AppCounterState?, to now: AppCounterState) {
        guard let saved, saved.bootID == now.bootID, saved.mapID == now.mapID else {
            self.init(bootID: now.bootID, mapID: now.mapID, replaceAll: true, counters: now.counters,
                      removedCounters: [], names: now.names, removedNames: [])
            return
        }
        self.init(bootID: now.bootID, mapID: now.mapID, replaceAll: false,
                  counters: now.counters.filter { saved.counters[$0.key] != $0.value },
                  removedCounters: saved.counters.keys.filter { now.counters[$0] == nil },
                  names: now.names.filter { saved.names[$0.key] != $0.value },
                  removedNames: saved.names.keys.filter { now.names[$0] == nil })
    }
}
