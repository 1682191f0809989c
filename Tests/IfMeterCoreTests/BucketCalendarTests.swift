import IfMeterCore
import IfMeterTestSupport
import Testing

/// Expected instants are from Python's zoneinfo, an independent implementation of the tz rules.
/// The process's own zone is Europe/Berlin here: the suite runs in a child (``ZonedChild``).
@Suite("Bucket calendar", .enabled(if: ZonedChild.isChild, ZonedChild.skipReason), .ownThread, .timeLimit(.minutes(3)))
struct BucketCalendarTests {
    let berlin = BucketCalendar(zone: .local)

    @Test("a spring-forward day is 23 hours, a fall-back day 25 (Europe/Berlin, 2026)")
    func dstDays() {
        let march29 = berlin.start(of: .day, containing: 1_774_738_800 + 12 * 3600)
        #expect(march29 == 1_774_738_800)
        #expect(berlin.end(of: .day, startingAt: march29) == 1_774_821_600)
        #expect(berlin.end(of: .day, startingAt: march29) - march29 == 23 * 3600)
        let october25 = berlin.start(of: .day, containing: 1_792_886_400)
        #expect(october25 == 1_792_879_200)
        #expect(berlin.end(of: .day, startingAt: october25) - october25 == 25 * 3600)
    }

    @Test("both 02:00 hours of a fall-back night get their own hour bucket")
    func repeatedHour() {
        let first = 1_792_886_400, second = 1_792_890_000  // 02:00 CEST, then 02:00 CET
        #expect(berlin.start(of: .hour, containing: Int64(first) + 1800) == Int64(first))
        #expect(berlin.start(of: .hour, containing: Int64(second) + 1800) == Int64(second))
        #expect(berlin.end(of: .hour, startingAt: Int64(first)) == Int64(second))
    }

    @Test("months start on the configured billing day")
    func monthStartDay() {
        let january10 = Int64(1_768_431_600 - 5 * 86400)
        #expect(berlin.start(of: .month, containing: january10, monthStartDay: 15) == 1_765_753_200)
        #expect(berlin.end(of: .month, startingAt: 1_765_753_200, monthStartDay: 15) == 1_768_431_600)
        #expect(berlin.start(of: .month, containing: 1_768_431_600, monthStartDay: 15) == 1_768_431_600)
        #expect(berlin.end(of: .month, startingAt: 1_768_431_600, monthStartDay: 15) == 1_771_110_000)
        #expect(berlin.start(of: .month, containing: january10) == 1_767_222_000)
        #expect(berlin.start(of: .month, containing: january10, monthStartDay: 31)
                == berlin.start(of: .month, containing: january10, monthStartDay: 28), "clamped to 28")
    }

    /// The calendar remembers local buckets; what it remembers must be what the C library says,
    /// asked in any order, across both DST changes and every billing day.
    @Test("remembered buckets equal the C library's, hour by hour through a year, in any order")
    func knownBucketsAreTheLibrarys() {
        let calendar = BucketCalendar(zone: .local)
        var times = Array(stride(from: Int64(1_767_222_000), to: 1_798_758_000, by: 1789))
        var generator = SystemRandomNumberGenerator()
        times += times.shuffled(using: &generator)
        for time in times {
            for resolution in [Resolution.hour, .day, .month, .year] {
                for monthStartDay in resolution == .month ? [1, 15, 28] : [1] {
                    let start = calendar.start(of: resolution, containing: time, monthStartDay: monthStartDay)
                    #expect(start == calendar.computedStart(of: resolution, containing: time, monthStartDay: monthStartDay))
                    let end = calendar.end(of: resolution, startingAt: start, monthStartDay: monthStartDay)
                    #expect(start <= time && time < end)
                    #expect(end == BucketCalendar(zone: .local).end(of: resolution, startingAt: start, monthStartDay: monthStartDay))
                }
            }
        }
    }

    @Test("years, five minutes, and UTC")
    func otherResolutions() {
        #expect(berlin.start(of: .year, containing: 1_790_000_000) == 1_767_222_000)
        #expect(berlin.end(of: .year, startingAt: 1_767_222_000) == 1_798_758_000)
        #expect(berlin.start(of: .fiveMinutes, containing: 1_790_000_123) == 1_790_000_100)
        #expect(berlin.end(of: .fiveMinutes, startingAt: 1_790_000_100) == 1_790_000_400)
        let utc = BucketCalendar(zone: .utc)
        #expect(utc.start(of: .day, containing: 1_790_000_123) == 1_790_000_123 - 1_790_000_123 % 86400)
        #expect(utc.start(of: .hour, containing: 1_790_000_123) == 1_790_000_123 - 1_790_000_123 % 3600)
    }
}

/// Starts the suites that need the process's zone set (``ZonedChild``) in a child process.
@Suite("Suites in Europe/Berlin", .enabled(if: !ZonedChild.isChild), .ownThread, .timeLimit(.minutes(3)))
struct ZonedSuites {
    @Test("the bucket calendar and the client's times, in a child whose TZ is Europe/Berlin")
    func inChild() throws {
        #expect(try ZonedChild.run("BucketCalendarTests|TimeTextZoneTests|PlanPeriodTests|PlanZonedTests") >= 12, "five calendar tests, one of local times, three of plan periods, three of plans through the service")
    }
}
