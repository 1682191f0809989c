import Foundation
import IfMeterTestSupport
import Testing

/// The save journal (docs/CONFIG.md, `fold_interval`) with the real daemon: traffic journalled
/// and not yet folded into the buckets survives a kill -9, in the bucket it was counted in. The
/// restart comes a day later by the daemon's clocks (Tests/tools/clock-shift.c moves both, as a
/// long stop would), so traffic counted again from the kernel's counters at the restart would
/// land on the next day: only the journal keeps it on its own.
@Suite("The save journal under kill -9", .enabled(if: ClockShift.available, ClockShift.skipReason),
       .serialized, .ownThread, .timeLimit(.minutes(10)))
final class SaveJournalTests {
    let shift: ClockShift
    let pair: VethPair

    init() throws {
        shift = try ClockShift()
        pair = try VethPair(leftName: "ja", rightName: "jb", subnet: 164)
        for (side, name) in [(pair.left, "ja"), (pair.right, "jb")] {
            _ = try side.exec(["sysctl", "-qw", "net.ipv6.conf.\(name).disable_ipv6=1"])
        }
    }

    deinit {
        pair.left.delete()
        pair.right.delete()
    }

    func request(_ daemon: DaemonProcess, _ line: String) throws -> [String: Any] {
        let reply = try daemon.client().request(line)
        return try #require(reply["result"] as? [String: Any], "\(reply)")
    }

    /// ja's daily rows: (start, tx bytes).
    func days(_ daemon: DaemonProcess) throws -> [(start: Int64, tx: UInt64)] {
        let rows = try #require(try request(daemon, #"{"v":1,"cmd":"usage","interface":"ja","period":"day","from":0,"to":4102444800}"#)["rows"]
            as? [[String: Any]])
        return rows.map { (($0["start"] as? Int64) ?? -1, ($0["tx_bytes"] as? UInt64) ?? 0) }
    }

    /// Starts a daemon with `config`, sends datagrams and samples; with `journalled`, waits until
    /// an append holds that sample; kills it; restarts it a day later. Returns the daemon, the
    /// bytes sent, ja's tx when it first saw ja, and the day the datagrams were sent on.
    func killAfterTraffic(config: String, journalled: Bool) throws -> (DaemonProcess, sent: UInt64, baseline: UInt64, day: Int64) {
        try shift.set(wall: 0, boot: 0, synchronised: true)
        let daemon = try DaemonProcess(namespace: pair.left, config: config)
        let baseline = try pair.left.sysfsCounter("ja", "tx_bytes")
        try daemon.start(extraArguments: ["--interval", "3600"], environment: shift.environment)
        try pair.sendLeftToRight(count: 40, payload: 1000)
        let sampled = try #require(try request(daemon, #"{"v":1,"cmd":"sample"}"#)["sampled_at"] as? Double)
        let sent = try pair.left.sysfsCounter("ja", "tx_bytes") - baseline
        let day = try #require(try days(daemon).last?.start)
        if journalled {
            try waitFor("an append holding the sample") {
                let store = try self.request(daemon, #"{"v":1,"cmd":"status"}"#)["store"] as? [String: Any]
                return (store?["last_journal_at"] as? Double ?? 0) >= sampled
            }
        }
        try daemon.stop(SIGKILL)
        try shift.set(wall: 86400, boot: 86400, synchronised: true)
        try daemon.start(extraArguments: ["--interval", "3600"], environment: shift.environment)
        _ = try request(daemon, #"{"v":1,"cmd":"sample"}"#)
        return (daemon, sent, baseline, day)
    }

    @Test("journalled traffic survives kill -9 in the bucket it was counted in, and is counted once")
    func journalled() throws {
        let (daemon, sent, baseline, day) = try killAfterTraffic(config: "save_interval = 1\nfold_interval = 1h\n", journalled: true)
        defer { _ = try? daemon.stop(SIGKILL) }
        #expect(daemon.stderrText.contains("counting again the"), "\(daemon.stderrText)")
        let rows = try days(daemon)
        #expect(rows.first { $0.start == day }?.tx == sent, "the day it was sent: \(rows)")
        #expect(rows.filter { $0.start > day }.allSatisfy { $0.tx == 0 }, "nothing of it on the day of the restart: \(rows)")
        let total = try #require(try request(daemon, #"{"v":1,"cmd":"usage","interface":"ja","period":"total"}"#)["rows"] as? [[String: Any]])
        #expect(total.first?["tx_bytes"] as? UInt64 == (try pair.left.sysfsCounter("ja", "tx_bytes")) - baseline)
        // A stop folds: the journal holds nothing after it, and the figures stay.
        try daemon.stop()
        try daemon.start(extraArguments: ["--interval", "3600"], environment: shift.environment)
        #expect(daemon.stderrText.components(separatedBy: "counting again the").count == 2, "the first start's line alone")
        #expect(try days(daemon).first { $0.start == day }?.tx == sent)
    }

    @Test("the control: with nothing saved before the kill, the same traffic is counted at the restart, on its day")
    func unsaved() throws {
        let (daemon, sent, _, day) = try killAfterTraffic(config: "save_interval = 1h\nfold_interval = 1h\n", journalled: false)
        defer { _ = try? daemon.stop(SIGKILL) }
        let rows = try days(daemon)
        #expect(rows.first { $0.start == day }?.tx ?? 0 < sent, "\(rows)")
        #expect(rows.contains { $0.start > day && $0.tx >= sent }, "\(rows)")
    }

    @Test("killed at random moments 12 times while it appends every second and folds every 3 s: each resolution's buckets sum to the total, and the total is the kernel's")
    func randomKills() throws {
        try shift.set(wall: 0, boot: 0, synchronised: true)
        let daemon = try DaemonProcess(namespace: pair.left, config: "save_interval = 1\nfold_interval = 3\n")
        defer { _ = try? daemon.stop(SIGKILL) }
        let baseline = try pair.left.sysfsCounter("ja", "tx_bytes")
        var random = SystemRandomNumberGenerator()
        for _ in 0..<12 {
            try daemon.start(extraArguments: ["--interval", "3600"], environment: shift.environment)
            try pair.sendLeftToRight(count: Int.random(in: 1...30, using: &random), payload: 1000)
            _ = try request(daemon, #"{"v":1,"cmd":"sample"}"#)
            // The kill lands anywhere: before an append, during one, during a fold, between.
            usleep(UInt32.random(in: 0...2_500_000, using: &random))
            try daemon.stop(SIGKILL)
        }
        try daemon.start(extraArguments: ["--interval", "3600"], environment: shift.environment)
        _ = try request(daemon, #"{"v":1,"cmd":"sample"}"#)
        let kernel = try pair.left.sysfsCounter("ja", "tx_bytes") - baseline
        let total = try #require(try request(daemon, #"{"v":1,"cmd":"usage","interface":"ja","period":"total"}"#)["rows"] as? [[String: Any]])
        #expect(total.first?["tx_bytes"] as? UInt64 == kernel)
        for period in ["5min", "hour", "day", "month", "year"] {
            let rows = try #require(try request(daemon, #"{"v":1,"cmd":"usage","interface":"ja","period":"\#(period)","from":0,"to":4102444800}"#)["rows"]
                as? [[String: Any]])
            #expect(rows.reduce(0) { $0 + (($1["tx_bytes"] as? UInt64) ?? 0) } == kernel, "\(period) buckets")
        }
    }

    func waitFor(_ what: String, seconds: Double = 60, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return }
            usleep(20_000)
        }
        Issue.record("timed out waiting for \(what)")
        throw CancellationError()
    }
}
