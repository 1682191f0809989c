import IfMeterCore
import IfMeterTestSupport
import Testing

@Suite("Meter against ground truth", .ownThread, .timeLimit(.minutes(3)))
struct MeterGroundTruthTests {
    @Test("long random histories: saved totals equal the true totals exactly", arguments: [1, 2, 3, 42, 2026] as [UInt64])
    func randomHistory(seed: UInt64) {
        var simulation = GroundTruthSimulation(seed: seed)
        simulation.run(steps: 4000)
        let expected = simulation.truth.filter { !$0.value.isZero }
        #expect(simulation.committedTotals == expected)
        let kinds = simulation.committed.events.map(\.kind)
        #expect(kinds.filter { $0 == .reset }.count == simulation.counts["reset", default: 0])
        #expect(kinds.filter { $0 == .reboot }.count == simulation.counts["reboot", default: 0])
        #expect(kinds.contains(.wrap), "the 32-bit link must have wrapped")
        #expect(!kinds.contains(.implausible))
        for event in ["deleted", "renamed", "reset", "resync", "restart", "crash", "reboot"] {
            #expect(simulation.counts[event, default: 0] > 0, "the history must include \(event)")
        }
    }
}
