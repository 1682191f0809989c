import IfMeterCore
import IfMeterHistory
import IfMeterMetrics
import IfMeterPage
import IfMeterPlans
import IfMeterPresentation
import IfMeterRequests
import IfMeterService
import IfMeterStore
import IfMeterTestSupport
import IfMeterWire
import Testing

/// A kind of subject declared here alone, as a new kind is declared in its own file: gadgets,
/// listed with the owners, labelled `gadget="NAME"` in `/metrics` and named in plans among
/// interfaces. Nothing outside this file knows it.
struct GadgetKind: SubjectKind {
    var prefix: String? { "gadget" }
    var form: String { "gadget:NAME" }
    var noun: String { "gadget" }
    var plural: String { "gadgets" }
    var section: SubjectSection { .owners }
    var planSelector: PlanSelectorKey { .interfaces }
    func metricLabels(_ name: Substring) -> [(key: String, value: String)] { [("gadget", String(name))] }
    func countedLabel(_ name: Substring) -> EstimateLabel? { .hostSideVeth }
}

@Suite("A subject kind declared in a test alone", .ownThread, .timeLimit(.minutes(3)))
struct SubjectKindTests {
    static let origin = ValueContext.origin
    static let owner = LinkOwner(kind: LinkOwner.Kind("gadgetd", prefix: SubjectName.Prefix(GadgetKind())), name: "toaster",
                                 id: "t-1", alias: "veth9")

    /// A service counting eth0 and a gadget's link, with a plan on every gadget: 5000 bytes
    /// received and 700 sent by the gadget, 90,000 by eth0, saved to a real store.
    static func running() throws -> ValueContext {
        let context = try ValueContext(running: false)
        let plan = Plan(name: "gadgets", selectors: [try Plan.Selector(parsing: "gadget:*")], limit: 10_000, period: .day)
        var service = MeterService(bootID: "b", configuration: ServiceConfiguration(store: context.store.configuration, plans: [plan]),
                                   history: ServiceHistory(), at: origin)
        let links = [
            Link(ifindex: 2, name: "eth0", arpType: 1, operState: .up, counters: LinkCounters(rxBytes: 0, txBytes: 0)),
            Link(ifindex: 9, name: owner.subject, kind: "veth", arpType: 1, operState: .up, owner: owner,
                 counters: LinkCounters(rxBytes: 0, txBytes: 0)),
        ]
        _ = service.start(links: links, unparseable: 0, at: MeterInstant(wall: origin, sinceBootNanoseconds: 1_000_000_000))
        _ = service.ingest(linkEvents: [], readings: [
            CounterReading(ifindex: 2, counters: LinkCounters(rxBytes: 90_000, txBytes: 0)),
            CounterReading(ifindex: 9, counters: LinkCounters(rxBytes: 5000, txBytes: 700)),
        ], at: MeterInstant(wall: origin + 600, sinceBootNanoseconds: 601_000_000_000))
        context.service = service
        context.save()
        // The plan's period read from the store, as the daemon reads it before it watches plans.
        let now = origin + 600
        if let request = context.service?.planBaselinesNeeded(at: now) {
            var tallies: [PlanBounds: [String: BucketTally]] = [:]
            for period in request.periods { tallies[period] = try context.store.queries.dailyTallies(from: period.start, to: period.end) }
            context.service?.takePlanBaselines(tallies, for: request)
        }
        _ = context.service?.watchPlans(at: now)
        return context
    }

    static func query(_ context: ValueContext, _ request: QueryRequest) throws -> QueryResult {
        try RequestHandlers(context: context).storeJob(request)(context.store)
    }

    @Test("registered, it is in query, /metrics, the page and a plan selector; unregistered, a plan refuses its name")
    func declaredInATest() throws {
        #expect(throws: PlanError.self) { try Plan.Selector(parsing: "gadget:toaster") }
        try SubjectKinds.registering(GadgetKind()) {
            let context = try Self.running()
            let service = try #require(context.service)

            var owners = QueryRequest(select: .owners, usage: [UsageSpec(.total)], include: [.interfaces])
            let listed = try Self.query(context, owners)
            #expect(listed.subjects.map(\.name) == ["gadget:toaster"])
            let total = try #require(listed.usage.first?.rows.first)
            #expect(total.rxBytes == 5000 && total.txBytes == 700)
            #expect(total.labels.contains(EstimateLabel.hostSideVeth.rawValue))
            #expect(listed.interfaces?.first?.fields.owner?.kind == "gadgetd")

            let metrics = String(decoding: MetricsExposition.render(
                MetricsInput(snapshot: service.snapshot(), now: Self.origin + 600, keepAbsentSeconds: 3600,
                             sampleDurations: Histogram(bounds: [1]), saveDurations: Histogram(bounds: [1]), version: "test", process: nil),
                format: .prometheus), as: UTF8.self)
            #expect(metrics.contains("ifmeter_interface_receive_bytes_total{interface=\"gadget:toaster\",class=\"virtual\",gadget=\"toaster\"} 5000\n"))
            #expect(metrics.contains("ifmeter_owner_info{interface=\"gadget:toaster\",gadget=\"toaster\",kind=\"gadgetd\""))

            let shown = QueryRequest(usage: OverviewPage.interfacePeriods, include: [.status, .interfaces, .plans])
            owners.usage = OverviewPage.ownerPeriods
            let page = OverviewPage.render(host: "test", interfaces: try Self.query(context, shown), owners: try Self.query(context, owners),
                                           time: TimeText(utc: true), units: Units())
            #expect(page.contains("<h2>Containers, pods, virtual machines, namespaces and gadgets</h2>"))
            #expect(page.contains("data-name=\"gadget:toaster\""))

            let plan = try #require(service.planFigures(at: Self.origin + 600).first)
            #expect(plan.used == 5700)
        }
        #expect(!SubjectKinds.all.contains { $0.prefix == "gadget" })
    }
}
