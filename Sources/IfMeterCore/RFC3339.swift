/// RFC 3339 date-times as requests give them (`2026-11-29T13:00:00Z`,
/// `2026-11-29T14:00:00.5+01:00`), read strictly: a real date, a time of day (a leap second's
/// `:60` is the next second), a fraction of up to nine digits, and `Z` or an offset of at most
/// 23:59 — `T` and `Z` in capitals, as the protocol has always read them. Foundation's parser,
/// used before, took 30 February, `24:00`, `GMT` and a trailing space; the client no longer
/// links it.
public enum RFC3339 {
    /// Unix seconds, or nil if `text` is not an RFC 3339 date-time.
    public static func seconds(_ text: String) -> Double? {
        var bytes = Array(text.utf8)[...]
        func digits(_ count: Int) -> Int? {
            guard bytes.count >= count else { return nil }
            var value = 0
            for byte in bytes.prefix(count) {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            bytes = bytes.dropFirst(count)
            return value
        }
        func take(_ accepted: String) -> UInt8? {
            guard let byte = bytes.first, accepted.utf8.contains(byte) else { return nil }
            bytes = bytes.dropFirst()
            return byte
        }
        guard let year = digits(4), take("-") != nil, let month = digits(2), take("-") != nil, let day = digits(2),
              take("T") != nil, let hour = digits(2), take(":") != nil, let minute = digits(2), take(":") != nil,
              let second = digits(2),
              (1...12).contains(month), day >= 1, day <= daysIn(month, of: year), hour < 24, minute < 60, second <= 60
        else { return nil }
        var fraction = 0.0
        if take(".") != nil {
            let run = bytes.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }.count
            guard (1...9).contains(run), let value = digits(run) else { return nil }
            fraction = Double(value) / Double([1, 10, 100, 1000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000][run])
        }
        var offset = 0
        if take("Z") == nil {
            guard let sign = take("+-"), let hours = digits(2), take(":") != nil, let minutes = digits(2),
                  hours < 24, minutes < 60 else { return nil }
            offset = (hours * 3600 + minutes * 60) * (sign == UInt8(ascii: "-") ? -1 : 1)
        }
        guard bytes.isEmpty else { return nil }
        let days = DayNumber.daysFromCivil(year: year, month: month, day: day)
        return Double(days * 86400 + hour * 3600 + minute * 60 + second - offset) + fraction
    }

    private static func daysIn(_ month: Int, of year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
