import IfMeterPlans
import IfMeterCore

/// One name's traffic not yet in the database, as spans: runs of deltas that fall in the same
/// bucket of every resolution. Every delta goes into all five resolutions, so between two saves
/// a busy link has one span (two when a 5-minute boundary passed), where it had five buckets:
/// its buckets are worked out when the save writes them (``forEachBucket(_:)``).
public struct PendingTraffic: Sendable {
    /// Deltas in `[from, until)`, the latest start and earliest end of the buckets of every
    /// resolution containing the first of them, so any delta in it is in the same buckets.
    public struct Span: Sendable {
        /// `from` shifted left by three, the finest resolution written in the low bits: a span
        /// folded while saves failed no longer writes its 5-minute (or hourly) bucket.
        private let packed: Int64
        /// Where it ends; a folded span takes no more deltas (`until` is `from`).
        let until: Int64
        public internal(set) var tally: BucketTally

        init(from: Int64, until: Int64, finest: Resolution, tally: BucketTally) {
            packed = from << 3 | Int64(finest.index)
            self.until = until
            self.tally = tally
        }

        /// A time inside every bucket the span writes.
        public var from: Int64 { packed >> 3 }
        public var finest: Resolution { Resolution.allCases[Int(packed & 7)] }

        func contains(_ time: Int64) -> Bool { from <= time && time < until }
    }

    /// The first span inline: a busy link's one span needs no allocation of its own.
    private(set) var first: Span
    private(set) var more: [Span] = []
    /// The epoch of the last delta (what the estimate log says it was counted in).
    public internal(set) var epoch: Epoch
    /// The billing day its monthly bucket was decided with.
    let monthStartDay: UInt8
    /// The name's plans in the routing its writes sum plans under (``PlanRouting/slot(of:)``),
    /// -1 for none: found once a batch, not at every delta. In what was padding: no bigger.
    var planSlot: Int32 = -1

    init(first: Span, epoch: Epoch, monthStartDay: Int, planSlot: Int32 = -1) {
        self.first = first
        self.epoch = epoch
        self.monthStartDay = UInt8(clamping: monthStartDay)
        self.planSlot = planSlot
    }

    public var spans: [Span] { [first] + more }
    var spanCount: Int { 1 + more.count }

    /// Everything in it: the unsaved part of the name's total.
    public var total: BucketTally {
        var sum = first.tally
        for span in more { sum += span.tally }
        return sum
    }

    /// The spans whose buckets lie in `bounds` (whole days), summed; nil if none does.
    func tally(in bounds: PlanBounds) -> BucketTally? {
        var sum: BucketTally?
        if bounds.contains(first.from) { sum = first.tally }
        for span in more where bounds.contains(span.from) {
            if sum == nil { sum = span.tally } else { sum! += span.tally }
        }
        return sum
    }

    /// Adds a delta's `tally` at `time` (in `epoch`): to the span that holds it, else to a new
    /// one. `overflowed` when the total had to be held at 2^64 − 1.
    mutating func take(_ tally: BucketTally, at time: Int64, epoch: Epoch, calendar: BucketCalendar)
        -> (overflowed: Bool, newSpan: Bool) {
        var sum = total
        let overflowed = sum.add(tally)
        self.epoch = epoch
        if first.contains(time) {
            first.tally += tally
            return (overflowed, false)
        }
        if let index = more.firstIndex(where: { $0.contains(time) }) {
            more[index].tally += tally
            return (overflowed, false)
        }
        more.append(Self.span(at: time, tally: tally, calendar: calendar, monthStartDay: Int(monthStartDay)))
        return (overflowed, true)
    }

    /// Replaces the spans (after a fold), `spans` not empty.
    mutating func replaceSpans(with spans: [Span]) {
        first = spans[0]
        more = Array(spans.dropFirst())
    }

    /// The span of a delta at `time`: the buckets containing it at every resolution.
    static func span(at time: Int64, tally: BucketTally, calendar: BucketCalendar, monthStartDay: Int) -> Span {
        var from = Int64.min
        var until = Int64.max
        for resolution in Resolution.allCases {
            let start = calendar.start(of: resolution, containing: time, monthStartDay: monthStartDay)
            from = max(from, start)
            until = min(until, calendar.end(of: resolution, startingAt: start, monthStartDay: monthStartDay))
        }
        return Span(from: from, until: until, finest: .fiveMinutes, tally: tally)
    }

    /// Each bucket its spans write, once: spans of one hour share their hourly bucket, and so on.
    func forEachBucket<Failure: Error>(
        calendar: BucketCalendar, _ body: (Resolution, Int64, BucketTally) throws(Failure) -> Void
    ) throws(Failure) {
        if more.isEmpty {
            for resolution in Resolution.allCases where resolution.index >= first.finest.index {
                try body(resolution, calendar.start(of: resolution, containing: first.from, monthStartDay: Int(monthStartDay)),
                         first.tally)
            }
            return
        }
        // By start and resolution packed as one key (any |start| < 2^60).
        var buckets: [Int64: BucketTally] = [:]
        for span in spans {
            for resolution in Resolution.allCases where resolution.index >= span.finest.index {
                let start = calendar.start(of: resolution, containing: span.from, monthStartDay: Int(monthStartDay))
                buckets[start << 3 | Int64(resolution.index), default: BucketTally()] += span.tally
            }
        }
        for (key, tally) in buckets { try body(Resolution.allCases[Int(key & 7)], key >> 3, tally) }
    }
}
