import IfMeterWire

/// How a usage row's period is named for people, in the daemon's zone.
public enum PeriodLabel {
    /// `2026-03-29 14:00 CEST` for an hour, `2026-03-29 Sun` for a day, `2026-03` for a month.
    public static func long(_ start: Double, period: String, time: TimeText) -> String {
        switch UsagePeriod(rawValue: period) {
        case .fiveMinutes, .hour: time.format(start, "%Y-%m-%d %H:%M %Z")
        case .day: time.format(start, "%Y-%m-%d %a")
        case .month: time.format(start, "%Y-%m")
        default: time.format(start, "%Y")
        }
    }
}
