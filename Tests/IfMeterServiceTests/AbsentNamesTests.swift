import IfMeterCore
@testable import IfMeterService
import IfMeterTestSupport
import Testing

@Suite("Names with history beside present links", .ownThread, .timeLimit(.minutes(3)))
struct AbsentNamesTests {
    @Test("a present link's name keeps no second record; renamed or deleted, the old name is absent with its history")
    func presentAndAbsent() throws {
        let harness = try ServiceHarness()
        harness.start([link("eth0", 2, traffic(0, 0)), link("eth1", 3, traffic(0, 0))], at: at(0))
        harness.ingest(readings: [reading(2, traffic(500, 50)), reading(3, traffic(10, 10))], at: at(30))
        harness.save(at: at(30))
        try harness.restart(at: at(60))
        harness.start([link("eth0", 2, traffic(500, 50)), link("eth1", 3, traffic(10, 10))], at: at(60))
        #expect(harness.service.table.history.isEmpty, "both names are present: their records are their links")
        // eth0 renamed to wan0 (same ifindex), eth1 deleted.
        harness.ingest([.event(.newOrChanged(link("wan0", 2, traffic(600, 60))))], at: at(90))
        harness.ingest([.event(.deleted(link("eth1", 3, traffic(20, 20))))], at: at(100))
        let names = harness.service.snapshot().interfaces.map { "\($0.name) \($0.present == nil ? "absent" : "present")" }
        #expect(names.sorted() == ["eth0 absent", "eth1 absent", "wan0 present"])
        #expect(harness.figures("eth0")?.lastSeen == at(90).wall)
        #expect((harness.figures("eth0")?.total.traffic.rxBytes ?? 0) + (harness.figures("wan0")?.total.traffic.rxBytes ?? 0) == 600,
                "its history stays with the name, and nothing is counted twice")
        #expect((harness.figures("eth0")?.total.traffic.rxBytes ?? 0) >= 500)
        #expect(harness.figures("eth1")?.total.traffic.rxBytes == 20)
        #expect(harness.service.isKnown("eth0") && harness.service.isKnown("eth1"))
    }
}
