import Foundation
import IfMeterTestSupport
import Testing

/// Every human view of the real `ifmeter` against the real daemon serving a seeded history
/// (DST day, a reset, a gap), compared with golden files.
@Suite("ifmeter views", .enabled(if: SeededDaemon.available, SeededDaemon.skipReason), .ownThread, .timeLimit(.minutes(10)))
struct CLIViewTests {
    static let views: [(String, [String])] = [
        ("summary.txt", []),
        ("summary-oneline.txt", ["--oneline"]),
        ("5min.txt", ["5min", "-i", "eth0", "--limit", "6"]),
        ("hours-dst.txt", ["hours", "-i", "wwan0", "--from", "2026-03-29", "--to", "2026-03-29 06:00"]),
        ("days.txt", ["days", "--from", "2026-03-27"]),
        ("days-class-bits.txt", ["days", "--class", "cellular", "--from", "2026-03-29", "--bits"]),
        ("months.txt", ["months"]),
        ("years-si.txt", ["years", "--si"]),
        ("top.txt", ["-t", "--limit", "3", "-i", "wwan0"]),
        ("list.txt", ["list"]),
        ("events.txt", ["events", "--to", "2026-03-31"]),
        ("events-reset.txt", ["events", "--kind", "reset"]),
    ]

    @Test("golden output of every view: DST days, a reset, a gap, projections")
    func goldenViews() throws {
        let seeded = try SeededDaemon()
        for (name, arguments) in Self.views {
            let result = try seeded.ifmeter(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(result.stderr.isEmpty, "\(arguments): \(result.stderr)")
            Golden.check(name, result.stdout)
        }
        // A time is read in the daemon's zone, so a bad one is found once connected: still 64.
        let badTime = try seeded.ifmeter(["days", "--from", "last tuesday"])
        #expect(badTime.status == 64 && badTime.stdout.isEmpty)
        #expect(badTime.stderr.hasPrefix("ifmeter: --from: cannot read \"last tuesday\""))
    }

    @Test("--json on every daemon command is one JSON document with the documented keys")
    func json() throws {
        let seeded = try SeededDaemon()
        let expectations: [([String], [String])] = [
            ([], ["interfaces", "footnote"]), (["days"], ["usage", "footnote"]), (["list"], ["interfaces", "footnote"]),
            (["events"], ["events"]), (["status"], ["ready", "version", "time_zone", "store"]), (["rate"], ["at", "interfaces"]),
            (["check", "-i", "eth0", "--limit", "1TiB"], ["status", "used_bytes", "limit_bytes", "labels", "message"]),
            (["chart", "days", "-i", "eth0"], ["rows", "period"]),
        ]
        for (arguments, keys) in expectations {
            let result = try seeded.ifmeter(arguments + ["--json"])
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(result.stdout.filter { $0 == "\n" }.count == 1, "\(arguments): one line")
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            for key in keys { #expect(object?[key] != nil, "\(arguments) --json lacks \(key)") }
        }
        // The summary's figures are the daemon's: this month of wwan0 carries the reset and gap labels.
        let summary = try JSONSerialization.jsonObject(with: Data(try seeded.ifmeter(["--json", "-i", "wwan0"]).stdout.utf8)) as? [String: Any]
        let wwan0 = (summary?["interfaces"] as? [[String: Any]])?.first
        let labels = (wwan0?["this_month"] as? [String: Any])?["labels"] as? [String]
        #expect(labels?.contains("reset-in-period") == true && labels?.contains("gap-in-period") == true)
    }

    @Test("status names the daemon, its socket and a healthy store")
    func status() throws {
        let seeded = try SeededDaemon()
        let result = try seeded.ifmeter(["status"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("pid \(seeded.daemon.pid)"))
        #expect(result.stdout.contains("socket          \(seeded.daemon.socket)"))
        #expect(result.stdout.contains("buckets cut in  local time (CEST)"))
        #expect(result.stdout.contains("store           healthy"))
    }

    @Test("check: each exit code with its one-line reason")
    func check() throws {
        let seeded = try SeededDaemon()
        // wwan0 used 15.65 GiB this month; at this pace it ends at 15.95 GiB.
        let cases: [([String], Int32, String)] = [
            (["-i", "wwan0", "--limit", "20GiB"], 0, "OK: wwan0 used 15.65 GiB of 20.00 GiB this month (78.2%)"),
            (["-i", "wwan0", "--limit", "17GiB"], 1, "WARNING: wwan0 used 15.65 GiB of 17.00 GiB this month (92%)"),
            (["-i", "wwan0", "--limit", "15GiB"], 2, "CRITICAL: wwan0 used 15.65 GiB of 15.00 GiB this month (104.3%)"),
            (["-i", "wwan0", "--limit", "15.9GiB", "--projected"], 2, "CRITICAL: wwan0 projected to use 15.95 GiB by 2026-04-01 00:00 of 15.90 GiB"),
            (["-i", "wwan0", "--limit", "20GiB", "--warn", "70%"], 1, "WARNING:"),
            (["-i", "eth0", "--period", "day", "--limit", "1GiB"], 0, "OK: eth0 used 135.50 MiB of 1.00 GiB this day (13.2%)"),
            (["-i", "wwan0", "--limit", "1GiB", "--direction", "tx"], 2, "CRITICAL: wwan0 used 1.42 GiB of 1.00 GiB this month (tx only)"),
            (["-i", "wlan7", "--limit", "1GiB"], 3, "UNKNOWN: no interface named \"wlan7\""),
            (["-i", "wwan0"], 3, "UNKNOWN: check: --limit needs a quota"),
            (["-i", "wwan0", "--limit", "lots"], 3, "UNKNOWN: check: --limit: expected a size such as 20GiB, 500 MB, 1.5T or 4096 (G and GiB are 2^30 bytes, GB is 10^9), got \"lots\""),
            // The one size grammar: case-blind, B alone is SI.
            (["-i", "eth0", "--period", "day", "--limit", "1 gb"], 0, "OK: eth0 used 135.50 MiB of 953.67 MiB this day"),
            (["-i", "wwan0", "--limit", "20GiB", "--warn", "112%"], 3, "UNKNOWN: check: --warn is a share of the quota from 0% to 100%"),
        ]
        for (arguments, status, prefix) in cases {
            let result = try seeded.ifmeter(["check"] + arguments)
            #expect(result.status == status, "\(arguments): \(result.stdout)\(result.stderr)")
            #expect(result.stdout.hasPrefix(prefix), "\(arguments): \(result.stdout)")
            #expect(result.stdout.filter { $0 == "\n" }.count == 1, "\(arguments): one line")
        }
        let nobody = try Command.run([CLIBinary.path, "--socket", seeded.daemon.directory + "/none.sock", "check", "-i", "wwan0", "--limit", "1G"])
        #expect(nobody.status == 3 && nobody.stdout.hasPrefix("UNKNOWN: ifmeterd is not running"))
    }
}
