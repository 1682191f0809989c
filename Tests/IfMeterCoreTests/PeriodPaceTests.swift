import IfMeterCore
import IfMeterTestSupport
import Testing

@Suite("A period's pace and projection", .ownThread, .timeLimit(.minutes(1)))
struct PeriodPaceTests {
    /// A figure so far at an instant of the period `[start, end)`, and what it projects to.
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var soFar: UInt64
        var start: Double
        var end: Double
        var now: Double
        var fraction: Double
        var projected: UInt64
        var testDescription: String { name }
    }

    static let day = 86_400.0

    static let cases: [Case] = [
        Case(name: "a quarter of a day", soFar: 5000, start: 0, end: day, now: day / 4, fraction: 0.25, projected: 20000),
        Case(name: "a third: the float's rounding does not lose a byte", soFar: 1000, start: 0, end: 3, now: 1,
             fraction: 1.0 / 3, projected: 3000),
        Case(name: "zero elapsed, at the period's start: what is there, no pace to scale by", soFar: 500, start: day, end: 2 * day,
             now: day, fraction: 0, projected: 500),
        Case(name: "nothing yet at the start", soFar: 0, start: day, end: 2 * day, now: day, fraction: 0, projected: 0),
        Case(name: "nothing in half a period", soFar: 0, start: 0, end: day, now: day / 2, fraction: 0.5, projected: 0),
        Case(name: "the clock set back before the start", soFar: 700, start: day, end: 2 * day, now: day - 3600,
             fraction: 0, projected: 700),
        Case(name: "at the end", soFar: 900, start: 0, end: day, now: day, fraction: 1, projected: 900),
        Case(name: "past the end (not yet rolled over): no less than what was used", soFar: 900, start: 0, end: day,
             now: 2 * day, fraction: 1, projected: 900),
        Case(name: "a fraction of a second in", soFar: 1, start: 0, end: 31 * day, now: 0.5, fraction: 0.5 / (31 * day),
             projected: 5_356_800),
        Case(name: "over the counter range early in a period: held at 2^64 − 1", soFar: 1 << 62, start: 0, end: day,
             now: 1, fraction: 1 / day, projected: .max),
        Case(name: "2^64 − 1 so far, halfway", soFar: .max, start: 0, end: day, now: day / 2, fraction: 0.5, projected: .max),
        Case(name: "past 2^53 at the end: exactly what was used, not its float", soFar: (1 << 60) + 1, start: 0, end: day,
             now: day, fraction: 1, projected: (1 << 60) + 1),
        Case(name: "an empty period at its own instant is over", soFar: 42, start: day, end: day, now: day, fraction: 1,
             projected: 42),
        Case(name: "an empty period before it", soFar: 42, start: day, end: day, now: 0, fraction: 0, projected: 42),
    ]

    @Test("elapsed fraction and projection", arguments: cases)
    func projection(_ c: Case) {
        let pace = PeriodPace(start: c.start, end: c.end, at: c.now)
        #expect(pace.elapsedFraction == c.fraction)
        #expect(pace.projected(c.soFar) == c.projected)
    }
}
