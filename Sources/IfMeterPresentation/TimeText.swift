#if canImport(Glibc)
import Glibc
#endif

/// Times as people read them, in the zone the daemon cuts its buckets in (`local`: this
/// machine's `TZ`, or UTC), so a day row says the day it is.
public struct TimeText: Hashable, Sendable {
    public var utc: Bool

    public init(utc: Bool) {
        self.utc = utc
    }

    /// `strftime` of Unix seconds in this zone.
    public func format(_ seconds: Double, _ pattern: String) -> String {
        var time = time_t(seconds.rounded(.down))
        var parts = tm()
        if utc { gmtime_r(&time, &parts) } else { localtime_r(&time, &parts) }
        var buffer = [CChar](repeating: 0, count: 128)
        let count = strftime(&buffer, buffer.count, pattern, &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `2026-03-29 14:05`.
    public func minute(_ seconds: Double) -> String { format(seconds, "%Y-%m-%d %H:%M") }

    public func second(_ seconds: Double) -> String { format(seconds, "%Y-%m-%d %H:%M:%S") }
    public func day(_ seconds: Double) -> String { format(seconds, "%Y-%m-%d") }

    /// Parses `--from`/`--to`: `YYYY-MM-DD`, `YYYY-MM-DD HH:MM[:SS]` (also with `T`) in this
    /// zone, RFC 3339 with `Z` or an offset, or `@` followed by Unix seconds.
    public func parse(_ text: String) -> Double? {
        if text.hasPrefix("@") { return Double(text.dropFirst()) }
        var body = Substring(text)
        var offset: Int?
        if body.hasSuffix("Z") || body.hasSuffix("z") {
            offset = 0
            body = body.dropLast()
        } else if body.count > 10, let sign = body.dropFirst(10).lastIndex(where: { $0 == "+" || $0 == "-" }) {
            let zone = body[body.index(after: sign)...].split(separator: ":")
            guard zone.count == 2, let hours = Int(zone[0]), let minutes = Int(zone[1]) else { return nil }
            offset = (hours * 3600 + minutes * 60) * (body[sign] == "-" ? -1 : 1)
            body = body[..<sign]
        }
        let fields = body.split(whereSeparator: { "-: T".contains($0) }).map { Int($0) }
        guard [3, 5, 6].contains(fields.count), fields.allSatisfy({ $0 != nil }) else { return nil }
        let values = fields.map { $0! }
        var parts = tm()
        parts.tm_year = Int32(values[0] - 1900)
        parts.tm_mon = Int32(values[1] - 1)
        parts.tm_mday = Int32(values[2])
        parts.tm_hour = Int32(values.count > 3 ? values[3] : 0)
        parts.tm_min = Int32(values.count > 4 ? values[4] : 0)
        parts.tm_sec = Int32(values.count > 5 ? values[5] : 0)
        parts.tm_isdst = -1
        guard (1...12).contains(values[1]), (1...31).contains(values[2]), parts.tm_hour < 24,
              parts.tm_min < 60, parts.tm_sec < 61 else { return nil }
        if let offset {
            return Double(timegm(&parts)) - Double(offset)
        }
        return Double(utc ? timegm(&parts) : mktime(&parts))
    }
}
