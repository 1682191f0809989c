import IfMeterCore
import IfMeterHistory
import IfMeterTestSupport
import Testing

/// What an answer adds of the traffic not yet saved, and which saves' writes the store holds.
@Suite("Unsaved traffic and the save ledger", .ownThread, .timeLimit(.minutes(3)))
struct UnsavedTrafficTests {
    @Test("the ledger holds a save once it or a later save carrying it committed, and nothing else",
          arguments: [
              // (saves noted, each with those it carried; asked; held)
              ([[1]], 1, true), ([[1]], 2, false), ([[2]], 1, false), ([[2]], 2, true),
              ([[1], [3]], 2, false), ([[1], [3]], 3, true), ([[1], [3, 2]], 2, true), ([[3, 2], [1]], 4, false),
              ([[1], [2], [3]], 3, true), ([[4, 1, 2, 3]], 3, true), ([[5]], 4, false),
          ] as [([[Int]], Int, Bool)])
    func ledger(noted: [[Int]], asked: Int, held: Bool) {
        var ledger = SaveLedger()
        for batches in noted { ledger.wrote(batches) }
        #expect(ledger.holds(asked) == held)
    }

    @Test("a name's unsaved buckets are each resolution's, in range, summed over parts; parts a save wrote are left out")
    func buckets() {
        let calendar = BucketCalendar(zone: .utc)
        let day: Int64 = 1_796_083_200
        func writes(_ rx: UInt64, at time: Int64) -> PendingWrites {
            var writes = PendingWrites()
            let delta = MeterDelta(name: "eth0", ifindex: 2, epoch: Epoch(bootID: "b", ifindex: 2, since: 0),
                                   traffic: Traffic(rxBytes: rx, txBytes: 0), at: Double(time))
            writes.add(MeterOutput(deltas: [delta]), calendar: calendar, monthStartDay: { _ in 1 })
            return writes
        }
        var unsaved = UnsavedTraffic()
        unsaved.add(writes(100, at: day + 60), writtenBy: [3])
        unsaved.add(writes(20, at: day + 7200), writtenBy: [2])
        unsaved.add(writes(5, at: day + 86_400), writtenBy: [4], names: ["wlan0"])
        #expect(unsaved.buckets(of: "eth0", resolution: .day).mapValues(\.traffic.rxBytes) == [day: 120])
        #expect(unsaved.buckets(of: "eth0", resolution: .hour).mapValues(\.traffic.rxBytes) == [day: 100, day + 7200: 20])
        #expect(unsaved.buckets(of: "eth0", resolution: .hour, from: day + 3600).mapValues(\.traffic.rxBytes) == [day + 7200: 20])
        #expect(unsaved.total(of: "eth0")?.tally.traffic.rxBytes == 120 && unsaved.total(of: "eth0")?.since == day, "since the start of its first 5-minute bucket")
        #expect(unsaved.names == ["eth0"], "a part asked for other names shares none of its traffic")
        var ledger = SaveLedger()
        ledger.wrote([2])
        #expect(unsaved.unwritten(in: ledger).total(of: "eth0")?.tally.traffic.rxBytes == 100)
        ledger.wrote([1, 3])
        #expect(unsaved.unwritten(in: ledger).total(of: "eth0") == nil)
    }
}
