import IfMeterPresentation
import IfMeterCore
@testable import IfMeterCLI
import IfMeterWire
import IfMeterTestSupport
import Testing

@Suite("ifmeter check", .ownThread, .timeLimit(.minutes(3)))
struct QuotaCheckTests {
    static let monthStart = 1_772_319_600.0

    func usage(rx: UInt64, tx: UInt64, projectedRx: UInt64, projectedTx: UInt64, resets: Int = 0) -> UsageResult {
        UsageResult(
            interface: "wwan0", class: nil, period: "month",
            rows: [UsageRowResult(UsageRowFields(start: Self.monthStart, end: Self.monthStart + 31 * 86400,
                                                 continuity: Continuity(resets: resets), labels: ["estimate"]),
                                  traffic: Traffic(rxBytes: rx, txBytes: tx))],
            projection: ProjectionResult(start: Self.monthStart, end: Self.monthStart + 31 * 86400, elapsedFraction: 0.5,
                                         rxBytes: projectedRx, txBytes: projectedTx, labels: ["estimate", "projection"]),
            footnote: "")
    }

    func evaluate(_ usage: UsageResult, limit: UInt64 = 10 << 30, warn: Double = 0.8, projected: Bool = false,
                  direction: String = "both") -> QuotaCheck {
        QuotaCheck.evaluate(interface: "wwan0", period: "month", usage: usage, limit: limit, warnFraction: warn,
                            projected: projected, direction: direction, units: Units(), time: TimeText(utc: true))
    }

    @Test("ok, warning at the threshold, critical at the limit")
    func statuses() {
        let gib: UInt64 = 1 << 30
        #expect(evaluate(usage(rx: 3 * gib, tx: gib, projectedRx: 6 * gib, projectedTx: 2 * gib)).status == .ok)
        #expect(evaluate(usage(rx: 7 * gib, tx: gib, projectedRx: 0, projectedTx: 0)).status == .warning)
        #expect(evaluate(usage(rx: 9 * gib, tx: gib, projectedRx: 0, projectedTx: 0)).status == .critical)
        let projected = evaluate(usage(rx: 3 * gib, tx: gib, projectedRx: 9 * gib, projectedTx: 2 * gib), projected: true)
        #expect(projected.status == .critical && projected.compared == "projected")
        #expect(projected.labels.contains("projection"))
        #expect(evaluate(usage(rx: 9 * gib, tx: gib, projectedRx: 0, projectedTx: 0), direction: "tx").status == .ok)
    }

    @Test("one line: status, reason, Nagios performance data")
    func message() {
        let check = evaluate(usage(rx: 3 << 30, tx: 1 << 30, projectedRx: 6 << 30, projectedTx: 2 << 30, resets: 1))
        #expect(check.message.hasPrefix("OK: wwan0 used 4.00 GiB of 10.00 GiB this month (40%)"))
        #expect(check.message.contains("the period had a reset or gap"))
        #expect(check.message.hasSuffix("| used=4294967296B;8589934592;10737418240;0 projected=8589934592B;8589934592;10737418240;0"))
    }
}
