import Foundation
import IfMeterTestSupport
import Testing

/// The 95th percentile in `/metrics` and on the page (docs/METRICS.md, docs/CLI.md "95th"), with
/// the real daemon: its clocks put at the first minutes of a month (Tests/tools/clock-shift.c),
/// so that the month's one ended 5-minute slot is the one the test filled; its figure is then
/// that slot's bytes from the kernel's counters, exactly.
@Suite("The 95th percentile in /metrics and on the page", .enabled(if: ClockShift.available, ClockShift.skipReason),
       .serialized, .ownThread, .timeLimit(.minutes(5)))
final class PercentileMetricsTests {
    let shift: ClockShift
    let pair: VethPair
    let daemon: DaemonProcess
    static let port = 10952
    /// 2027-01-01 00:02 UTC: two minutes into a billing month.
    static let monthStart: Double = 1_798_761_600

    init() throws {
        shift = try ClockShift()
        pair = try VethPair(leftName: "qa", rightName: "qb", subnet: 165)
        for (side, name) in [(pair.left, "qa"), (pair.right, "qb")] {
            _ = try side.exec(["sysctl", "-qw", "net.ipv6.conf.\(name).disable_ipv6=1"])
        }
        daemon = try DaemonProcess(namespace: pair.left, config: """
            classify = qa = ethernet
            classify = lo = ignore
            time_zone = utc
            save_interval = 1
            fold_interval = 0
            retention_5min = 35d
            metrics_listen = 127.0.0.1:\(Self.port)
            """)
    }

    deinit {
        _ = try? daemon.stop(SIGKILL)
        pair.left.delete()
        pair.right.delete()
    }

    func metrics() throws -> String {
        let reply = try daemon.client().request(#"{"v":1,"cmd":"metrics"}"#)
        return try #require((reply["result"] as? [String: Any])?["text"] as? String, "\(reply)")
    }

    @Test("the month's one ended slot: rx, tx and max in bit/s are its bytes × 8 / 300 from the kernel's counters, coverage 1; the page shows it")
    func oneSlot() throws {
        try shift.set(wall: Self.monthStart + 120 - Date().timeIntervalSince1970, boot: 0, synchronised: true)
        let baseline = try pair.left.sysfsCounter("qa", "tx_bytes")
        try daemon.start(extraArguments: ["--interval", "3600"], environment: shift.environment)
        try pair.sendLeftToRight(count: 50, payload: 1000)
        _ = try daemon.client().request(#"{"v":1,"cmd":"sample"}"#)
        let sent = try pair.left.sysfsCounter("qa", "tx_bytes") - baseline
        // Five minutes on, as a suspend would move both clocks: the slot has ended.
        try shift.set(wall: Self.monthStart + 420 - Date().timeIntervalSince1970, boot: 300, synchronised: true)
        let bits = Double(sent) * 8 / 300
        let written = bits == bits.rounded() ? String(Int64(bits)) : "\(bits)"
        let expected = #"ifmeter_interface_95th_percentile_bits_per_second{interface="qa",class="ethernet",direction="tx"} \#(written)"#
        let deadline = Date().addingTimeInterval(60)
        var exposition = ""
        // Worked out after each fold (every second here): wait for one after the move.
        while Date() < deadline {
            exposition = try metrics()
            if exposition.contains(expected) { break }
            usleep(20_000)
        }
        #expect(exposition.contains(expected), "\(exposition.split(separator: "\n").filter { $0.contains("95th") })")
        #expect(exposition.contains(#"direction="max"} \#(written)"#))
        #expect(exposition.contains(#"ifmeter_interface_95th_percentile_coverage_ratio{interface="qa",class="ethernet"} 1"#))
        #expect(!exposition.contains(#"interface="lo""#))
        let page = try pair.left.run(["curl", "-sf", "http://127.0.0.1:\(Self.port)/"])
        #expect(page.status == 0, "\(page.stderr)")
        #expect(page.stdout.contains("<section id=\"percentile\">") && page.stdout.contains("data-name=\"qa\""))
        #expect(page.stdout.contains("1 of 1"), "one slot, with traffic")
    }
}
