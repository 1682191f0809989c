/// A local date as days since 1970-01-01 (proleptic Gregorian): how a plan's periods and the
/// bucket calendar count dates, so DST moves no boundary.
public enum DayNumber {
    /// `YYYY-MM-DD` as days since 1970-01-01 (proleptic Gregorian), nil if not a real date.
    public static func parsing(_ text: String) -> Int? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              (1970...9999).contains(year), (1...12).contains(month), (1...31).contains(day) else { return nil }
        let number = daysFromCivil(year: year, month: month, day: day)
        guard civil(fromDays: number) == (year, month, day) else { return nil }
        return number
    }

    /// Days since 1970-01-01 as `YYYY-MM-DD`.
    public static func date(_ number: Int) -> String {
        let (year, month, day) = civil(fromDays: number)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)-\(two(month))-\(two(day))"
    }

    // Howard Hinnant's days_from_civil and civil_from_days.
    public static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146097 + dayOfEra - 719468
    }

    public static func civil(fromDays number: Int) -> (Int, Int, Int) {
        let z = number + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let dayOfEra = z - era * 146097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
