import IfMeterCore
import IfMeterHistory
import IfMeterTestSupport
import Testing

/// A daemon keeps one pending span per busy link between saves: its size is the memory per link
/// (docs/BENCHMARKS.md), so it is pinned here, with the packing it relies on.
@Suite("Pending writes' layout", .ownThread, .timeLimit(.minutes(3)))
struct PendingWritesLayoutTests {
    @Test("a span is 64 bytes, a name's pending traffic 120, a tally 48")
    func sizes() {
        #expect(MemoryLayout<PendingTraffic.Span>.stride == 64)
        #expect(MemoryLayout<PendingTraffic>.stride == 120)
        #expect(MemoryLayout<BucketTally>.stride == 48)
    }

    @Test("a span's buckets are the ones containing its delta, negative and far times too",
          arguments: [0, 1_796_083_200, 1_796_083_499, -86_400, 253_402_300_799] as [Int64])
    func spanBuckets(time: Int64) {
        let calendar = BucketCalendar(zone: .utc)
        var pending = PendingWrites()
        let epoch = Epoch(bootID: "b", ifindex: 2, since: 0)
        pending.add(MeterOutput(deltas: [MeterDelta(name: "wlan0", ifindex: 2, epoch: epoch, traffic: Traffic(rxBytes: 7),
                                                    at: Double(time))]),
                    calendar: calendar, monthStartDay: { _ in 15 })
        var written: [Resolution: Int64] = [:]
        pending.forEachBucket { name, resolution, start, tally in
            #expect(name == "wlan0" && tally.traffic.rxBytes == 7)
            written[resolution] = start
        }
        for resolution in Resolution.allCases {
            #expect(written[resolution] == calendar.start(of: resolution, containing: time, monthStartDay: 15))
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
