import Foundation
import IfMeterTestSupport
import Testing

/// `ifmeter 95th` against the real daemon serving the seeded history (Tests/HistorySeeder), with
/// 5-minute buckets kept 35 days: each answer equals the 95th percentile this test computes
/// itself from the rows `usage period=5min` answers for the same slots, to the byte.
@Suite("ifmeter 95th", .enabled(if: SeededDaemon.available, SeededDaemon.skipReason), .ownThread, .timeLimit(.minutes(10)))
struct PercentileTests {
    /// The value at rank ⌈0.95 · slots⌉ of the rows' bytes, every slot without a row a zero.
    static func percentile(_ values: [UInt64], slots: Int) -> UInt64 {
        let sorted = (Array(repeating: 0, count: slots - values.count) + values).sorted()
        return sorted[(95 * slots + 99) / 100 - 1]
    }

    static func number(_ value: Any?) -> UInt64? { (value as? NSNumber)?.uint64Value }

    /// `arguments` with `--json`, its one subject, and the same slots' 5-minute rows of `subject`
    /// (`"interface":"eth0"`) as `usage` answers them.
    func compare(_ seeded: SeededDaemon, _ arguments: [String], subject: String) throws -> [String: Any] {
        let result = try seeded.ifmeter(arguments + ["--json"])
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        let answer = try SocketClient.decode(result.stdout)
        let entry = try #require((answer["subjects"] as? [[String: Any]])?.first, "\(arguments)")
        let (start, end) = (try #require(Self.number(entry["start"])), try #require(Self.number(entry["end"])))
        let usage = try SocketClient(path: seeded.daemon.socket).request(
            #"{"v":1,"cmd":"usage",\#(subject),"period":"5min","from":\#(start),"to":\#(end)}"#)
        let rows = try #require(usage[path: "result.rows"] as? [[String: Any]], "\(usage)")
        let slots = Int(end - start) / 300
        let rx = rows.compactMap { Self.number($0["rx_bytes"]) }, tx = rows.compactMap { Self.number($0["tx_bytes"]) }
        #expect(Self.number(entry["slots"]) == UInt64(slots), "\(arguments)")
        #expect(Self.number(entry["slots_with_traffic"]) == UInt64(rows.count), "\(arguments)")
        let (rx95, tx95) = (Self.percentile(rx, slots: slots), Self.percentile(tx, slots: slots))
        #expect(Self.number(entry["rx_bytes"]) == rx95, "\(arguments)")
        #expect(Self.number(entry["tx_bytes"]) == tx95, "\(arguments)")
        #expect(Self.number(entry["total_bytes"]) == Self.percentile(zip(rx, tx).map { $0 + $1 }, slots: slots), "\(arguments)")
        #expect(Self.number(entry["max_bytes"]) == max(rx95, tx95), "\(arguments)")
        #expect((entry["max_bits_per_second"] as? Double) == Double(max(rx95, tx95)) * 8 / 300, "\(arguments)")
        // The share as JSON writes a double (to 15 digits); the counts it is made of are exact above.
        #expect(abs(((entry["coverage"] as? Double) ?? -1) - Double(rows.count) / Double(slots)) < 1e-12, "\(arguments)")
        #expect((entry["labels"] as? [String])?.first == "estimate", "\(arguments)")
        return entry
    }

    @Test("the month, a range, a class's day: equal to the percentile of usage's 5-minute rows")
    func equalsUsage() throws {
        let seeded = try SeededDaemon(config: "interval = 3600\nretention_5min = 35d\n")
        // The month so far: 2026-03-01 00:00 to 2026-03-31 10:00 CEST, one sample an hour, so
        // most slots are empty and the 95th is zero; its slots and coverage are still exact.
        let month = try compare(seeded, ["95th", "-i", "eth0"], subject: #""interface":"eth0""#)
        #expect(Self.number(month["start"]) == 1_772_319_600 && Self.number(month["end"]) == 1_774_944_000)
        #expect((month["labels"] as? [String])?.contains("gap-in-period") == true)
        // Four hours: 48 slots, four with traffic: rank 46 is the second smallest of the four.
        let range = try compare(seeded, ["95th", "-i", "wwan0", "--from", "2026-03-30 20:00", "--to", "2026-03-31 00:00"],
                                subject: #""interface":"wwan0""#)
        #expect(Self.number(range["slots"]) == 48 && Self.number(range["slots_with_traffic"]) == 4)
        #expect(Self.number(range["tx_bytes"]) == 2 << 20)
        // vnStat's switch, a class summed, today.
        _ = try compare(seeded, ["--95th", "--class", "cellular", "--period", "day"], subject: #""class":"cellular""#)
    }

    @Test("the human view names the figures and the slots; a bad range or name is refused, saying why")
    func humanAndRefused() throws {
        let seeded = try SeededDaemon()
        let view = try seeded.ifmeter(["95th", "-i", "wwan0", "--from", "2026-03-30 20:00", "--to", "2026-03-31 00:00"])
        print("VIEW>>>" + view.stdout + "<<<"); print("MONTH>>>" + (try seeded.ifmeter(["95th"])).stdout + "<<<")
        #expect(view.status == 0 && view.stderr.isEmpty, "\(view.stderr)")
        #expect(view.stdout.contains("95th percentile of 5-minute rates, the range (2026-03-30 20:00 – 2026-03-31 00:00"))
        #expect(view.stdout.contains("4 (8.3%)") && view.stdout.contains("55.92 kbit/s"), "\(view.stdout)")
        #expect(view.stdout.hasPrefix("95th percentile") && view.stdout.contains("\nEstimates from interface counters"))
        // The default retention keeps 48 hours: the month's earlier slots are gone, and it says so.
        let month = try seeded.ifmeter(["95th", "-i", "eth0"])
        #expect(month.status == 0 && month.stdout.contains("retention_5min = 35d"), "\(month.stdout)")
        let backwards = try seeded.ifmeter(["95th", "-i", "eth0", "--from", "2026-03-31", "--to", "2026-03-30"])
        #expect(backwards.status == 64 && backwards.stderr.contains("\"from\" must be before \"to\""), "\(backwards.stderr)")
        let unknown = try seeded.ifmeter(["95th", "-i", "eth9"])
        #expect(unknown.status == 64 && unknown.stderr.contains("no interface named \"eth9\""), "\(unknown.stderr)")
        let both = try seeded.ifmeter(["95th", "--month", "--from", "2026-03-30"])
        #expect(both.status == 64 && both.stderr.contains("not both"), "\(both.stderr)")
    }
}
