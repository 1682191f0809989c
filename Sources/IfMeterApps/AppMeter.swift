import IfMeterCore

/// Turns reads of the counting program's map into deltas, by the meter's rules for counters
/// (docs/METER.md) as they apply to a map that outlives the daemon (docs/APPS.md, "Counting"):
///
/// - The map's entries are cumulative from the moment the map was made. While the daemon is
///   stopped they go on counting, so a start that finds the map it saved from counts the
///   difference, and loses nothing.
/// - The first read of a daemon that never read a map is the baseline: not counted.
/// - A map the daemon has not seen since (a reboot, the program attached again) counts in full
///   from zero, as a gap: all of it arrived since that map was made.
/// - An entry lower than last read was taken and made again (its cgroup's last socket had not
///   gone): counted in full, as a reset.
/// - An entry taken from the map (its cgroup is gone) comes as a final: counted, then forgotten.
public struct AppMeter: Sendable, Equatable {
    /// The boot and map the counters below were read from.
    public private(set) var bootID: String
    public private(set) var mapID: UInt32?
    /// Each entry's counters as last read.
    public private(set) var last: [AppCounterKey: Traffic]

    /// A meter resuming from what a save kept (``saved``); empty for a first start.
    public init(bootID: String, mapID: UInt32? = nil, last: [AppCounterKey: Traffic] = [:]) {
        self.bootID = bootID
        self.mapID = mapID
        self.last = last
    }

    /// What a save keeps, to resume from: the boot, the map and its counters as last read.
    public var saved: (bootID: String, mapID: UInt32?, last: [AppCounterKey: Traffic]) { (bootID, mapID, last) }

    /// Counts a read of `counts`, made in the boot `bootID`. A delta of ``AppCounterKey/lost``
    /// is what the program could keep nowhere.
    public mutating func apply(_ counts: AppCounts, bootID currentBoot: String) -> [AppCounterDelta] {
        // The first read ever is the baseline, as an interface's first sight is (docs/METER.md,
        // rule 0): what the map counted before the daemon first ran is not counted, as the
        // links' traffic of that time is not.
        if mapID == nil, last.isEmpty {
            bootID = currentBoot
            mapID = counts.mapID
            for entry in counts.counters { last[entry.key] = entry.traffic }
            if !counts.lost.isZero { last[.lost] = counts.lost }
            return []
        }
        let sameMap = currentBoot == bootID && counts.mapID == mapID
        // A map this meter has counted from before, replaced: some of the new one's counts
        // arrived while the daemon did not run.
        let newMapFlags: MeterDelta.Flags = .gap
        if !sameMap {
            last = [:]
            bootID = currentBoot
            mapID = counts.mapID
        }
        var deltas: [AppCounterDelta] = []
        func count(_ key: AppCounterKey, _ now: Traffic, before: Traffic?) {
            guard let before else {
                if !now.isZero { deltas.append(AppCounterDelta(key: key, traffic: now, flags: sameMap ? [] : newMapFlags)) }
                return
            }
            if now.isAtLeast(before) {
                let delta = now.combined(with: before, -)
                if !delta.isZero { deltas.append(AppCounterDelta(key: key, traffic: delta)) }
            } else if !now.isZero {
                deltas.append(AppCounterDelta(key: key, traffic: now, flags: .reset))
            }
        }
        // Finals first: an entry taken and made again since the last read has both, and the
        // new entry counts from zero.
        for (key, final) in counts.finals {
            count(key, final, before: last.removeValue(forKey: key))
        }
        // One lookup an entry, and a write only for those that moved: most of 10,000 did not.
        for entry in counts.counters {
            let before = last[entry.key]
            guard before != entry.traffic else { continue }
            count(entry.key, entry.traffic, before: before)
            last[entry.key] = entry.traffic
        }
        let lostBefore = last[.lost]
        count(.lost, counts.lost, before: lostBefore)
        last[.lost] = counts.lost.isZero ? nil : counts.lost
        // Entries gone from the map since the last read (taken, or a map made anew): forgotten.
        if last.count - (last[.lost] == nil ? 0 : 1) > counts.counters.count {
            let present = Set(counts.counters.map(\.key))
            last = last.filter { present.contains($0.key) || $0.key == .lost }
        }
        return deltas
    }
}
