import IfMeterCore

/// How long each resolution is kept. Defaults are at least vnStat's: 5-minute 48 hours,
/// hourly 4 days, daily 62 days, monthly 25 months, yearly and totals forever.
public struct Retention: Hashable, Sendable {
    /// Seconds; nil keeps forever.
    public var fiveMinutes: Int64? = 48 * 3600
    public var hours: Int64? = 4 * 86400
    public var days: Int64? = 62 * 86400
    /// Calendar months; nil keeps forever.
    public var months: Int? = 25
    /// Calendar years; nil keeps forever.
    public var years: Int?
    /// Seconds of events kept; nil keeps forever.
    public var events: Int64?
    /// Seconds a container's or namespace's subject (docs/NAMESPACES.md) stays after it was last
    /// seen, with all its history; nil keeps it forever.
    public var owners: Int64?

    public init() {}
}

/// How history is bucketed and kept: the calendar, retention and billing days. The service
/// folds what it counts into buckets by it, and the store prunes by it.
public struct HistoryConfiguration: Hashable, Sendable {
    public var calendar = BucketCalendar()
    public var retention = Retention()
    /// First day (1–28) of each interface's billing month; others use `defaultMonthStartDay`.
    public var monthStartDays: [String: Int] = [:]
    public var defaultMonthStartDay = 1

    public init() {}

    public func monthStartDay(for name: String) -> Int {
        monthStartDays[name] ?? defaultMonthStartDay
    }
}
