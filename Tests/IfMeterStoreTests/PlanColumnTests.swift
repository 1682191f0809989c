import IfMeterCore
import IfMeterStore
import IfMeterTestSupport
import Testing

/// The events table's plan column is the protocol's one JSON form of a plan event.
@Suite("Plan column", .ownThread, .timeLimit(.minutes(1)))
struct PlanColumnTests {
    @Test("written and read back the protocol's way; a null threshold reads as none, as the protocol reads it")
    func roundTrip() throws {
        let facts = PlanEventFacts(plan: "phone", direction: "both", threshold: 1.125, used: 42, limit: 100,
                                   periodStart: 1_700_000_000, periodEnd: 1_702_592_000, whileDown: true)
        let text = PlanColumn.text(facts)
        #expect(PlanColumn.facts(text) == facts)
        let null = #"{"direction":"rx","limit":5,"period_end":2,"period_start":1,"plan":"p","threshold":null,"used":3,"while_down":false}"#
        let read = try #require(PlanColumn.facts(null))
        #expect(read.threshold == nil && read.limit == 5 && read.direction == "rx")
        #expect(PlanColumn.facts(#"{"plan":"p"}"#) == nil)
        #expect(PlanColumn.facts(text + "x") == nil)
    }
}
