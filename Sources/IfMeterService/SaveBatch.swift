import IfMeterCore
import IfMeterHistory

/// What one save writes: taken from the service by ``MeterService/beginSave(at:)``, written
/// by the store (on its own thread), handed back to ``MeterService/finishSave(_:error:)``.
public struct SaveBatch: Sendable {
    let sequence: Int
    /// Failed saves whose writes this one carries.
    let carries: [Int]
    /// The saves this one's commit puts in the database: itself and those it carries
    /// (``SaveLedger``).
    public var writtenBatches: [Int] { [sequence] + carries }
    /// The writes; the store's save empties it once written.
    public var writes: PendingWrites
    /// Events left out of it because saves failed for long.
    let droppedEvents: Int
    /// When the save began.
    public let at: Double
    let log: LogWindow
    /// The links present when it began, whose records (`last_seen`) it writes.
    let present: SlotTable<Link>
    let verdicts: SlotTable<Classification>

    /// Every present link's record, made one at a time as whoever writes the batch reads them
    /// (the store's thread, in the daemon): thousands of records are work, and held at once
    /// they were the largest thing a save allocated.
    public var presentRecords: some Sequence<InterfaceRecord> {
        present.lazy.compactMap { [verdicts, at] ifindex, link in
            verdicts[ifindex].flatMap { InterfaceRecord(link, $0, at: at) }
        }
    }
}

extension InterfaceRecord {
    /// What the database keeps about `link` as of `time`; nil for a link a rule ignores.
    init?(_ link: Link, _ verdict: Classification, at time: Double) {
        if case .ignored = verdict { return nil }
        self.init(name: link.name, interfaceClass: verdict.label, kind: link.kind, mac: link.address, lastSeen: time)
    }
}

/// What a save did.
public struct SaveOutcome: Sendable {
    /// Why it failed; nil when it worked.
    public var error: SaveFailure?
    /// Events that were not stored because saves failed for too long.
    public var droppedEvents: Int
    /// The error of the save before this one.
    public var previousError: SaveFailure?
    /// The estimate log's closed window, to be written.
    public var log = LogWindow()

    /// A save that worked after one that failed.
    public var recovered: Bool { error == nil && previousError != nil }
}

/// Why a save failed, in the store's words: the service keeps it for `status` and `/metrics`
/// and compares it with the last one, and never needs the store's own error type.
public struct SaveFailure: Error, Hashable, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ error: any Error) {
        description = "\(error)"
    }
}
