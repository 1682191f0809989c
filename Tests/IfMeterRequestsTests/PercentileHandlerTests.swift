import IfMeterCore
@testable import IfMeterRequests
import IfMeterTestSupport
@testable import IfMeterWire
import Testing

/// `percentile` against ``ValueContext``: eth0 carried 1000 bytes in and 10 out in one
/// 5-minute slot each hour (UTC buckets), wg0 (a tunnel) 100 in.
@Suite("Percentile requests", .ownThread, .timeLimit(.minutes(3)))
struct PercentileHandlerTests {
    static let peer = Peer(uid: 1000, isAdmin: false)
    /// 2026-09-22 00:00 UTC, the day `now` (ValueContext.origin + 24 h) is in.
    static let dayStart: Int64 = 1_790_035_200
    /// The start of the slot in progress at `now`: slots before it have ended.
    static let lastEnded: Int64 = 1_790_086_200

    func answer(_ request: PercentileRequest, _ context: ValueContext) throws -> ResponseLine {
        let handlers = RequestHandlers(context: context)
        return try RequestHandlersTests.line(handlers.answer(request, id: .number(7), from: Self.peer), handlers, context)
    }

    func result(_ request: PercentileRequest, _ context: ValueContext) throws -> PercentileResult {
        let response = try answer(request, context)
        #expect(response.ok, "\(String(describing: response.error))")
        return try response.result(as: PercentileResult.self)
    }

    @Test("today: every ended slot counted, the empty ones as zero; the value at rank ⌈0.95 N⌉, labelled")
    func today() throws {
        let context = try ValueContext()
        let answer = try result(PercentileRequest(interfaces: ["eth0", "wg0"], period: .day), context)
        let eth0 = try #require(answer.subjects.first)
        #expect(eth0.name == "eth0" && eth0.period == "day")
        #expect(eth0.start == Self.dayStart && eth0.end == Self.lastEnded && eth0.periodEnd == Self.dayStart + 86400)
        // 170 slots ended today; the samples at 10:00 … 23:00 (hours 10 to 23 after the origin) fell in 14.
        #expect(eth0.figure.slots == 170 && eth0.figure.slotsWithTraffic == 14 && eth0.figure.rank == 162)
        // 156 zeros first: rank 162 is the sixth of fourteen equal slots.
        #expect(eth0.figure.rxBytes == 1000 && eth0.figure.txBytes == 10 && eth0.figure.totalBytes == 1010)
        #expect(eth0.figure.maxBytes == 1000 && !eth0.figure.maxIsTx)
        #expect(eth0.labels.starts(with: ["estimate", "interface-counters"]))
        #expect(eth0.retainedFrom == Int64(context.now) - 48 * 3600)
        #expect(answer.footnote == EstimateLabel.footnote)
        let wg0 = answer.subjects[1]
        #expect(wg0.name == "wg0" && wg0.figure.rxBytes == 100 && wg0.figure.txBytes == 0)
        #expect(wg0.labels.contains("tunnel-double-counted"))
    }

    @Test("the answer is the percentile of what usage answers for the same slots")
    func sameAsUsage() throws {
        let context = try ValueContext()
        let handlers = RequestHandlers(context: context)
        let from = Self.lastEnded - 6 * 3600
        let usage = try RequestHandlersTests.line(handlers.answer(UsageRequest(
            interface: "eth0", period: .fiveMinutes, from: TimeArgument(seconds: Double(from)),
            to: TimeArgument(seconds: Double(Self.lastEnded))), from: Self.peer), handlers, context)
        let rows = try usage.result(as: UsageResult.self).rows
        #expect(rows.count == 6)
        let range = try result(PercentileRequest(interfaces: ["eth0"], from: TimeArgument(seconds: Double(from))), context)
        let entry = try #require(range.subjects.first)
        let expected = BurstablePercentile(buckets: rows.map { (Int64($0.start), $0.traffic) }, from: from, to: Self.lastEnded)
        #expect(entry.figure == expected && entry.period == "range" && entry.figure.slots == 72)
        // Two slots, one with traffic: the 95th of two is the larger.
        let pair = try result(PercentileRequest(interfaces: ["eth0"], from: TimeArgument(seconds: Double(Self.lastEnded - 3600)),
                                                to: TimeArgument(seconds: Double(Self.lastEnded - 3000))), context)
        #expect(pair.subjects.first?.figure.slots == 2 && pair.subjects.first?.figure.rxBytes == 1000)
    }

    @Test("a class is summed as one subject; the month starts on the billing day")
    func classAndMonth() throws {
        let context = try ValueContext()
        let eth0 = try #require(context.service?.snapshot().interfaces.first { $0.name == "eth0" })
        let className = try #require(eth0.interfaceClass)
        let answer = try result(PercentileRequest(class: className, sum: true), context)
        let entry = try #require(answer.subjects.first)
        #expect(answer.subjects.count == 1 && entry.name == nil && entry.class == className && entry.period == "month")
        #expect(entry.start == 1_788_220_800)  // 2026-09-01 00:00 UTC
        #expect(entry.figure.slots == Int((Self.lastEnded - 1_788_220_800) / 300) && entry.figure.slotsWithTraffic == 23,
                "\(entry.figure)")
        #expect(entry.outlivedRetention)
    }

    @Test("refused, saying why: a bad range, an unknown period or interface, a period with a range",
          arguments: [
              (PercentileRequest(interfaces: ["eth0"], from: TimeArgument(seconds: 2000), to: TimeArgument(seconds: 1000)),
               ErrorCode.badRequest, "\"from\" must be before \"to\""),
              (PercentileRequest(interfaces: ["eth0"], from: TimeArgument(seconds: 1000), to: TimeArgument(seconds: 1000)),
               .badRequest, "\"from\" must be before \"to\""),
              (PercentileRequest(interfaces: ["eth0"], to: TimeArgument(seconds: 1000)), .badRequest, "\"to\" needs \"from\""),
              (PercentileRequest(interfaces: ["eth0"], period: .day, from: TimeArgument(seconds: 1000)), .badRequest, "not both"),
              (PercentileRequest(interfaces: ["eth9"]), .unknownInterface, "no interface named \"eth9\""),
              (PercentileRequest(class: "nonsense"), .badRequest, "unknown class \"nonsense\""),
          ])
    func refused(request: PercentileRequest, code: ErrorCode, message: String) throws {
        let response = try answer(request, try ValueContext())
        #expect(!response.ok && response.error?.code == code)
        #expect(response.error?.message.contains(message) == true, "\(String(describing: response.error))")
    }

    @Test("an unknown period is refused with the known ones")
    func unknownPeriod() throws {
        var request = PercentileRequest(interfaces: ["eth0"])
        request.period = "week"
        let response = try answer(request, try ValueContext())
        #expect(response.error?.code == .badRequest)
        #expect(response.error?.message == "unknown period \"week\"; known: month, last-month, day")
    }
}
