/// The 95th percentile of 5-minute rates as burstable (transit) billing takes it: every
/// 5-minute slot of the period so far is one sample, a slot without a bucket counts as zero
/// traffic, the samples are sorted, and the value at rank ⌈0.95 · N⌉ (1-based, smallest first)
/// is the percentile; the top 5 % of slots are the bursts not billed. rx, tx and their sum per
/// slot are each sorted on their own; transit bills the larger of the rx and tx percentiles.
/// The one place ifmeter computes it (docs/CLI.md, "95th"): exact, in whole bytes per slot.
public struct BurstablePercentile: Hashable, Sendable {
    /// A slot is five minutes, aligned to Unix time as the 5-minute buckets are.
    public static let slotSeconds: Int64 = 300

    /// The percentile asked for, 1 to 100.
    public var percent: Int
    /// N: the slots of the period so far, every one a sample.
    public var slots: Int
    /// Slots with a bucket: some traffic counted in them. The others count as zero.
    public var slotsWithTraffic: Int
    /// The rank taken, ⌈percent · N / 100⌉ (1-based); 0 when there is no slot.
    public var rank: Int
    /// The bytes of the slot at that rank: received, transmitted, and of rx + tx per slot.
    public var rxBytes: UInt64
    public var txBytes: UInt64
    public var totalBytes: UInt64

    /// Slots with traffic over slots (0 without slots).
    public var coverage: Double { slots == 0 ? 0 : Double(slotsWithTraffic) / Double(slots) }
    /// What transit bills: the larger of the rx and tx percentiles.
    public var maxBytes: UInt64 { Swift.max(rxBytes, txBytes) }
    /// Whether `maxBytes` is tx's (rx's when they are equal).
    public var maxIsTx: Bool { txBytes > rxBytes }

    /// A slot's bytes as a rate in bits per second.
    public static func bitsPerSecond(_ bytes: UInt64) -> Double { Double(bytes) * 8 / Double(slotSeconds) }

    /// The slots whose starts lie in `[from, to)`: the multiples of ``slotSeconds`` there. A
    /// local day is 288 of them, 276 on a spring-forward day and 300 on a fall-back day.
    public static func slotCount(from: Int64, to: Int64) -> Int {
        guard to > from else { return 0 }
        let first = ceilingSlot(from)
        guard first < to else { return 0 }
        return Int((to - 1 - first) / slotSeconds) + 1
    }

    /// The first slot start at or after `time`.
    public static func ceilingSlot(_ time: Int64) -> Int64 {
        let floor = time - ((time % slotSeconds) + slotSeconds) % slotSeconds
        return floor == time ? time : floor + slotSeconds
    }

    /// The 1-based rank of the `percent`th percentile of `count` samples: ⌈percent · count / 100⌉.
    public static func rank(percent: Int, of count: Int) -> Int {
        count == 0 ? 0 : (percent * count + 99) / 100
    }

    /// The percentile of the slots whose starts lie in `[from, to)`; `buckets` are the slots'
    /// traffic by start (a bucket outside the range, or not at a slot's start, is left out), and
    /// every slot without one counts as zero.
    public init(percent: Int = 95, buckets: [(start: Int64, traffic: Traffic)], from: Int64, to: Int64) {
        precondition((1...100).contains(percent), "a percentile is 1 to 100")
        let inRange = buckets.filter { $0.start >= from && $0.start < to && $0.start % Self.slotSeconds == 0 }
        var seen = Set<Int64>()
        var rx: [UInt64] = [], tx: [UInt64] = [], total: [UInt64] = []
        for bucket in inRange where seen.insert(bucket.start).inserted {
            rx.append(bucket.traffic.rxBytes)
            tx.append(bucket.traffic.txBytes)
            let (sum, overflow) = bucket.traffic.rxBytes.addingReportingOverflow(bucket.traffic.txBytes)
            total.append(overflow ? .max : sum)
        }
        let slots = Swift.max(Self.slotCount(from: from, to: to), seen.count)
        let rank = Self.rank(percent: percent, of: slots)
        let zeros = slots - seen.count
        /// The value at `rank` of `values` sorted with `zeros` zeros before them.
        func at(_ values: [UInt64]) -> UInt64 {
            guard rank > zeros else { return 0 }
            return values.sorted()[rank - zeros - 1]
        }
        self.init(percent: percent, slots: slots, slotsWithTraffic: seen.count, rank: rank, rxBytes: at(rx),
                  txBytes: at(tx), totalBytes: at(total))
    }

    public init(percent: Int, slots: Int, slotsWithTraffic: Int, rank: Int, rxBytes: UInt64, txBytes: UInt64,
                totalBytes: UInt64) {
        (self.percent, self.slots, self.slotsWithTraffic, self.rank) = (percent, slots, slotsWithTraffic, rank)
        (self.rxBytes, self.txBytes, self.totalBytes) = (rxBytes, txBytes, totalBytes)
    }
}
