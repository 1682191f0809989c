#if canImport(Glibc)
import Glibc
#endif

/// The resolutions history is kept at.
public enum Resolution: String, Hashable, Sendable, CaseIterable {
    case fiveMinutes = "5min"
    case hour, day, month, year

    /// Its place in `allCases`.
    public var index: Int {
        switch self {
        case .fiveMinutes: 0
        case .hour: 1
        case .day: 2
        case .month: 3
        case .year: 4
        }
    }
}

/// Where bucket boundaries fall: local midnight, the top of the local hour, the billing day of
/// the month. DST-safe: a bucket's end is the next bucket's start, so a spring-forward day is
/// 23 hours long and a fall-back day 25, and both repeated hours of a fall-back night get
/// buckets of their own.
public struct BucketCalendar: Hashable, Sendable {
    public enum Zone: Hashable, Sendable {
        /// The process's time zone (`TZ`, else `/etc/localtime`).
        case local
        case utc
    }

    public let zone: Zone
    /// Local buckets already worked out, shared by copies of this calendar: glibc's `mktime`
    /// checks `/etc/localtime` on every call (a `stat`, microseconds), and a sample or an
    /// answer asks for the same few buckets for every interface.
    private let known = KnownBuckets()

    public init(zone: Zone = .local) {
        self.zone = zone
    }

    public static func == (a: BucketCalendar, b: BucketCalendar) -> Bool { a.zone == b.zone }
    public func hash(into hasher: inout Hasher) { hasher.combine(zone) }

    /// The start (Unix seconds) of the `resolution` bucket containing `time`. `monthStartDay`
    /// (1–28) is the first day of a billing month; it only affects `.month`.
    public func start(of resolution: Resolution, containing time: Int64, monthStartDay: Int = 1) -> Int64 {
        guard zone == .local, resolution != .fiveMinutes else { return computedStart(of: resolution, containing: time, monthStartDay: monthStartDay) }
        let kind = KnownBuckets.Kind(resolution: resolution, monthStartDay: monthStartDay)
        if let start = known.start(kind, containing: time) { return start }
        let start = computedStart(of: resolution, containing: time, monthStartDay: monthStartDay)
        let end = computedStart(of: resolution, containing: start + Self.probe(resolution), monthStartDay: monthStartDay)
        known.learn(kind, start: start, end: end, asked: time)
        return start
    }

    /// The end of the bucket that starts at `start`: the next bucket's start.
    public func end(of resolution: Resolution, startingAt start: Int64, monthStartDay: Int = 1) -> Int64 {
        let kind = KnownBuckets.Kind(resolution: resolution, monthStartDay: monthStartDay)
        if zone == .local, resolution != .fiveMinutes, let end = known.end(kind, startingAt: start) { return end }
        return self.start(of: resolution, containing: start + Self.probe(resolution), monthStartDay: monthStartDay)
    }

    /// A point safely inside the next bucket, whatever DST does to this one's length.
    private static func probe(_ resolution: Resolution) -> Int64 {
        switch resolution {
        case .fiveMinutes: 300
        case .hour: 3600
        case .day: 36 * 3600
        case .month: 45 * 86400
        case .year: 400 * 86400
        }
    }

    /// ``start(of:containing:monthStartDay:)`` worked out by the C library, never from what is known.
    package func computedStart(of resolution: Resolution, containing time: Int64, monthStartDay: Int = 1) -> Int64 {
        switch resolution {
        case .fiveMinutes:
            return time - ((time % 300) + 300) % 300
        case .hour:
            return convert(time) { local in
                local.tm_min = 0
                local.tm_sec = 0
            }
        case .day:
            return convert(time) { local in
                (local.tm_hour, local.tm_min, local.tm_sec, local.tm_isdst) = (0, 0, 0, -1)
            }
        case .month:
            let startDay = Int32(Swift.min(Swift.max(monthStartDay, 1), 28))
            return convert(time) { local in
                if local.tm_mday < startDay { local.tm_mon -= 1 }  // normalised by mktime/timegm
                local.tm_mday = startDay
                (local.tm_hour, local.tm_min, local.tm_sec, local.tm_isdst) = (0, 0, 0, -1)
            }
        case .year:
            return convert(time) { local in
                (local.tm_mon, local.tm_mday) = (0, 1)
                (local.tm_hour, local.tm_min, local.tm_sec, local.tm_isdst) = (0, 0, 0, -1)
            }
        }
    }

    /// Breaks `time` down in this zone, lets `adjust` move fields, and converts back.
    private func convert(_ time: Int64, _ adjust: (inout tm) -> Void) -> Int64 {
        var seconds = time_t(time)
        var local = tm()
        switch zone {
        case .utc:
            gmtime_r(&seconds, &local)
            adjust(&local)
            return Int64(timegm(&local))
        case .local:
            localtime_r(&seconds, &local)
            adjust(&local)
            return Int64(mktime(&local))
        }
    }
}

extension BucketCalendar {
    /// The local date of `time` in this zone, as days since 1970-01-01 (a plan's weeks and runs
    /// of days count dates, not 86400-second steps, so DST moves no boundary).
    public func dayNumber(containing time: Int64) -> Int {
        var seconds = time_t(time)
        var local = tm()
        switch zone {
        case .utc: gmtime_r(&seconds, &local)
        case .local: localtime_r(&seconds, &local)
        }
        return DayNumber.daysFromCivil(year: Int(local.tm_year) + 1900, month: Int(local.tm_mon) + 1, day: Int(local.tm_mday))
    }

    /// Where the local date `number` (days since 1970-01-01) begins: the same instant as the
    /// start of that date's daily bucket.
    public func startOfDay(number: Int) -> Int64 {
        let (year, month, day) = DayNumber.civil(fromDays: number)
        var local = tm()
        (local.tm_year, local.tm_mon, local.tm_mday) = (Int32(year - 1900), Int32(month - 1), Int32(day))
        switch zone {
        case .utc:
            return Int64(timegm(&local))
        case .local:
            local.tm_isdst = -1
            // Through the day bucket, so a midnight that DST skips begins both at the same instant.
            return start(of: .day, containing: Int64(mktime(&local)))
        }
    }
}
