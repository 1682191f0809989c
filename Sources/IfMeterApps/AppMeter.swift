import IfMeterCore

/// Turns reads of the counting program's map into deltas, by the meter's rules for counters
/// (docs/METER.md) as they apply to a map that outlives the daemon (docs/APPS.md, "Counting"):
///
/// - The map's entries are cumulative from the moment the map was made. While the daemon is
///   stopped they go on counting, so a start that finds the map it saved from counts the
///   difference, and loses nothing.
/// - A map the daemon has not seen (a reboot, the program attached again) counts in full from
///   zero: all of it arrived since that map was made. With saved state from before, it is a gap.
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
        let sameMap = currentBoot == bootID && counts.mapID == mapID
        // A map this meter has counted from before, replaced: some of the new one's counts
        // arrived while the daemon did not run.
        let newMapFlags: MeterDelta.Flags = mapID == nil ? [] : .gap
        if !sameMap {
            last = [:]
            bootID = currentBoot
            mapID = counts.mapID
        }
        var deltas: [AppCounterDelta] = []
        deltas.reserveCapacity(counts.counters.count)
        func count(_ key: AppCounterKey, _ now: Traffic) {
            guard let before = last[key] else {
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
            count(key, final)
            last[key] = nil
        }
        for (key, now) in counts.counters {
            count(key, now)
        }
        count(.lost, counts.lost)
        last = counts.counters
        if !counts.lost.isZero { last[.lost] = counts.lost }
        return deltas
    }
}
