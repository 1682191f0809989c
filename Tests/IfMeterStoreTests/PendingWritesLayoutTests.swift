import IfMeterCore
import IfMeterHistory
import Testing

/// A daemon keeps five pending buckets per busy link between saves: their size is the memory
/// per link (docs/BENCHMARKS.md), so it is pinned here, with the packing it relies on.
@Suite("Pending buckets' layout")
struct PendingWritesLayoutTests {
    @Test("a pending bucket's key is 24 bytes and its tally 48")
    func sizes() {
        #expect(MemoryLayout<PendingWrites.BucketKey>.size == 24)
        #expect(MemoryLayout<BucketTally>.stride == 48)
    }

    @Test("a key gives back its resolution and start, negative and far ones too",
          arguments: [0, 1_796_083_200, -86_400, 253_402_300_799, (1 << 59) - 1, -(1 << 59)] as [Int64])
    func keyRoundTrip(start: Int64) {
        for resolution in Resolution.allCases {
            let key = PendingWrites.BucketKey(name: "wlan0", resolution: resolution, start: start)
            #expect(key.resolution == resolution && key.start == start && key.name == "wlan0")
        }
    }

    @Test("tally counts add up and are held at 2^32 − 1")
    func tallyCounts() {
        var tally = BucketTally(resets: 2, gaps: 3, implausible: 4)
        tally += BucketTally(resets: 1, gaps: 1, implausible: 1)
        #expect((tally.resets, tally.gaps, tally.implausible) == (3, 4, 5))
        tally.resets = Int.max
        #expect(tally.resets == Int(UInt32.max))
    }
}
