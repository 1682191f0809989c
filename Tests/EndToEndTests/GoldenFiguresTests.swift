import Foundation
import Testing

/// The seeded history (Tests/HistorySeeder) recomputed from its formula, without ifmeter's
/// meter, store, calendar or formatting: hours of traffic bucketed by Foundation's calendar in
/// Europe/Berlin and printed by a formatter of this file. The golden files' figures must be
/// these, so a golden regenerated from wrong output fails here even though it matches itself.
struct SeededHistory {
    struct Delta {
        var wall: Int
        var rx: UInt64
        var tx: UInt64
        var reset = false
        var gap = false
        var total: UInt64 { rx + tx }
    }

    static let start = 1_772_143_200  // 2026-02-26 22:00 UTC: the baseline sample
    static let end = 1_774_940_400  // 2026-03-31 07:00 UTC: the last sample
    static let now = 1_774_944_000  // 2026-03-31 08:00 UTC: the frozen clock of the views
    static let gap = (from: 1_773_986_400, to: 1_774_008_000)
    static let resetAt = 1_774_864_800
    static let mebibyte: UInt64 = 1 << 20

    /// What each sample counted, at the sample's time: hour h's traffic lands at start + h
    /// hours; the hours inside the gap land at its end; wwan0's reset hour counts only what the
    /// driver counted after resetting (5 MiB rx, 1 MiB tx).
    static func deltas(_ name: String) -> [Delta] {
        var result: [Delta] = []
        var carried = Delta(wall: 0, rx: 0, tx: 0)
        for hour in 1...((end - start) / 3600) {
            let wall = start + hour * 3600
            var delta = Delta(wall: wall, rx: 0, tx: 0)
            if name == "eth0" {
                (delta.rx, delta.tx) = (UInt64(hour % 7 + 1) * 3 * mebibyte, UInt64(hour % 3 + 1) * 512 * 1024)
            } else if wall == resetAt {
                (delta.rx, delta.tx, delta.reset) = (5 * mebibyte, mebibyte, true)
            } else {
                (delta.rx, delta.tx) = (UInt64(hour % 5) * 10 * mebibyte, 2 * mebibyte)
            }
            if wall > gap.from && wall < gap.to {
                carried.rx += delta.rx
                carried.tx += delta.tx
                continue
            }
            if wall == gap.to {
                delta.rx += carried.rx
                delta.tx += carried.tx
                delta.gap = true
            }
            result.append(delta)
        }
        return result
    }

    static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "Europe/Berlin")!
        return calendar
    }()

    /// The bucket of `component` (.hour, .day, .month, .year) containing `wall`.
    static func bucket(_ component: Calendar.Component, _ wall: Int) -> (start: Int, end: Int) {
        let interval = calendar.dateInterval(of: component, for: Date(timeIntervalSince1970: Double(wall)))!
        return (Int(interval.start.timeIntervalSince1970), Int(interval.end.timeIntervalSince1970))
    }

    struct Row {
        var start: Int
        var end: Int
        var rx: UInt64 = 0
        var tx: UInt64 = 0
        var reset = false
        var gap = false
        var total: UInt64 { rx + tx }
        /// Average over the bucket, or over its elapsed part for the current one.
        var rate: Double { Double(total) / Double(min(end, SeededHistory.now) - start) }
        var markers: String { (reset ? "*" : "") + (gap ? "!" : "") }
    }

    /// Rows of the buckets that `bucketOf` assigns, in time order.
    static func rows(_ deltas: [Delta], _ bucketOf: (Int) -> (start: Int, end: Int)) -> [Row] {
        var rows: [Int: Row] = [:]
        for delta in deltas {
            let (start, end) = bucketOf(delta.wall)
            var row = rows[start] ?? Row(start: start, end: end)
            row.rx += delta.rx
            row.tx += delta.tx
            row.reset = row.reset || delta.reset
            row.gap = row.gap || delta.gap
            rows[start] = row
        }
        return rows.values.sorted { $0.start < $1.start }
    }

    static func rows(_ name: String, _ component: Calendar.Component) -> [Row] {
        rows(deltas(name)) { bucket(component, $0) }
    }

    // MARK: Text, as a person reads it

    static func local(_ wall: Int) -> DateComponents {
        calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: Date(timeIntervalSince1970: Double(wall)))
    }

    static func two(_ value: Int?) -> String { value.map { $0 < 10 ? "0\($0)" : "\($0)" } ?? "??" }

    static func day(_ wall: Int) -> String {
        let parts = local(wall)
        return "\(parts.year!)-\(two(parts.month))-\(two(parts.day))"
    }

    static func weekday(_ wall: Int) -> String {
        ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"][local(wall).weekday! - 1]
    }

    static func minute(_ wall: Int) -> String {
        let parts = local(wall)
        return day(wall) + " \(two(parts.hour)):\(two(parts.minute))"
    }

    static func second(_ wall: Int) -> String { minute(wall) + ":" + two(local(wall).second) }

    static func zone(_ wall: Int) -> String {
        calendar.timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(wall))) == 7200 ? "CEST" : "CET"
    }

    /// Bytes as `ifmeter` prints them: whole bytes under one unit, else two decimals.
    static func size(_ value: Double, base: Double = 1024, units: [String] = ["KiB", "MiB", "GiB", "TiB"], unit: String = "B") -> String {
        guard value.rounded() >= base else { return "\(Int(value.rounded())) \(unit)" }
        var scaled = value / base
        var index = 0
        while scaled >= base && index < units.count - 1 {
            scaled /= base
            index += 1
        }
        return String(format: "%.2f %@", scaled, units[index])
    }

    static func bytes(_ value: UInt64) -> String { size(Double(value)) }
    static func rate(_ value: Double) -> String { size(value, units: ["KiB/s", "MiB/s", "GiB/s"], unit: "B/s") }
    static func siBytes(_ value: UInt64) -> String { size(Double(value), base: 1000, units: ["kB", "MB", "GB", "TB"]) }
    static func siRate(_ value: Double) -> String { size(value, base: 1000, units: ["kB/s", "MB/s", "GB/s"], unit: "B/s") }
    static func bitRate(_ value: Double) -> String {
        size(value * 8, units: ["Kibit/s", "Mibit/s", "Gibit/s"], unit: "bit/s")
    }

    static func line(_ fields: String...) -> String { fields.filter { !$0.isEmpty }.joined(separator: " ") }
}

@Suite("Golden files against the seeder's formula", .ownThread, .timeLimit(.minutes(10)))
struct GoldenFiguresTests {
    typealias H = SeededHistory

    /// The golden file's lines with runs of spaces made one, so columns do not matter.
    func lines(_ name: String) throws -> [String] {
        let text = try String(contentsOfFile: Golden.directory + "/" + name, encoding: .utf8)
        return text.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
    }

    func expectLines(_ name: String, _ expected: [String], prefix: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let golden = try lines(name)
        for line in expected {
            let found = prefix ? golden.contains { $0.hasPrefix(line) } : golden.contains(line)
            #expect(found, "\(name) lacks \"\(line)\"", sourceLocation: sourceLocation)
        }
    }

    func dayRow(_ row: H.Row, rate: (Double) -> String = H.rate) -> String {
        let length = row.end - row.start
        return H.line(H.day(row.start), H.weekday(row.start), H.bytes(row.rx), H.bytes(row.tx), H.bytes(row.total), rate(row.rate),
                      length == 86400 ? "" : "(\(length / 3600) h day)", row.markers)
    }

    @Test("5min: eth0's last six five-minute rows")
    func fiveMinutes() throws {
        let rows = H.rows(H.deltas("eth0")) { ($0 - $0 % 300, $0 - $0 % 300 + 300) }.suffix(6)
        try expectLines("5min.txt", rows.map {
            H.line(H.minute($0.start), H.zone($0.start), H.bytes($0.rx), H.bytes($0.tx), H.bytes($0.total), H.rate($0.rate))
        })
        #expect(try lines("5min.txt").filter { $0.hasPrefix("2026-") }.count == 6)
    }

    @Test("hours across the spring-forward night: wwan0 from 00:00 to 06:00, no 02:00")
    func hoursAcrossDST() throws {
        let from = 1_774_738_800, to = 1_774_756_800  // 2026-03-29 00:00 CET, 06:00 CEST
        let rows = H.rows("wwan0", .hour).filter { $0.start >= from && $0.start < to }
        #expect(rows.count == 5)
        try expectLines("hours-dst.txt", rows.map {
            H.line(H.minute($0.start), H.zone($0.start), H.bytes($0.rx), H.bytes($0.tx), H.bytes($0.total), H.rate($0.rate))
        }, prefix: true)
        #expect(try lines("hours-dst.txt").filter { $0.hasPrefix("2026-") }.count == 5)
    }

    @Test("days from 2026-03-27, and the cellular class's in bits from 2026-03-29")
    func days() throws {
        let from = 1_774_566_000  // 2026-03-27 00:00 CET
        for name in ["eth0", "wwan0"] {
            try expectLines("days.txt", H.rows(name, .day).filter { $0.start >= from }.map { dayRow($0) })
        }
        try expectLines("days-class-bits.txt", H.rows("wwan0", .day).filter { $0.start >= 1_774_738_800 }.map { dayRow($0, rate: H.bitRate) })
    }

    @Test("months, years in SI units, and wwan0's top three days")
    func monthsYearsTop() throws {
        for name in ["eth0", "wwan0"] {
            try expectLines("months.txt", H.rows(name, .month).map {
                H.line("\(H.day($0.start).prefix(7))", H.bytes($0.rx), H.bytes($0.tx), H.bytes($0.total), H.rate($0.rate), $0.markers)
            })
            try expectLines("years-si.txt", H.rows(name, .year).map {
                H.line("\(H.day($0.start).prefix(4))", H.siBytes($0.rx), H.siBytes($0.tx), H.siBytes($0.total), H.siRate($0.rate), $0.markers)
            })
        }
        let top = H.rows("wwan0", .day).enumerated().sorted { ($0.element.total, -$0.offset) > ($1.element.total, -$1.offset) }.prefix(3)
        try expectLines("top.txt", top.map { dayRow($0.element) })
    }

    @Test("summary and its one-line form: today, yesterday, this and last month, all time, the month-end projection")
    func summary() throws {
        for (name, interfaceClass) in [("eth0", "ethernet"), ("wwan0", "cellular")] {
            let days = H.rows(name, .day), months = H.rows(name, .month)
            let all = H.rows(H.deltas(name)) { _ in (0, 1) }[0]
            let (today, yesterday) = (days[days.count - 1], days[days.count - 2])
            let (month, lastMonth) = (months[months.count - 1], months[months.count - 2])
            let scale = Double(month.end - month.start) / Double(H.now - month.start)
            // The share of the month gone, in tenths of a percent cut down, from the seeder's times.
            let tenths = (H.now - month.start) * 1000 / (month.end - month.start)
            let elapsed = tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(tenths % 10)"
            let projected = (Double(month.rx) * scale, Double(month.tx) * scale, Double(month.total) * scale)
            func row(_ label: String, _ row: H.Row) -> String {
                H.line(label, H.bytes(row.rx), H.bytes(row.tx), H.bytes(row.total), row.markers)
            }
            try expectLines("summary.txt", [
                "\(name) (\(interfaceClass)) since \(H.minute(H.start))",
                row("today", today), row("yesterday", yesterday), row("this month", month), row("last month", lastMonth),
                row("all time", all),
                H.line("month-end projection", H.size(projected.0), H.size(projected.1), H.size(projected.2),
                       "at this month's pace (\(elapsed)% elapsed)"),
            ])
            let oneLine = try #require(try lines("summary-oneline.txt").first { $0.hasPrefix(name + ";") }).split(separator: ";").map(String.init)
            #expect(Array(oneLine.prefix(12)) == [
                name, interfaceClass, H.bytes(today.rx), H.bytes(today.tx), H.bytes(today.total),
                H.bytes(month.rx), H.bytes(month.tx), H.bytes(month.total), H.size(projected.2),
                H.bytes(all.rx), H.bytes(all.tx), H.bytes(all.total),
            ], "\(oneLine)")
        }
    }

    @Test("list: each interface's total since first seen and its continuity")
    func list() throws {
        let golden = try lines("list.txt")
        for (name, continuity) in [("eth0", "1 gap"), ("wwan0", "1 reset, 1 gap")] {
            let all = H.rows(H.deltas(name)) { _ in (0, 1) }[0]
            let line = try #require(golden.first { $0.hasPrefix(name + " ") })
            #expect(line.contains(" \(H.bytes(all.rx)) \(H.bytes(all.tx)) \(H.minute(H.start)) "), "\(line)")
            #expect(line.contains(" \(continuity) "), "\(line)")
        }
    }

    @Test("events: first sight at the start, the gap's deltas where counting resumed, the reset's own")
    func events() throws {
        var expected: [String] = []
        for name in ["eth0", "wwan0"] {
            expected.append(H.line(H.second(H.start), name, "first-sight"))
            let gap = try #require(H.deltas(name).first { $0.gap })
            expected.append(H.line(H.second(gap.wall), name, "gap", "rx \(H.bytes(gap.rx)) tx \(H.bytes(gap.tx))"))
        }
        let reset = try #require(H.deltas("wwan0").first { $0.reset })
        let resetLine = H.line(H.second(reset.wall), "wwan0", "reset", "rx \(H.bytes(reset.rx)) tx \(H.bytes(reset.tx))")
        try expectLines("events.txt", expected + [resetLine], prefix: true)
        try expectLines("events-reset.txt", [resetLine], prefix: true)
        #expect(try lines("events-reset.txt").filter { $0.hasPrefix("2026-") }.count == 1)
        #expect(try lines("events.txt").filter { $0.hasPrefix("2026-") }.count == 5)
    }
}
