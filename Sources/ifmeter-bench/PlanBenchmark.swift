import IfMeterCore
import IfMeterHistory
import IfMeterService

/// Plan evaluation beside the sample it follows, in one run: the service ingests a sample of
/// `links` busy links (every counter moved) and, every other sample, a save is taken as the
/// daemon's defaults do (interval 30 s, save 60 s); then it evaluates `plans` plans of 40
/// interfaces each, named by globs. The ratio is evaluation over the ingest alone, which leaves
/// out the kernel dump a real sample also costs, so it overstates the share.
func planBenchmark(links count: Int = 4000, plans planCount: Int = 100, rounds: Int = 200) throws {
    let names = (0..<count).map { index in "l" + String(String(index + 10000).suffix(4)) }
    let plans = (0..<planCount).map { index in
        Plan(name: "plan\(index)", selectors: [.name("l??" + String(String(index + 100).suffix(2)))],
             limit: 1 << 40, period: .month(startDay: 15))
    }
    var configuration = ServiceConfiguration(plans: plans)
    configuration.store.calendar = BucketCalendar(zone: .utc)
    var service = MeterService(bootID: "bench", configuration: configuration, history: ServiceHistory(), at: 1_800_000_000)
    func instant(_ round: Int) -> MeterInstant {
        MeterInstant(wall: 1_800_000_000 + Double(round) * 30, sinceBootNanoseconds: UInt64(round) * 30_000_000_000)
    }
    let links = names.enumerated().map { index, name in
        Link(ifindex: Int32(index + 2), name: name, kind: "veth", arpType: ARPHRD.ether,
             counters: LinkCounters(rxBytes: 0, txBytes: 0, rxPackets: 0, txPackets: 0), sysfs: SysfsFacts())
    }
    _ = service.start(links: links, unparseable: 0, at: instant(0))
    if let request = service.planBaselinesNeeded(at: instant(0).wall) {
        service.takePlanBaselines(Dictionary(uniqueKeysWithValues: request.periods.map { ($0, [:]) }), for: request)
    }
    var ingest: [UInt64] = []
    var evaluate: [UInt64] = []
    var fired = 0
    for round in 1...rounds {
        let bytes = UInt64(round) * 1_000_000
        let readings = (0..<count).map { index in
            CounterReading(ifindex: Int32(index + 2),
                           counters: LinkCounters(rxBytes: bytes, txBytes: bytes / 2, rxPackets: UInt64(round) * 700,
                                                  txPackets: UInt64(round) * 350))
        }
        let started = nanoseconds()
        _ = service.ingest(linkEvents: [], readings: readings, at: instant(round))
        let ingested = nanoseconds()
        fired += service.watchPlans(at: instant(round).wall).events.count
        let evaluated = nanoseconds()
        ingest.append(ingested - started)
        evaluate.append(evaluated - ingested)
        if round % 2 == 0 {
            let batch = service.beginSave(at: instant(round).wall)
            _ = service.finishSave(batch, error: nil)
        }
    }
    let figures = service.planFigures(at: instant(rounds).wall)
    guard figures.count == planCount, figures.allSatisfy({ $0.members.count == count / planCount }),
          figures.reduce(0, { $0 + $1.tally.traffic.rxBytes }) == UInt64(count) * UInt64(rounds) * 1_000_000 else {
        throw BenchmarkError("the plans did not sum every link's traffic: \(figures.map(\.members.count))")
    }
    print("plans: \(planCount) plans of \(count / planCount) interfaces at \(count) links, \(rounds) samples: "
        + "ingest median \(Int(median(ingest) / 1000)) µs, plan evaluation median \(Int(median(evaluate) / 1000)) µs "
        + "= \(ratio(median(evaluate), median(ingest))) of the ingest (\(fired) events)")
}
