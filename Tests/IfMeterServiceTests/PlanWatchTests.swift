import IfMeterPlans
import IfMeterCore
import IfMeterHistory
@testable import IfMeterService
@testable import IfMeterStore
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Plans over the service and a real store, in UTC so days are plain: at(0) is 08:00 on its day.
@Suite("Data plans watched by the service", .ownThread, .timeLimit(.minutes(3)))
struct PlanWatchTests {
    static func configuration(_ plans: [Plan]) -> ServiceConfiguration {
        var configuration = ServiceConfiguration(plans: plans)
        configuration.store.calendar = BucketCalendar(zone: .utc)
        return configuration
    }

    static let daily = Plan(name: "phone", selectors: [.name("eth0")], limit: 1000, period: .day, thresholds: [0.5, 1])

    @Test("what fired reads back as plan events from the counter events it is stored and sent as; no other event is one")
    func planEventsReadBack() throws {
        let harness = try ServiceHarness(configuration: Self.configuration([Self.daily]))
        harness.start([link("eth0", 2, traffic(0, 0))], at: at(0))
        harness.ingest(readings: [reading(2, traffic(1200, 0))], at: at(30))
        let fired = harness.watch(at: at(30))
        let plans = fired.compactMap(PlanEvent.init)
        #expect(plans.map(\.kind) == [.threshold, .threshold])
        #expect(plans.map(\.facts.threshold) == [0.5, 1])
        #expect(plans.map(\.counterEvent) == fired, "stored and read back, a plan event is the same event")
        #expect(Set(plans.map(\.key)).count == 2, "each threshold is its own key for notify")
        #expect(PlanEvent(CounterEvent(kind: .deleted, at: 1, interface: "eth0", detail: "gone")) == nil)
        #expect(PlanEvent(CounterEvent(kind: .planThreshold, at: 1, detail: "no facts")) == nil)
    }

    @Test("each threshold fires once, at the sample that crossed it, and used is saved plus unsaved")
    func thresholdsOnce() throws {
        let harness = try ServiceHarness(configuration: Self.configuration([Self.daily]))
        harness.start([link("eth0", 2, traffic(0, 0))], at: at(0))
        #expect(harness.watch(at: at(0)).isEmpty)
        var fired: [[Double?]] = []
        for (second, rx) in [(30.0, 400 as UInt64), (60, 600), (90, 700), (120, 1100), (150, 1500)] {
            harness.ingest(readings: [reading(2, traffic(rx, 0))], at: at(second))
            fired.append(harness.watch(at: at(second)).map { $0.plan?.threshold })
            if second == 90 { #expect(harness.save(at: at(second)).error == nil) }
        }
        #expect(fired == [[], [0.5], [], [1], []])
        let figures = try #require(harness.service.planFigures(at: at(150).wall).first)
        #expect(figures.used == 1500)
        #expect(figures.fired == [0.5, 1])
        #expect(figures.left == 0)
        #expect(figures.members == ["eth0"])
        #expect(try harness.store.queries.events(kind: .planThreshold).map { $0.plan?.used } == [600], "saved at 90 s")
        harness.save(at: at(150))
        #expect(try harness.store.queries.events(kind: .planThreshold).map { $0.plan?.used } == [600, 1100])
    }

    @Test("a restart after a crossing fires nothing; one crossed while stopped fires once at start, marked")
    func restarts() throws {
        let harness = try ServiceHarness(configuration: Self.configuration([Self.daily]))
        harness.start([link("eth0", 2, traffic(0, 0))], at: at(0))
        harness.ingest(readings: [reading(2, traffic(600, 0))], at: at(30))
        #expect(harness.watch(at: at(30)).map { $0.plan?.threshold } == [0.5])
        harness.save(at: at(30))
        try harness.restart(at: at(60), configuration: Self.configuration([Self.daily]))
        harness.start([link("eth0", 2, traffic(700, 0))], at: at(60))
        #expect(harness.watch(at: at(60)).isEmpty, "50% was stored as fired")
        harness.save(at: at(60))
        try harness.restart(at: at(90), configuration: Self.configuration([Self.daily]))
        harness.start([link("eth0", 2, traffic(1200, 0))], at: at(90))
        let atStart = harness.watch(at: at(90))
        #expect(atStart.map { $0.plan?.threshold } == [1])
        #expect(atStart.first?.plan?.whileDown == true)
        #expect(atStart.first?.plan?.used == 1200)
        harness.ingest(readings: [reading(2, traffic(1300, 0))], at: at(120))
        #expect(harness.watch(at: at(120)).isEmpty)
        harness.save(at: at(120))
        try harness.restart(at: at(150), configuration: Self.configuration([Self.daily]))
        harness.start([link("eth0", 2, traffic(1300, 0))], at: at(150))
        #expect(harness.watch(at: at(150)).isEmpty)
    }

    @Test("a new period is an event, counts only its own traffic, and fires its thresholds again")
    func rollover() throws {
        let harness = try ServiceHarness(configuration: Self.configuration([Self.daily]))
        harness.start([link("eth0", 2, traffic(0, 0))], at: at(0))
        harness.ingest(readings: [reading(2, traffic(600, 0))], at: at(30))
        #expect(harness.watch(at: at(30)).count == 1)
        harness.save(at: at(30))
        // 16 h later: the next day (UTC) began 8 h ago.
        let nextDay = 16.0 * 3600
        harness.ingest(readings: [reading(2, traffic(900, 0))], at: at(nextDay))
        let events = harness.watch(at: at(nextDay))
        #expect(events.map(\.kind) == [.planPeriodStarted])
        let figures = try #require(harness.service.planFigures(at: at(nextDay).wall).first)
        #expect(figures.used == 300, "only the delta of the new day's sample")
        #expect(figures.bounds.start == figures.bounds.end - 86400)
        harness.ingest(readings: [reading(2, traffic(1500, 0))], at: at(nextDay + 30))
        #expect(harness.watch(at: at(nextDay + 30)).map { $0.plan?.threshold } == [0.5])
    }

    @Test("a wall clock set back into an earlier period rolls nothing back: no event, the thresholds fired stay fired, no new period again")
    func neverBack() throws {
        let harness = try ServiceHarness(configuration: Self.configuration([Self.daily]))
        harness.start([link("eth0", 2, traffic(0, 0))], at: at(0))
        harness.ingest(readings: [reading(2, traffic(600, 0))], at: at(30))
        #expect(harness.watch(at: at(30)).map { $0.plan?.threshold } == [0.5])
        harness.save(at: at(30))
        let nextDay = 16.0 * 3600
        harness.ingest(readings: [reading(2, traffic(900, 0))], at: at(nextDay))
        #expect(harness.watch(at: at(nextDay)).map(\.kind) == [.planPeriodStarted])
        // Set back to the first day, with traffic that would cross every threshold there.
        harness.ingest(readings: [reading(2, traffic(5000, 0))], at: at(60))
        #expect(harness.watch(at: at(60)).isEmpty)
        harness.ingest(readings: [reading(2, traffic(5000, 0))], at: at(nextDay + 60))
        #expect(harness.watch(at: at(nextDay + 60)).map(\.kind) != [.planPeriodStarted], "the day watched was never left")
    }

    @Test("a reload that changes one plan keeps the others' state; the changed one starts afresh")
    func reload() throws {
        let other = Plan(name: "vps", selectors: [.name("eth*")], limit: 1000, period: .day, thresholds: [0.5])
        let harness = try ServiceHarness(configuration: Self.configuration([Self.daily, other]))
        harness.start([link("eth0", 2, traffic(0, 0))], at: at(0))
        harness.ingest(readings: [reading(2, traffic(600, 0))], at: at(30))
        #expect(Set(harness.watch(at: at(30)).compactMap { $0.plan?.plan }) == ["phone", "vps"])
        var changed = Self.daily
        changed.direction = .rx
        harness.service.reconfigure(Self.configuration([changed, other]))
        let again = harness.watch(at: at(31))
        #expect(again.compactMap { $0.plan?.plan } == ["phone"], "only the plan whose traffic changed meaning")
        var raised = other
        raised.limit = 2000
        harness.service.reconfigure(Self.configuration([changed, raised]))
        #expect(harness.watch(at: at(32)).isEmpty, "50% of 2000 is a new threshold, not crossed yet")
        harness.ingest(readings: [reading(2, traffic(1000, 0))], at: at(60))
        let crossed = harness.watch(at: at(60)).compactMap { $0.plan.map { "\($0.plan) \($0.threshold ?? 0)" } }
        #expect(crossed.sorted() == ["phone 1.0", "vps 0.5"], "phone's rx reached its limit; vps's half of its new one")
    }

    @Test("a class sums its links, a tunnel with them is labelled, and a failed save loses nothing")
    func classAndFailedSave() throws {
        let plan = Plan(name: "all", selectors: [.interfaceClass(.ethernet), .name("tun0")], limit: 10_000, period: .day)
        let harness = try ServiceHarness(configuration: Self.configuration([plan]))
        harness.start([link("eth0", 2, traffic(0, 0)), link("eth1", 3, traffic(0, 0)),
                       link("tun0", 4, traffic(0, 0), kind: "tun", tunFlags: 1)], at: at(0))
        harness.ingest(readings: [reading(2, traffic(100, 10)), reading(3, traffic(200, 20)), reading(4, traffic(5, 5))],
                       at: at(30))
        harness.failSaves = diskFull
        harness.save(at: at(30))
        harness.ingest(readings: [reading(2, traffic(150, 10)), reading(3, traffic(200, 20)), reading(4, traffic(5, 5))],
                       at: at(60))
        _ = harness.watch(at: at(60))
        var figures = try #require(harness.service.planFigures(at: at(60).wall).first)
        #expect(figures.members == ["eth0", "eth1", "tun0"])
        #expect(figures.used == 150 + 10 + 200 + 20 + 10)
        #expect(figures.countsTunnelTwice)
        #expect(figures.labels.contains(.tunnelDoubleCounted))
        harness.failSaves = nil
        harness.save(at: at(60))
        figures = try #require(harness.service.planFigures(at: at(60).wall).first)
        #expect(figures.used == 390, "the same once saved")
    }
}

extension PlanWatchTests {
    @Test("running sums equal a recount through saves in flight, failed saves, a forget, a new member and a rollover")
    func runningSumsAgree() throws {
        let plan = Plan(name: "eth", selectors: [.name("eth*")], limit: 1 << 40, period: .day)
        let first = Plan(name: "first", selectors: [.name("eth0")], limit: 1 << 40, period: .week(firstWeekday: 1))
        let harness = try ServiceHarness(configuration: Self.configuration([plan, first]))
        harness.start([link("eth0", 2, traffic(0, 0))], at: at(0))
        _ = harness.watch(at: at(0))
        var counters: UInt64 = 0
        func sample(_ second: Double, _ readings: [Int32] = [2]) {
            counters += 1000
            harness.ingest(readings: readings.map { reading($0, traffic(counters * UInt64($0), counters)) }, at: at(second))
            _ = harness.watch(at: at(second))
        }
        sample(30)
        // A save begun and not finished while more is counted, then finished.
        let inFlight = harness.service.beginSave(at: at(30).wall)
        sample(60)
        _ = harness.service.finishSave(inFlight, error: nil)
        sample(90)
        harness.failSaves = diskFull
        harness.save(at: at(90))
        sample(120)
        harness.failSaves = nil
        // A new member appears, carrying traffic at once.
        harness.ingest([.event(.newOrChanged(link("eth1", 3, traffic(0, 0))))], at: at(130))
        sample(150, [2, 3])
        harness.save(at: at(150))
        sample(180, [2, 3])
        _ = harness.service.forget("eth1", at: at(185).wall)
        sample(210, [2, 3])
        // Into the next day (UTC) with a save in flight across midnight.
        let overnight = harness.service.beginSave(at: at(210).wall)
        sample(16 * 3600, [2, 3])
        _ = harness.service.finishSave(overnight, error: nil)
        sample(16 * 3600 + 30, [2, 3])
        let all = harness.service.planFigures(at: at(16 * 3600 + 30).wall)
        let figures = try #require(all.first)
        #expect(figures.members == ["eth0", "eth1"])
        #expect(all.last?.members == ["eth0"], "eth0 is in both plans")
        #expect(all.last.map { $0.tally.traffic.rxBytes } == counters * 2, "the week holds all of eth0's traffic")
        #expect(figures.tally.traffic.txBytes > 0)
    }
}

extension ServiceHarness {
    /// Evaluates the plans as the daemon does, reading any period's saved traffic from the store first.
    func watch(at instant: MeterInstant) -> [CounterEvent] {
        if let request = service.planBaselinesNeeded(at: instant.wall) {
            var tallies: [PlanBounds: [String: BucketTally]] = [:]
            for period in request.periods { tallies[period] = try? store.queries.dailyTallies(from: period.start, to: period.end) }
            service.takePlanBaselines(tallies, for: request)
        }
        let fired = service.watchPlans(at: instant.wall).events
        events += fired
        // The running sums (by plan, as deltas arrive and saves end) equal a recount by name.
        #expect(service.planFigures(at: instant.wall).map(\.tally) == service.planFiguresRecounted(at: instant.wall).map(\.tally))
        return fired
    }
}

/// Plans through the service and a real store in the process's zone, Europe/Berlin (run in a
/// child: ``ZonedChild``), at chosen instants around the 15th, a leap February and DST.
@Suite("Data plans in Europe/Berlin", .enabled(if: ZonedChild.isChild, ZonedChild.skipReason), .ownThread, .timeLimit(.minutes(3)))
struct PlanZonedTests {
    /// A local time, worked out by the C library.
    static func local(_ year: Int32, _ month: Int32, _ day: Int32, _ hour: Int32, _ minute: Int32) -> Double {
        var fields = tm()
        (fields.tm_year, fields.tm_mon, fields.tm_mday, fields.tm_hour, fields.tm_min, fields.tm_isdst) =
            (year - 1900, month - 1, day, hour, minute, -1)
        return Double(mktime(&fields))
    }

    /// Wall and boot time together, from a boot a day before `wall`.
    static func instant(_ wall: Double) -> MeterInstant {
        MeterInstant(wall: wall, sinceBootNanoseconds: UInt64((wall - 1_700_000_000) * 1e9))
    }

    static func harness(_ plan: Plan) throws -> ServiceHarness {
        try ServiceHarness(configuration: ServiceConfiguration(plans: [plan]))
    }

    @Test("a billing month from the 15th: 50 % in the old month, a new period at local midnight, 50 % again")
    func fifteenth() throws {
        let harness = try Self.harness(Plan(name: "phone", selectors: [.name("wwan0")], limit: 1000,
                                            period: .month(startDay: 15), thresholds: [0.5]))
        let start = Self.instant(Self.local(2027, 3, 14, 23, 0))
        harness.start([link("wwan0", 2, traffic(0, 0))], at: start)
        _ = harness.watch(at: start)
        let late = Self.instant(Self.local(2027, 3, 14, 23, 59))
        harness.ingest(readings: [reading(2, traffic(600, 0))], at: late)
        #expect(harness.watch(at: late).map { $0.plan?.periodStart } == [Int64(Self.local(2027, 2, 15, 0, 0))])
        harness.save(at: late)
        let midnight = Self.instant(Self.local(2027, 3, 15, 0, 0))
        harness.ingest(readings: [reading(2, traffic(700, 0))], at: midnight)
        #expect(harness.watch(at: midnight).map(\.kind) == [.planPeriodStarted])
        let figures = try #require(harness.service.planFigures(at: midnight.wall).first)
        #expect(figures.used == 100)
        #expect(figures.bounds == PlanBounds(start: Int64(Self.local(2027, 3, 15, 0, 0)), end: Int64(Self.local(2027, 4, 15, 0, 0))))
        let later = Self.instant(Self.local(2027, 3, 15, 0, 20))
        harness.ingest(readings: [reading(2, traffic(1200, 0))], at: later)
        #expect(harness.watch(at: later).map { $0.plan?.used } == [600])
    }

    @Test("the end of February in a leap year: the month ends after the 29th, and a restart on the 29th reads it back")
    func leapFebruary() throws {
        let plan = Plan(name: "vps", selectors: [.name("eth0")], limit: 10_000, period: .month(startDay: 1), thresholds: [0.5])
        let harness = try Self.harness(plan)
        let first = Self.instant(Self.local(2028, 2, 28, 12, 0))
        harness.start([link("eth0", 2, traffic(0, 0))], at: first)
        _ = harness.watch(at: first)
        let leapDay = Self.instant(Self.local(2028, 2, 29, 23, 50))
        harness.ingest(readings: [reading(2, traffic(3000, 0))], at: leapDay)
        _ = harness.watch(at: leapDay)
        harness.save(at: leapDay)
        try harness.restart(at: leapDay, configuration: ServiceConfiguration(plans: [plan]))
        harness.start([link("eth0", 2, traffic(3000, 0))], at: Self.instant(leapDay.wall + 60))
        _ = harness.watch(at: Self.instant(leapDay.wall + 60))
        let before = try #require(harness.service.planFigures(at: leapDay.wall + 60).first)
        #expect(before.used == 3000, "read back from the daily buckets after the restart")
        #expect(before.bounds.end == Int64(Self.local(2028, 3, 1, 0, 0)))
        #expect(before.bounds.end - before.bounds.start == 29 * 86400)
        let march = Self.instant(Self.local(2028, 3, 1, 0, 5))
        harness.ingest(readings: [reading(2, traffic(8000, 0))], at: march)
        #expect(harness.watch(at: march).map(\.kind) == [.planPeriodStarted, .planThreshold], "5000 of 10000 in March's first minutes")
    }

    @Test("across the spring-forward night a day is 23 hours, one period, and the next begins at local midnight")
    func springForward() throws {
        let harness = try Self.harness(Plan(name: "day", selectors: [.name("eth0")], limit: 1 << 30, period: .day))
        let early = Self.instant(Self.local(2027, 3, 28, 1, 30))
        harness.start([link("eth0", 2, traffic(0, 0))], at: early)
        _ = harness.watch(at: early)
        var counters: UInt64 = 0
        for wall in [Self.local(2027, 3, 28, 3, 30), Self.local(2027, 3, 28, 23, 59)] {
            counters += 1000
            harness.ingest(readings: [reading(2, traffic(counters, 0))], at: Self.instant(wall))
            #expect(harness.watch(at: Self.instant(wall)).isEmpty, "the same period")
            harness.save(at: Self.instant(wall))
        }
        let figures = try #require(harness.service.planFigures(at: Self.local(2027, 3, 28, 23, 59)).first)
        #expect(figures.bounds.end - figures.bounds.start == 23 * 3600)
        #expect(figures.used == 2000)
        let next = Self.instant(Self.local(2027, 3, 29, 0, 1))
        harness.ingest(readings: [reading(2, traffic(2500, 0))], at: next)
        #expect(harness.watch(at: next).map(\.kind) == [.planPeriodStarted])
        #expect(try #require(harness.service.planFigures(at: next.wall).first).used == 500)
    }
}
