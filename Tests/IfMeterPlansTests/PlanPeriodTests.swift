import IfMeterPlans
import IfMeterTestSupport
import IfMeterCore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Plan periods in the process's zone, Europe/Berlin (run in a child: ``ZonedChild``).
@Suite("Plan periods", .enabled(if: ZonedChild.isChild, ZonedChild.skipReason), .ownThread, .timeLimit(.minutes(3)))
struct PlanPeriodTests {
    let calendar = BucketCalendar(zone: .local)

    /// Local midnight of a date, worked out by the C library.
    func midnight(_ year: Int32, _ month: Int32, _ day: Int32) -> Int64 {
        var local = tm()
        (local.tm_year, local.tm_mon, local.tm_mday, local.tm_isdst) = (year - 1900, month - 1, day, -1)
        return Int64(mktime(&local))
    }

    @Test("a billing month from the 15th rolls over at local midnight of the 15th")
    func monthFromFifteenth() {
        let period = PlanPeriod.month(startDay: 15)
        let before = period.bounds(containing: midnight(2027, 3, 15) - 1, calendar: calendar)
        let after = period.bounds(containing: midnight(2027, 3, 15), calendar: calendar)
        #expect(before == PlanBounds(start: midnight(2027, 2, 15), end: midnight(2027, 3, 15)))
        #expect(after == PlanBounds(start: midnight(2027, 3, 15), end: midnight(2027, 4, 15)))
        #expect(after.end - after.start == 31 * 86400 - 3600, "the spring-forward night is in it")
    }

    @Test("the end of February in a leap year: a 29-day month, a day on the 29th, runs of days across it")
    func leapFebruary() {
        let february = PlanPeriod.month(startDay: 1).bounds(containing: midnight(2028, 2, 29) + 3600, calendar: calendar)
        #expect(february == PlanBounds(start: midnight(2028, 2, 1), end: midnight(2028, 3, 1)))
        #expect(february.end - february.start == 29 * 86400)
        let day = PlanPeriod.day.bounds(containing: midnight(2028, 2, 29) + 7200, calendar: calendar)
        #expect(day == PlanBounds(start: midnight(2028, 2, 29), end: midnight(2028, 3, 1)))
        let from = DayNumber.parsing("2028-02-26")!
        let week = PlanPeriod.days(7, from: from).bounds(containing: midnight(2028, 3, 3), calendar: calendar)
        #expect(week == PlanBounds(start: midnight(2028, 2, 26), end: midnight(2028, 3, 4)))
        let before = PlanPeriod.days(7, from: from).bounds(containing: midnight(2028, 2, 25), calendar: calendar)
        #expect(before == PlanBounds(start: midnight(2028, 2, 19), end: midnight(2028, 2, 26)), "periods before the first one too")
        #expect(DayNumber.parsing("2027-02-29") == nil, "not a date")
    }

    @Test("across a DST change a week is an hour short or long, and its days 23 or 25 hours")
    func daylightSaving() {
        let spring = PlanPeriod.week(firstWeekday: 1).bounds(containing: midnight(2027, 3, 28) + 12 * 3600, calendar: calendar)
        #expect(spring == PlanBounds(start: midnight(2027, 3, 22), end: midnight(2027, 3, 29)))
        #expect(spring.end - spring.start == 7 * 86400 - 3600)
        let sunday = PlanPeriod.week(firstWeekday: 7).bounds(containing: midnight(2027, 10, 31) + 23 * 3600, calendar: calendar)
        #expect(sunday == PlanBounds(start: midnight(2027, 10, 31), end: midnight(2027, 11, 7)))
        #expect(sunday.end - sunday.start == 7 * 86400 + 3600)
        let fallBack = PlanPeriod.day.bounds(containing: midnight(2027, 10, 31) + 3 * 3600, calendar: calendar)
        #expect(fallBack.end - fallBack.start == 25 * 3600)
    }
}

@Suite("Plan config values", .ownThread, .timeLimit(.minutes(3)))
struct PlanValueTests {
    @Test("a plan may name containers', pods' and virtual machines' subjects and globs of them; other names keep their rules")
    func containerSelectors() throws {
        let web = try Plan.Selector(parsing: "container:web*")
        #expect(web.matches("container:web-1", interfaceClass: "virtual"))
        #expect(!web.matches("web-1", interfaceClass: "virtual"))
        #expect(try Plan.Selector(parsing: "netns:blue").matches("netns:blue", interfaceClass: nil))
        // Every NIC of one VM: its first is vm:db, the others vm:db#N.
        let db = try Plan.Selector(parsing: "vm:db#*")
        #expect(db.matches("vm:db#2", interfaceClass: "virtual") && !db.matches("vm:db", interfaceClass: "virtual"))
        #expect(try Plan.Selector(parsing: "vm:*").matches("vm:db", interfaceClass: nil))
        // The longest pod Kubernetes names, and every pod of a namespace.
        let longest = "pod:" + String(repeating: "n", count: 63) + "/" + String(repeating: "p", count: 253) + "#1234567"
        #expect(try Plan.Selector(parsing: longest).matches(longest, interfaceClass: "virtual"))
        #expect(try Plan.Selector(parsing: "pod:team-a/*").matches("pod:team-a/web-0", interfaceClass: "virtual"))
        for bad in ["container:", "vm:", "pod:", "eth0:1", "a/b", "container:a b", longest + "1234"] {
            #expect(throws: PlanError.self) { try Plan.Selector(parsing: bad) }
        }
    }

    @Test("limits, thresholds and periods as the config writes them; the rest is an error that says why")
    func values() throws {
        #expect(try Plan.limit(parsing: "20G") == 20 << 30)
        #expect(try Plan.limit(parsing: "20GiB") == 20 << 30)
        #expect(try Plan.limit(parsing: "20GB") == 20_000_000_000)
        #expect(try Plan.limit(parsing: "1.5T") == 3 << 39)
        #expect(try Plan.thresholds(parsing: "100%, 80%, 90") == [0.8, 0.9, 1])
        #expect(try PlanPeriod(parsing: "month", monthStartDay: 15) == .month(startDay: 15))
        #expect(try PlanPeriod(parsing: "week sunday", monthStartDay: 1) == .week(firstWeekday: 7))
        #expect(try PlanPeriod(parsing: "7 days from 2026-12-01", monthStartDay: 1).description == "7 days from 2026-12-01")
        for bad in ["", "0", "-1G", "20X", "1e30", "nan"] {
            #expect(throws: PlanError.self, "\(bad)") { try Plan.limit(parsing: bad) }
        }
        #expect(throws: PlanError.self) { try Plan.thresholds(parsing: "0%") }
        for bad in ["month 29", "fortnight", "week someday", "0 days from 2026-12-01", "7 days from 2026-13-01"] {
            #expect(throws: PlanError.self, "\(bad)") { try PlanPeriod(parsing: bad, monthStartDay: 1) }
        }
        #expect(throws: PlanError.self) { try Plan.Selector(parsing: "class:satellite") }
        #expect(try Plan.Selector(parsing: "class:cellular") == .interfaceClass(.cellular))
    }
}
