import IfMeterPlans
import IfMeterCore
import IfMeterHistory
import IfMeterKernel
import IfMeterService

/// What data plans add to a sample, in one run: a sample is the kernel's `RTM_GETSTATS` dump of
/// the namespace's links (run where scripts/bench made `links` of them; elsewhere the dump is
/// left out and the share overstated) and the service's ingest of `links` busy links (every
/// counter moved), with a save every other sample as the daemon's defaults do (interval 30 s,
/// save 60 s), then its plans evaluated; once with `plans` plans of 40 interfaces each (named by
/// globs) and once with none.
func planBenchmark(links count: Int = 4000, plans planCount: Int = 100, rounds: Int = 200) throws {
    let names = (0..<count).map { index in "l" + String(String(index + 10000).suffix(4)) }
    let plans = (0..<planCount).map { index in
        Plan(name: "plan\(index)", selectors: [.name("l??" + String(String(index + 100).suffix(2)))],
             limit: 1 << 40, period: .month(startDay: 15))
    }
    // Both services step through the same samples, alternating which goes first, so the machine's
    // drift over the run falls on both alike.
    var without = try PlanRun(names: names, plans: [])
    var with = try PlanRun(names: names, plans: plans)
    let socket = try NetlinkSocket()
    let dumped = try socket.dumpCounters().count
    let dump: () throws -> Void = dumped >= count ? { _ = try socket.dumpCounters() } : {}
    for round in 1...rounds {
        if round % 2 == 0 {
            try without.step(round, dump: dump)
            try with.step(round, dump: dump)
        } else {
            try with.step(round, dump: dump)
            try without.step(round, dump: dump)
        }
    }
    try without.check(rounds: rounds)
    try with.check(rounds: rounds)
    let base = median(without.samples)
    // Paired by round (the two ran back to back), so the machine's drift cancels out.
    let differences = zip(with.samples, without.samples).map { Int64(bitPattern: $0 &- $1) }.sorted()
    let added = Double(differences[differences.count / 2])
    print("plans: \(planCount) plans of \(count / planCount) interfaces at \(count) links, \(rounds) samples, "
        + (dumped >= count ? "each a dump of \(dumped) links and the ingest: " : "ingest only (no \(count) links here to dump): ")
        + "sample median \(Int(base / 1000)) µs without plans; plans add \(Int(added / 1000)) µs "
        + "(median of the differences by round) = \(ratio(base + added, base)), "
        + "of which evaluation \(Int(median(with.evaluations) / 1000)) µs")
}

/// One service and its samples: each sample's ingest plus evaluation, and the evaluation alone, in nanoseconds.
private struct PlanRun {
    let names: [String]
    let plans: [Plan]
    var service: MeterService
    var samples: [UInt64] = []
    var evaluations: [UInt64] = []
    var ingests: [UInt64] = []

    static func instant(_ round: Int) -> MeterInstant {
        MeterInstant(wall: 1_800_000_000 + Double(round) * 30, sinceBootNanoseconds: UInt64(round) * 30_000_000_000)
    }

    init(names: [String], plans: [Plan]) throws {
        self.names = names
        self.plans = plans
        var configuration = ServiceConfiguration(plans: plans)
        configuration.store.calendar = BucketCalendar(zone: .utc)
        service = MeterService(bootID: "bench", configuration: configuration, history: ServiceHistory(), at: 1_800_000_000)
        let links = names.enumerated().map { index, name in
            Link(ifindex: Int32(index + 2), name: name, kind: "veth", arpType: ARPHRD.ether,
                 counters: LinkCounters(rxBytes: 0, txBytes: 0, rxPackets: 0, txPackets: 0), sysfs: SysfsFacts())
        }
        _ = service.start(links: links, unparseable: 0, at: Self.instant(0))
        if let request = service.planBaselinesNeeded(at: Self.instant(0).wall) {
            service.takePlanBaselines(Dictionary(uniqueKeysWithValues: request.periods.map { ($0, [:]) }), for: request)
        }
        _ = service.watchPlans(at: Self.instant(0).wall)
    }

    mutating func step(_ round: Int, dump: () throws -> Void) throws {
        let bytes = UInt64(round) * 1_000_000
        let readings = (0..<names.count).map { index in
            CounterReading(ifindex: Int32(index + 2),
                           counters: LinkCounters(rxBytes: bytes, txBytes: bytes / 2, rxPackets: UInt64(round) * 700,
                                                  txPackets: UInt64(round) * 350))
        }
        let started = nanoseconds()
        try dump()
        _ = service.ingest(linkEvents: [], readings: readings, at: Self.instant(round))
        let ingested = nanoseconds()
        _ = service.watchPlans(at: Self.instant(round).wall)
        let evaluated = nanoseconds()
        samples.append(evaluated - started)
        evaluations.append(evaluated - ingested)
        ingests.append(ingested - started)
        if round % 2 == 0 {
            let batch = service.beginSave(at: Self.instant(round).wall)
            _ = service.finishSave(batch, error: nil)
        }
    }

    /// Both sides did the work a user would see: every plan sums its 40 links' whole traffic.
    func check(rounds: Int) throws {
        let figures = service.planFigures(at: Self.instant(rounds).wall)
        let count = names.count
        guard figures.count == plans.count, figures.allSatisfy({ $0.members.count == count / max(plans.count, 1) }),
              plans.isEmpty || figures.reduce(0, { $0 + $1.tally.traffic.rxBytes }) == UInt64(count) * UInt64(rounds) * 1_000_000 else {
            throw BenchmarkError("the plans did not sum every link's traffic: \(figures.map(\.members.count))")
        }
    }
}
