import IfMeterCore
import IfMeterHistory

/// The save journal's side of the service (docs/CONFIG.md, `fold_interval`): between folds, a
/// save that only carries traffic is an append of the deltas counted since the last one, and
/// where every epoch got to; after a kill, the appends are counted again at start.
extension MeterService {
    /// What the next journal append writes, or nil when the next save must be a full one:
    /// anything but traffic is pending (an event, a link's record, a plan's or network's state),
    /// applications or scopes are counted (their maps' state goes with the buckets), or a save
    /// failed or is out (its writes would be in neither the database nor the journal). Takes the deltas:
    /// they stay pending for the next full save, and the next append holds only newer ones.
    public mutating func beginJournal() -> JournalRecord? {
        let pending = saves.pending
        guard meter.phase == .running, !apps.reading, apps.meter.mapID == nil, !scopes.counting,
              pending.events.isEmpty, pending.interfaces.isEmpty, pending.planStates.isEmpty,
              pending.networks.isEmpty, pending.apps == nil, pending.scopes == nil, pending.droppedEvents == 0,
              saves.carried.isEmpty, saves.inFlight.isEmpty, saves.saveError == nil,
              journalDeltas.allSatisfy({ $0.epoch.bootID == meter.bootID && $0.name.utf8.count <= JournalRecord.maximumNameBytes })
        else { return nil }
        let state = meter.exportState()
        // Only the epochs whose counters moved since the database or the last append had them:
        // an idle link's instant alone changes nothing a restart counts.
        let progress = state.interfaces.compactMap { interface -> JournalRecord.Progress? in
            let key = JournalKey(interface.namespace, interface.ifindex, interface.epoch.generation)
            guard interface.epoch.bootID == meter.bootID, journalledLast[key] != interface.last else { return nil }
            return JournalRecord.Progress(namespace: interface.namespace, ifindex: interface.ifindex,
                                          generation: interface.epoch.generation, last: interface.last,
                                          lastInstant: interface.lastInstant)
        }
        for entry in progress { journalledLast[JournalKey(entry.namespace, entry.ifindex, entry.generation)] = entry.last }
        defer { journalDeltas = [] }
        return JournalRecord(bootID: meter.bootID, deltas: journalDeltas, progress: progress,
                             lastInstant: state.lastInstant, clockAnchor: clock.anchor)
    }

    /// Each of `state`'s epochs' counters, by the journal's key.
    static func lastCounters(_ state: MeterState) -> [JournalKey: Traffic] {
        var counters: [JournalKey: Traffic] = [:]
        for interface in state.interfaces { counters[JournalKey(interface.namespace, interface.ifindex, interface.epoch.generation)] = interface.last }
        return counters
    }

    /// The meter state the database held, moved on by the journal's appends: each epoch to
    /// where the last append says it got, the last instant and the clock's anchor too.
    static func journalled(_ saved: MeterState, _ records: [JournalRecord]) -> MeterState {
        guard !records.isEmpty else { return saved }
        var state = saved
        var latest: [JournalKey: JournalRecord.Progress] = [:]
        for record in records where record.bootID == saved.bootID {
            for entry in record.progress { latest[JournalKey(entry.namespace, entry.ifindex, entry.generation)] = entry }
            if let instant = record.lastInstant { state.lastInstant = instant }
            if let anchor = record.clockAnchor { state.clockAnchor = anchor }
        }
        state.interfaces = saved.interfaces.map { interface in
            guard interface.epoch.bootID == saved.bootID,
                  let entry = latest[JournalKey(interface.namespace, interface.ifindex, interface.epoch.generation)]
            else { return interface }
            var moved = interface
            moved.last = entry.last
            moved.lastInstant = entry.lastInstant
            return moved
        }
        return state
    }
}

/// An epoch as the journal names it.
struct JournalKey: Hashable {
    var namespace: NamespaceID
    var ifindex: Int32
    var generation: Int

    init(_ namespace: NamespaceID, _ ifindex: Int32, _ generation: Int) {
        (self.namespace, self.ifindex, self.generation) = (namespace, ifindex, generation)
    }
}
