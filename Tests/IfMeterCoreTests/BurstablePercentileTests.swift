import IfMeterCore
import IfMeterTestSupport
import Testing

/// The 95th percentile as burstable billing takes it: every slot of the period a sample, the
/// missing ones zero, the value at rank ⌈0.95 · N⌉.
@Suite("Burstable 95th percentile", .ownThread, .timeLimit(.minutes(1)))
struct BurstablePercentileTests {
    /// A day starting at a slot boundary (2026-03-30 22:00 UTC).
    static let day: Int64 = 1_774_908_000

    /// One bucket a slot from `from`, the i-th with `rx[i]` and `tx[i]` bytes.
    static func buckets(from: Int64, rx: [UInt64], tx: [UInt64]? = nil) -> [(start: Int64, traffic: Traffic)] {
        rx.indices.map { i in
            (from + Int64(i) * 300, Traffic(rxBytes: rx[i], txBytes: tx?[i] ?? 0, rxPackets: 1, txPackets: 1))
        }
    }

    @Test("100 slots of 1…100 bytes: the 95th is the 95th smallest, whatever their order")
    func knownInputs() {
        let values = (1...100).map { UInt64($0) }
        let shuffled = values.shuffled()
        let p = BurstablePercentile(buckets: Self.buckets(from: Self.day, rx: shuffled, tx: shuffled.map { $0 * 2 }),
                                    from: Self.day, to: Self.day + 100 * 300)
        #expect(p.slots == 100 && p.slotsWithTraffic == 100 && p.rank == 95)
        #expect(p.rxBytes == 95 && p.txBytes == 190 && p.totalBytes == 285)
        #expect(p.maxBytes == 190 && p.maxIsTx)
        #expect(p.coverage == 1)
        #expect(BurstablePercentile.bitsPerSecond(p.rxBytes) == 95.0 * 8 / 300)
    }

    @Test("rx, tx and their sum are each sorted on their own")
    func directionsApart() {
        // rx bursts in the first slots, tx in the last: the sum's percentile is neither's.
        let rx = (0..<20).map { UInt64($0 < 2 ? 1000 : 10) }
        let tx = (0..<20).map { UInt64($0 >= 18 ? 500 : 1) }
        let p = BurstablePercentile(buckets: Self.buckets(from: Self.day, rx: rx, tx: tx), from: Self.day, to: Self.day + 20 * 300)
        #expect(p.rank == 19)
        #expect(p.rxBytes == 1000 && p.txBytes == 500 && p.totalBytes == 1001)
        #expect(p.maxBytes == 1000 && !p.maxIsTx)
    }

    @Test("ties: equal rates give that rate at any rank among them")
    func ties() {
        let p = BurstablePercentile(buckets: Self.buckets(from: Self.day, rx: [7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 3, 3]),
                                    from: Self.day, to: Self.day + 12 * 300)
        #expect(p.rank == 12 && p.rxBytes == 7)
        let low = BurstablePercentile(buckets: Self.buckets(from: Self.day, rx: Array(repeating: 9, count: 40)),
                                      from: Self.day, to: Self.day + 40 * 300)
        #expect(low.rank == 38 && low.rxBytes == 9 && low.txBytes == 0)
    }

    @Test("fewer than 20 slots: ⌈0.95 · N⌉ is the largest, so nothing is forgiven")
    func fewSlots() {
        for n in 1..<20 {
            #expect(BurstablePercentile.rank(percent: 95, of: n) == n, "N = \(n)")
        }
        #expect(BurstablePercentile.rank(percent: 95, of: 20) == 19)
        #expect(BurstablePercentile.rank(percent: 95, of: 0) == 0)
        let p = BurstablePercentile(buckets: Self.buckets(from: Self.day, rx: [5, 900, 40]), from: Self.day, to: Self.day + 3 * 300)
        #expect(p.rxBytes == 900)
    }

    @Test("a missing slot is zero traffic: 100 slots, 10 with traffic, the 95th is the 5th smallest of them")
    func missingSlots() {
        var buckets = Self.buckets(from: Self.day, rx: (1...10).map { UInt64($0) * 100 })
        // Spread out: every tenth slot has traffic, the others have no bucket.
        buckets = buckets.enumerated().map { (Self.day + Int64($0.offset) * 3000, $0.element.traffic) }
        let p = BurstablePercentile(buckets: buckets, from: Self.day, to: Self.day + 100 * 300)
        #expect(p.slots == 100 && p.slotsWithTraffic == 10 && p.rank == 95)
        #expect(p.rxBytes == 500)  // 90 zeros, then 100…1000: rank 95 is the 5th, 500.
        #expect(p.coverage == 0.1)
        // With 96 of 100 missing the 95th is zero: four bursts are forgiven.
        let sparse = BurstablePercentile(buckets: Array(buckets.suffix(4)), from: Self.day, to: Self.day + 100 * 300)
        #expect(sparse.rxBytes == 0 && sparse.slotsWithTraffic == 4)
        // No slot yet: nothing known.
        let none = BurstablePercentile(buckets: buckets, from: Self.day, to: Self.day)
        #expect(none.slots == 0 && none.rank == 0 && none.rxBytes == 0 && none.coverage == 0)
    }

    @Test("only slots in [from, to) count: buckets outside, unaligned or repeated are left out")
    func range() {
        var buckets = Self.buckets(from: Self.day - 600, rx: [1_000_000, 1_000_000, 4, 5])
        buckets.append((Self.day + 7, Traffic(rxBytes: 99_999, txBytes: 0, rxPackets: 1, txPackets: 0)))
        buckets.append((Self.day, Traffic(rxBytes: 88_888, txBytes: 0, rxPackets: 1, txPackets: 0)))
        let p = BurstablePercentile(buckets: buckets, from: Self.day, to: Self.day + 600)
        #expect(p.slots == 2 && p.slotsWithTraffic == 2 && p.rxBytes == 5)
        // A range that does not begin on a slot counts the slots whose starts lie in it.
        #expect(BurstablePercentile.slotCount(from: Self.day + 1, to: Self.day + 601) == 2)
        #expect(BurstablePercentile.slotCount(from: Self.day + 1, to: Self.day + 600) == 1)
        #expect(BurstablePercentile.slotCount(from: Self.day, to: Self.day + 1) == 1)
        #expect(BurstablePercentile.slotCount(from: Self.day, to: Self.day - 300) == 0)
        #expect(BurstablePercentile.ceilingSlot(-1) == 0 && BurstablePercentile.ceilingSlot(-301) == -300)
    }

    @Test("DST days in Europe/Berlin: 276 slots on 2026-03-29, 300 on 2026-10-25, 288 on others")
    func dstDays() {
        // The days' bounds as BucketCalendarTests has them (local midnights, from Python's zoneinfo).
        let march29 = (from: Int64(1_774_738_800), to: Int64(1_774_821_600))
        let october25 = (from: Int64(1_792_879_200), to: Int64(1_792_879_200 + 25 * 3600))
        #expect(BurstablePercentile.slotCount(from: march29.from, to: march29.to) == 276)
        #expect(BurstablePercentile.slotCount(from: october25.from, to: october25.to) == 300)
        #expect(BurstablePercentile.slotCount(from: march29.to, to: march29.to + 86400) == 288)
        // 276 slots, 20 with traffic: rank ⌈262.2⌉ = 263, the 7th smallest of the 20 (256 zeros first).
        let bursts = Self.buckets(from: march29.from, rx: (1...20).map { UInt64($0) })
        let short = BurstablePercentile(buckets: bursts, from: march29.from, to: march29.to)
        #expect(short.rank == 263 && short.rxBytes == 7)
        // 300 slots: rank 285, 280 zeros first, the 5th smallest.
        let long = BurstablePercentile(buckets: Self.buckets(from: october25.from, rx: (1...20).map { UInt64($0) }),
                                       from: october25.from, to: october25.to)
        #expect(long.rank == 285 && long.rxBytes == 5)
    }

    @Test("a sum past 2^64 − 1 is held there, never wraps")
    func overflow() {
        let p = BurstablePercentile(buckets: Self.buckets(from: Self.day, rx: [.max], tx: [2]), from: Self.day, to: Self.day + 300)
        #expect(p.totalBytes == .max && p.rxBytes == .max && p.txBytes == 2)
    }
}
