import IfMeterCore
import IfMeterHistory
import IfMeterPlans

/// The writes between the meter and the store: pending (also the estimate log's open window),
/// carried after saves that failed, and in saves begun and not finished; and every name's total
/// as the saves that worked left it. A name's total is saved + pending + carried + in flight.
struct SaveQueue: Sendable {
    /// Traffic, events and records counted since the last save began, not yet in the database:
    /// also the estimate log's open window.
    var pending = PendingWrites()
    /// What failed saves held, written with the next batch (kept apart from ``pending``, which
    /// is the log's window).
    private(set) var carried = PendingWrites()
    /// The failed saves whose writes ``carried`` holds.
    private(set) var carriedBatches: [Int] = []
    /// The writes of saves begun and not finished, by batch (the batch's own storage, shared).
    private(set) var inFlight: [Int: PendingWrites] = [:]
    private(set) var nextBatch = 0
    /// Every name's saved all-time total: advanced only by a save that succeeded. Dense: a
    /// dictionary of 4000 names kept 8192 slots of a name and a 48-byte tally.
    private(set) var savedTotals: DenseTable<String, BucketTally>
    private(set) var lastSaveAt: Double?
    /// Why the last save failed; nil once one succeeds.
    private(set) var saveError: SaveFailure?
    /// Where the estimate log's window began.
    private var window: LogWindowBuilder

    init(savedTotals: [String: BucketTally], windowStart: Double) {
        self.savedTotals = DenseTable(savedTotals)
        window = LogWindowBuilder(start: windowStart)
    }

    /// Hands everything pending to a save, with `links` for its records, and closes the
    /// estimate log's window at `now`. Pending starts afresh, summing plans by `routing`.
    mutating func begin(at now: Double, links: SlotTable<Link>, verdicts: SlotTable<Classification>,
                        lostEvents: LostEvents, routing: PlanRouting?) -> SaveBatch {
        nextBatch += 1
        let log = window.close(at: now, writes: pending, links: links, verdicts: verdicts, lostEvents: lostEvents)
        var writes = pending
        if !carried.isEmpty {
            writes.restore(older: carried)
            carried = PendingWrites()
        }
        let batch = SaveBatch(
            sequence: nextBatch, carries: carriedBatches, writes: writes, droppedEvents: writes.droppedEvents, at: now,
            log: log, present: links, verdicts: verdicts)
        carriedBatches = []
        inFlight[batch.sequence] = writes
        // Not reserved at the last window's size: while the batch is written both tables would
        // be whole, and the new one fills in a sample at a time.
        pending = PendingWrites()
        if let routing { pending.sumPlans(for: routing) }
        return batch
    }

    /// Takes a batch's result: written, its totals become saved ones and its writes are
    /// returned; failed, everything in it is carried to the next save.
    mutating func finish(_ batch: SaveBatch, error: SaveFailure?) -> (outcome: SaveOutcome, written: PendingWrites?) {
        var outcome = SaveOutcome(droppedEvents: batch.droppedEvents, previousError: saveError)
        outcome.log = batch.log
        let writes = inFlight.removeValue(forKey: batch.sequence) ?? batch.writes
        guard error == nil else {
            var failed = writes
            failed.restore(older: carried)
            carried = failed
            carriedBatches += batch.writtenBatches
            saveError = error
            outcome.error = error
            return (outcome, nil)
        }
        for (name, entry) in writes.traffic { savedTotals[name, default: BucketTally()] += entry.total }
        saveError = nil
        lastSaveAt = batch.at
        return (outcome, writes)
    }

    /// Takes the store's saved totals again after something wrote history beside the service.
    mutating func replaceSaved(totals: [String: BucketTally]) {
        savedTotals = DenseTable(totals)
    }

    /// Drops `name`'s writes and total once the store deleted its history.
    mutating func forget(_ name: String) {
        pending.forget(name)
        carried.forget(name)
        savedTotals[name] = nil
    }

    /// Whether traffic or events are counted and not yet saved.
    var hasUnsavedTraffic: Bool { pending.hasUnsavedTraffic || carried.hasUnsavedTraffic }

    /// Whether `name` has a total, saved or not.
    func hasTotal(of name: String) -> Bool {
        savedTotals[name] != nil || pending.unsavedTotal(of: name) != nil || carried.unsavedTotal(of: name) != nil
            || inFlight.values.contains { $0.unsavedTotal(of: name) != nil }
    }

    /// A name's total since its history began: saved, plus counted and not yet saved (pending,
    /// carried from failed saves, and in saves not finished).
    func total(of name: String) -> BucketTally {
        var tally = savedTotals[name] ?? BucketTally()
        if let more = pending.unsavedTotal(of: name) { tally += more }
        if let more = carried.unsavedTotal(of: name) { tally += more }
        for part in inFlight.values {
            if let more = part.unsavedTotal(of: name) { tally += more }
        }
        return tally
    }

    /// What is counted and not yet in the database: `names`' traffic (every name's when nil)
    /// and all unsaved events, each part with the saves that write it.
    func unsaved(of names: [String]?) -> UnsavedTraffic {
        var unsaved = UnsavedTraffic()
        unsaved.add(pending, writtenBy: [nextBatch + 1], names: names)
        unsaved.add(carried, writtenBy: carriedBatches, names: names)
        for (batch, writes) in inFlight { unsaved.add(writes, writtenBy: [batch], names: names) }
        return unsaved
    }

    /// Parts whose plan sums are not for `routing` (new, merged after a failed save, a name
    /// forgotten) sum them again.
    mutating func resumPlans(for routing: PlanRouting) {
        if pending.planTallies.generation != routing.generation { pending.sumPlans(for: routing) }
        if carried.planTallies.generation != routing.generation { carried.sumPlans(for: routing) }
        for (batch, part) in inFlight where part.planTallies.generation != routing.generation {
            inFlight[batch]?.sumPlans(for: routing)
        }
    }

    /// A plan's unsaved traffic in `bounds`, summed as it arrived; nil when some part's sums are
    /// not for `routing` (then each member's is added).
    func unsavedSum(ofPlan index: Int, in bounds: PlanBounds, routing: PlanRouting?) -> BucketTally? {
        guard let routing, routing.bounds.indices.contains(index), routing.bounds[index] == bounds,
              var sum = pending.planTallies.sums(for: routing)?[index] else { return nil }
        if !carried.isEmpty {
            guard let more = carried.planTallies.sums(for: routing)?[index] else { return nil }
            sum += more
        }
        for part in inFlight.values {
            guard let more = part.planTallies.sums(for: routing)?[index] else { return nil }
            sum += more
        }
        return sum
    }

    /// `name`'s traffic in `bounds` not yet in the store: pending, carried and in saves not finished.
    func unsavedTally(of name: String, in bounds: PlanBounds) -> BucketTally? {
        var sum = pending.unsavedTally(of: name, in: bounds)
        func add(_ part: PendingWrites) {
            guard let more = part.unsavedTally(of: name, in: bounds) else { return }
            if var total = sum {
                total += more
                sum = total
            } else {
                sum = more
            }
        }
        // Without a failed save or one in flight (nearly always) that is one lookup.
        if !carried.traffic.isEmpty { add(carried) }
        for part in inFlight.values { add(part) }
        return sum
    }
}
