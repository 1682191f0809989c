import Foundation
import IfMeterTestSupport
import Testing

/// The wall clock moved under the real daemon (docs/METER.md, "When the wall clock moves"): a
/// shim preloaded into ifmeterd (Tests/tools/clock-shift.c) adds offsets to its wall and boot
/// clocks and answers adjtimex with a synchronised state the test chooses; everything else is
/// real: a veth pair, known datagrams, the kernel's counters.
@Suite("The wall clock moved under a running daemon", .enabled(if: ClockShift.available, ClockShift.skipReason),
       .serialized, .ownThread, .timeLimit(.minutes(10)))
final class ClockTests {
    let shift: ClockShift
    let pair: VethPair
    let daemon: DaemonProcess
    var baseline: UInt64 = 0
    static let limit: UInt64 = 100_000
    static let threeYears: Double = 1095 * 86400
    /// Far enough for every row a test makes, whatever the clock says.
    static let everything = #""from":0,"to":4102444800"#

    init() throws {
        shift = try ClockShift()
        pair = try VethPair(leftName: "ka", rightName: "kb", subnet: 163)
        for (side, name) in [(pair.left, "ka"), (pair.right, "kb")] {
            _ = try side.exec(["sysctl", "-qw", "net.ipv6.conf.\(name).disable_ipv6=1"])
        }
        daemon = try DaemonProcess(namespace: pair.left, config: """
            plan[cap] = ka
            plan[cap].limit = \(Self.limit)
            plan[cap].period = month
            plan[cap].direction = tx
            plan[cap].thresholds = 50%, 100%
            """)
    }

    deinit {
        _ = try? daemon.stop(SIGKILL)
        pair.left.delete()
        pair.right.delete()
    }

    func start(zone: String? = nil) throws {
        var environment = shift.environment
        if let zone { environment["TZ"] = zone }
        try daemon.start(extraArguments: ["--interval", "3600"], environment: environment)
    }

    func request(_ line: String) throws -> [String: Any] {
        let reply = try daemon.client().request(line)
        return try #require(reply["result"] as? [String: Any], "\(reply)")
    }

    func sample() throws { _ = try request(#"{"v":1,"cmd":"sample"}"#) }

    func kernelTx() throws -> UInt64 { try pair.left.sysfsCounter("ka", "tx_bytes") }

    /// The plan's figures, once its period's saved traffic has been read (a period the clock
    /// moved into is read from the store first, docs/PROTOCOL.md `plans`).
    func plan() throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let plans = try #require(try request(#"{"v":1,"cmd":"plans"}"#)["plans"] as? [[String: Any]])
            if let plan = plans.first { return plan }
            usleep(20_000)
        }
        Issue.record("the plan's period was never read")
        throw CancellationError()
    }

    func clock() throws -> [String: Any] {
        try #require(try request(#"{"v":1,"cmd":"status"}"#)["clock"] as? [String: Any])
    }

    func trusted() throws -> Bool { try clock()["trusted"] as? Bool == true }

    /// The plan's thresholds fired, in order.
    func fired() throws -> [Double] {
        try events("plan-threshold").compactMap { ($0["plan"] as? [String: Any])?["threshold"] as? Double }
    }

    func events(_ kind: String) throws -> [[String: Any]] {
        try #require(try request(#"{"v":1,"cmd":"events","kind":"\#(kind)",\#(Self.everything)}"#)["events"] as? [[String: Any]])
    }

    /// Rows of ka's `period` buckets: (start, end, tx bytes).
    func rows(_ period: String) throws -> [(start: Int64, end: Int64, tx: UInt64)] {
        let rows = try #require(try request(#"{"v":1,"cmd":"usage","interface":"ka","period":"\#(period)",\#(Self.everything)}"#)["rows"]
            as? [[String: Any]])
        return rows.map { (($0["start"] as? Int64) ?? -1, ($0["end"] as? Int64) ?? -1, ($0["tx_bytes"] as? UInt64) ?? 0) }
    }

    func totalTx() throws -> UInt64? { try rows("total").first?.tx }

    /// Sends datagrams until ka has sent `share` of the limit since the baseline (and a little more).
    func send(upTo share: Double) throws {
        let target = baseline + UInt64(Double(Self.limit) * share) + 1
        let now = try kernelTx()
        guard now < target else { return }
        try pair.sendLeftToRight(count: Int((target - now) / 1042) + 1, payload: 1000)
    }

    @Test("three years ahead without a time source: nothing pruned, no period ended, no threshold fired, across a restart; back on its time line, the plan goes on in its own period; believed ahead, it prunes")
    func aheadAndBack() throws {
        try shift.set(wall: 0, boot: 0, synchronised: true)
        baseline = try kernelTx()
        let first = baseline
        try start()
        try send(upTo: 0.6)
        try sample()
        #expect(try fired() == [0.5])
        let today = try #require(try rows("day").last?.start, "a row for today")

        try shift.set(wall: Self.threeYears, boot: 0, synchronised: false)
        try sample()
        let doubt = try clock()
        #expect(doubt["trusted"] as? Bool == false)
        #expect((doubt["detail"] as? String ?? "").contains("ahead of the boot clock"), "\(doubt)")
        let status = try pair.left.run([CLIBinary.path, "--socket", daemon.socket, "status"]).stdout
        #expect(status.contains("wall clock") && status.contains("doubted since") && status.contains("retention"), "\(status)")
        #expect(daemon.stderrText.components(separatedBy: "the wall clock is doubted").count == 2, "said once: \(daemon.stderrText)")
        // Counted on the day the wall clock says: in a period three years on, not in the plan's.
        try send(upTo: 1.1)
        try sample()
        #expect(try fired() == [0.5], "no threshold fires by a doubted clock")
        #expect(try events("plan-period-started").isEmpty, "no period ends by a doubted clock")

        try daemon.stop()
        try start()
        try sample()
        #expect(try !trusted(), "a restart goes on doubting: the anchor was saved")
        #expect(try rows("day").contains { $0.start == today }, "the final save pruned nothing")

        try shift.set(wall: 0, boot: 0, synchronised: false)
        try sample()
        #expect(try trusted(), "back on the time line it was believed on")
        #expect(try fired() == [0.5])
        #expect(try events("plan-period-started").isEmpty, "the plan watches the period it watched")
        baseline = try kernelTx() - UInt64(Double(Self.limit) * 0.6)
        try send(upTo: 1.0)
        try sample()
        #expect(try fired() == [0.5, 1.0], "the plan's own period crosses 100 %, once")
        try daemon.stop()
        try start()
        try sample()
        #expect(try fired() == [0.5, 1.0])
        #expect(try rows("day").contains { $0.start == today })
        #expect(try totalTx() == (try kernelTx()) - first, "the all-time total is the kernel's")

        // The control: believed three years ahead (a time source says so), the save prunes
        // today's row: the waiting above is what kept it.
        try shift.set(wall: Self.threeYears, boot: 0, synchronised: true)
        try sample()
        #expect(try trusted())
        #expect(daemon.stderrText.contains("stepped"), "\(daemon.stderrText)")
        try daemon.stop()
        try start()
        try sample()
        #expect(try !rows("day").contains { $0.start == today }, "retention ran by the believed clock")
        #expect(try events("plan-period-started").count == 1)
        #expect(try totalTx() == (try kernelTx()) - first)
    }

    @Test("three years ahead between two samples: the fold the save timer runs first sees the jump itself and prunes nothing")
    func jumpBeforeFold() throws {
        // A fold at every save, a save every second, and no sample but those asked for.
        let config = try String(contentsOfFile: daemon.config, encoding: .utf8)
        try (config + "\nsave_interval = 1\nfold_interval = 0\n").write(toFile: daemon.config, atomically: true, encoding: .utf8)
        try shift.set(wall: 0, boot: 0, synchronised: true)
        baseline = try kernelTx()
        try start()
        try send(upTo: 0.2)
        try sample()
        let day = try #require(try rows("day").last, "a row for today")
        let hour = try #require(try rows("hour").last, "a row for this hour")

        try shift.set(wall: Self.threeYears, boot: 0, synchronised: false)
        Thread.sleep(forTimeInterval: 3)
        #expect(daemon.stderrText.contains("the wall clock is doubted"), "a save saw the jump: \(daemon.stderrText)")
        try shift.set(wall: 0, boot: 0, synchronised: false)
        try sample()
        #expect(try trusted())
        #expect((try rows("day").first { $0.start == day.start }?.tx ?? 0) >= day.tx, "the day's row was not pruned")
        #expect((try rows("hour").first { $0.start == hour.start }?.tx ?? 0) >= hour.tx, "the hour's row was not pruned")
        #expect(try totalTx() == (try kernelTx()) - baseline)
    }

    @Test("set back forty days over saved buckets and believed: no period rolled back, no threshold fired twice, nothing pruned")
    func setBack() throws {
        try shift.set(wall: 0, boot: 0, synchronised: true)
        baseline = try kernelTx()
        try start()
        try send(upTo: 0.6)
        try sample()
        #expect(try fired() == [0.5])
        let today = try #require(try rows("day").last?.start)
        let watched = try #require(try plan()["period_start"] as? Int64)

        try shift.set(wall: -40 * 86400, boot: 0, synchronised: true)
        try sample()
        #expect(try trusted(), "a step a time source vouches for is believed")
        #expect(try plan()["watching_period_start"] as? Int64 == watched, "plans says where the watch still is")
        let said = try pair.left.run([CLIBinary.path, "--socket", daemon.socket, "plans"]).stdout
        #expect(said.contains("its thresholds wait for the period from"), "\(said)")
        try send(upTo: 1.2)
        try sample()
        #expect(try fired() == [0.5], "the earlier period is not watched again")
        #expect(try events("plan-period-started").isEmpty)
        try daemon.stop()
        try start()
        try sample()
        let days = try rows("day")
        #expect(days.contains { $0.start == today })
        #expect(days.contains { $0.start < today - 30 * 86400 }, "buckets follow the wall clock: the bytes sent then are 40 days back")

        try shift.set(wall: 0, boot: 0, synchronised: true)
        try sample()
        #expect(try fired() == [0.5])
        #expect(try events("plan-period-started").isEmpty)
        #expect(try plan()["watching_period_start"] == nil, "back in the period it watches")
        #expect(try totalTx() == (try kernelTx()) - baseline)
    }

    @Test("a suspend of two hours: the first sample covers it, the clock is believed, the rate never spikes, a threshold crossed before the resume fires once")
    func suspend() throws {
        try shift.set(wall: 0, boot: 0, synchronised: false)
        baseline = try kernelTx()
        try start()
        try send(upTo: 0.3)
        try sample()
        try send(upTo: 0.6)
        // Since the start: a first interval shorter than half a second joins the next.
        let sent = try kernelTx() - baseline
        try shift.set(wall: 7200, boot: 7200, synchronised: false)
        try sample()
        #expect(try trusted())
        #expect(try events("clock-jump").isEmpty, "wall and boot clocks moved together")
        #expect(try fired() == [0.5])
        let interfaces = try #require(try request(#"{"v":1,"cmd":"interfaces"}"#)["interfaces"] as? [[String: Any]])
        let rate = try #require(interfaces.first { $0["name"] as? String == "ka" }?["rate"] as? [String: Any])
        let tx = try #require(rate["tx_bytes_per_second"] as? Double)
        #expect(tx <= Double(sent) / 7200 + 1, "the sample's interval holds the sleep: \(tx) B/s for \(sent) B")
        try sample()
        #expect(try fired() == [0.5])
    }

    @Test("the fall-back night in Europe/Berlin: both 02:00 hours get their own bucket, and the day is 25 hours with both")
    func fallBack() throws {
        // 2026-10-25 00:30 UTC is 02:30 CEST; an hour later it is 02:30 CET.
        let first: Double = 1_792_888_200
        try shift.set(wall: first - Date().timeIntervalSince1970, boot: 0, synchronised: true)
        baseline = try kernelTx()
        try start(zone: "Europe/Berlin")
        try pair.sendLeftToRight(count: 5, payload: 1000)
        try sample()
        let summer = try kernelTx() - baseline
        try shift.set(wall: first + 3600 - Date().timeIntervalSince1970, boot: 3600, synchronised: true)
        try pair.sendLeftToRight(count: 7, payload: 1000)
        try sample()
        let winter = try kernelTx() - baseline - summer
        let hours = try rows("hour")
        #expect(hours.first { $0.start == 1_792_886_400 }?.tx == summer, "02:00 CEST: \(hours)")
        #expect(hours.first { $0.start == 1_792_890_000 }?.tx == winter, "02:00 CET: \(hours)")
        let day = try #require(try rows("day").first { $0.start == 1_792_879_200 }, "2026-10-25 from 00:00 CEST")
        #expect(day.end - day.start == 25 * 3600)
        #expect(day.tx == summer + winter)
    }
}

/// The preloaded shim and the file it reads its offsets from.
final class ClockShift {
    static var available: Bool { NetworkNamespace.available && (try? Command.resolve("gcc")) != nil }
    static let skipReason: Comment = "needs root (network namespaces) and gcc to build Tests/tools/clock-shift.c"

    let directory: TemporaryDirectory
    let library: String
    let file: String

    init() throws {
        directory = try TemporaryDirectory()
        library = directory.path + "/libclockshift.so"
        file = directory.path + "/shift"
        try Command.check(["gcc", "-shared", "-fPIC", "-O2", "-Wall", "-o", library,
                           Daemon.packageRoot + "/Tests/tools/clock-shift.c", "-ldl"])
    }

    var environment: [String: String] { ["LD_PRELOAD": library, "IFMETER_CLOCK_SHIFT": file] }

    /// Offsets (seconds) from the real clocks from now on; renamed into place, so the shim
    /// never reads half a file.
    func set(wall: Double, boot: Double, synchronised: Bool) throws {
        let text = "\(wall) \(boot) \(synchronised ? "sync" : "unsync")\n"
        try text.write(toFile: file + ".new", atomically: false, encoding: .utf8)
        guard rename(file + ".new", file) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }
}
