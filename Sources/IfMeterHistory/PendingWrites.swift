import IfMeterCore

/// What the daemon knows about an interface besides its traffic.
public struct InterfaceRecord: Hashable, Sendable {
    public var name: String
    public var interfaceClass: String?
    public var kind: String
    public var mac: String
    public var lastSeen: Double

    public init(name: String, interfaceClass: String?, kind: String, mac: String, lastSeen: Double) {
        self.name = name
        self.interfaceClass = interfaceClass
        self.kind = kind
        self.mac = mac
        self.lastSeen = lastSeen
    }
}

/// The meter's output not yet in the database, already folded into buckets so memory stays
/// bounded however long the disk stays full. Saved in one transaction with the meter state it
/// belongs to; kept (and added to) when a save fails.
public struct PendingWrites: Sendable {
    /// One bucket: a name's traffic at one resolution from `start`.
    public struct BucketKey: Hashable, Sendable {
        public let name: String
        /// The start (any |start| < 2^60) shifted left by three, the resolution in the low bits:
        /// 24 bytes a key instead of 32, for the five kept per busy link.
        private let packed: Int64

        public init(name: String, resolution: Resolution, start: Int64) {
            self.name = name
            packed = start << 3 | Int64(resolution.index)
        }

        public var start: Int64 { packed >> 3 }
        public var resolution: Resolution { Resolution.allCases[Int(packed & 7)] }
    }

    // What the store writes; only these folds change them.
    public private(set) var buckets: [BucketKey: BucketTally] = [:]
    public private(set) var totals: [String: BucketTally] = [:]
    public private(set) var events: [CounterEvent] = []
    /// Records of links that went (deleted, vanished) since the last save.
    public private(set) var interfaces: [String: InterfaceRecord] = [:]
    /// The meter state these writes lead to, saved in the same transaction.
    public internal(set) var meterState: MeterState?
    /// Events left out because too many piled up unsaved; the daemon reports the number.
    public private(set) var droppedEvents = 0

    /// Events kept in memory while saves fail; beyond this only their number is kept.
    static let maximumEvents = 100_000
    /// Buckets kept in memory while saves fail (about 170 bytes each); past this the oldest
    /// 5-minute, then hourly, buckets are dropped down to three quarters of it.
    public var maximumBuckets = 200_000

    public init() {}

    public var isEmpty: Bool {
        buckets.isEmpty && totals.isEmpty && events.isEmpty && interfaces.isEmpty && meterState == nil
    }

    /// Folds a meter output into every resolution's bucket and the all-time total.
    public mutating func add(_ output: MeterOutput, calendar: BucketCalendar, monthStartDay: (String) -> Int) {
        for delta in output.deltas {
            let tally = BucketTally(delta)
            let time = Int64(delta.at.rounded(.down))
            for resolution in Resolution.allCases {
                let start = calendar.start(of: resolution, containing: time,
                                           monthStartDay: monthStartDay(delta.name))
                buckets[BucketKey(name: delta.name, resolution: resolution, start: start), default: BucketTally()] += tally
            }
            if totals[delta.name, default: BucketTally()].add(tally) {
                append(CounterEvent(
                    kind: .implausible, at: delta.at, interface: delta.name, ifindex: delta.ifindex,
                    delta: delta.traffic, detail: "the total would pass 2^64 − 1; held there"))
            }
        }
        if events.isEmpty, output.events.count <= Self.maximumEvents {
            events = output.events
        } else {
            for event in output.events { append(event) }
        }
        if buckets.count > maximumBuckets, let last = output.deltas.last { fold(at: last.at) }
    }

    /// Bounds memory while saves keep failing: every delta is in every resolution, so dropping
    /// the finest buckets loses resolution, never traffic. An event says how many went.
    private mutating func fold(at time: Double) {
        let target = maximumBuckets * 3 / 4
        var dropped: [Resolution: Int] = [:]
        for resolution in [Resolution.fiveMinutes, .hour] where buckets.count > target {
            let oldest = buckets.keys.filter { $0.resolution == resolution }.sorted { $0.start < $1.start }
            for key in oldest.prefix(buckets.count - target) {
                buckets[key] = nil
                dropped[resolution, default: 0] += 1
            }
        }
        guard !dropped.isEmpty else { return }
        let counts = dropped.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.value) \($0.key.rawValue)" }
        append(CounterEvent(kind: .bucketsFolded, at: time, detail: "the database could not be written for long: "
            + "\(counts.joined(separator: " and ")) buckets of unsaved traffic dropped to bound memory; "
            + "their traffic stays in the coarser buckets and the totals"))
    }

    private mutating func append(_ event: CounterEvent) {
        if events.count < Self.maximumEvents {
            events.append(event)
        } else {
            droppedEvents += 1
        }
    }

    /// True when traffic or events are waiting: what a query must see saved first.
    public var hasUnsavedTraffic: Bool { !buckets.isEmpty || !events.isEmpty }

    /// The not yet saved part of each name's total.
    public var unsavedTotals: [String: BucketTally] { totals }

    /// The meter state to save with the traffic: always the newest.
    public mutating func setMeterState(_ state: MeterState) {
        meterState = state
    }

    /// Takes back an older batch whose save failed, under what was counted since: traffic adds
    /// up, its events come first, and the newer meter state and records win.
    public mutating func restore(older batch: PendingWrites) {
        for (key, tally) in batch.buckets { buckets[key, default: BucketTally()] += tally }
        for (name, tally) in batch.totals { _ = totals[name, default: BucketTally()].add(tally) }
        let newer = events
        events = []
        for event in batch.events + newer { append(event) }
        droppedEvents += batch.droppedEvents
        interfaces.merge(batch.interfaces) { newer, _ in newer }
        meterState = meterState ?? batch.meterState
        if buckets.count > maximumBuckets, let last = events.last { fold(at: last.at) }
    }

    /// Drops everything not yet saved about `name` (its history is being deleted).
    public mutating func forget(_ name: String) {
        buckets = buckets.filter { $0.key.name != name }
        totals[name] = nil
        events.removeAll { $0.interface == name }
        interfaces[name] = nil
    }

    public mutating func note(_ record: InterfaceRecord) {
        interfaces[record.name] = record
    }
}
