import IfMeterCore

/// Traffic and events counted and not yet in the database, as an answer read from the store
/// adds them: the pending writes, what failed saves carry, and the writes of saves begun and
/// not finished, each with the saves whose commit puts it in the database. Taken on the loop
/// when a question arrives (the tables are shared, not copied), read on the store's thread
/// against its ``SaveLedger``: whichever saves ran between the question and its answer, every
/// byte is counted once, with no save forced.
public struct UnsavedTraffic: Sendable {
    /// One set of writes and the saves that write it.
    struct Part: Sendable {
        var traffic: DenseTable<String, PendingTraffic>
        var events: [CounterEvent]
        var calendar: BucketCalendar
        /// Any one of these in the ledger means the part is in the database.
        var writtenBy: [Int]
    }

    var parts: [Part] = []

    public init() {}

    /// Adds `writes`, which the save numbered by any of `batches` puts in the database; with
    /// `names`, only their traffic (a question about a few names among thousands shares no
    /// table the loop goes on changing).
    public mutating func add(_ writes: PendingWrites, writtenBy batches: [Int], names: [String]? = nil) {
        guard writes.hasUnsavedTraffic else { return }
        var traffic = writes.traffic
        if let names {
            traffic = DenseTable()
            for name in names { if let entry = writes.traffic[name] { traffic[name] = entry } }
        }
        parts.append(Part(traffic: traffic, events: writes.events, calendar: writes.calendar, writtenBy: batches))
    }

    public var isEmpty: Bool { parts.isEmpty }

    /// Every name with unsaved traffic.
    public var names: Set<String> { Set(parts.flatMap(\.traffic.keys)) }

    /// What is still unsaved once the saves in `ledger` are in the database.
    public func unwritten(in ledger: SaveLedger) -> UnsavedTraffic {
        var left = self
        left.parts.removeAll { $0.writtenBy.contains(where: ledger.holds) }
        return left
    }

    /// `name`'s unsaved buckets of `resolution` whose start lies in `[from, to)`, by start.
    public func buckets(of name: String, resolution: Resolution, from: Int64 = .min,
                        to: Int64 = .max) -> [Int64: BucketTally] {
        var buckets: [Int64: BucketTally] = [:]
        for part in parts {
            guard let entry = part.traffic[name] else { continue }
            entry.forEachBucket(calendar: part.calendar) { bucketResolution, start, tally in
                guard bucketResolution == resolution, from <= start, start < to else { return }
                buckets[start, default: BucketTally()] += tally
            }
        }
        return buckets
    }

    /// The unsaved part of `name`'s total, and the start of the 5-minute bucket of its first
    /// unsaved delta; nil when nothing of it is unsaved.
    public func total(of name: String) -> (tally: BucketTally, since: Int64)? {
        var sum: (tally: BucketTally, since: Int64)?
        for part in parts {
            guard let entry = part.traffic[name] else { continue }
            let first = entry.spans.map(\.from).min() ?? 0
            if sum == nil {
                sum = (entry.total, first)
            } else {
                sum!.tally += entry.total
                sum!.since = min(sum!.since, first)
            }
        }
        return sum
    }

    /// The unsaved events for which `include` is true, oldest first.
    public func events(where include: (CounterEvent) -> Bool) -> [CounterEvent] {
        parts.flatMap { $0.events.filter(include) }.sorted { $0.at < $1.at }
    }
}

/// Which of the service's saves the database holds, kept on the store's thread: each save that
/// commits is noted with the failed saves whose writes it carried. Saves are numbered from 1;
/// all below ``writtenBelow`` are held, and the few above it that committed while an older one
/// was still failing are kept by number.
public struct SaveLedger: Hashable, Sendable {
    private var writtenBelow = 1
    private var writtenAbove: Set<Int> = []

    public init() {}

    /// Whether the save numbered `batch` (or a later one carrying its writes) has committed.
    public func holds(_ batch: Int) -> Bool { batch < writtenBelow || writtenAbove.contains(batch) }

    /// Notes that `batches` (a save and those it carried) are in the database.
    public mutating func wrote(_ batches: some Sequence<Int>) {
        for batch in batches where batch >= writtenBelow { writtenAbove.insert(batch) }
        while writtenAbove.remove(writtenBelow) != nil { writtenBelow += 1 }
    }
}
