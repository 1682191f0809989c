import IfMeterCore
import Testing

/// ``ClockTrust`` state by state: each transition from explicit instants (docs/METER.md, "When
/// the wall clock moves").
@Suite("The wall clock's trust", .ownThread, .timeLimit(.minutes(1)))
struct ClockTrustTests {
    /// 2026-12-06 12:00 UTC, 10 000 s after boot.
    static let noon = MeterInstant(wall: 1_796_558_400, sinceBootNanoseconds: 10_000_000_000_000)

    /// `seconds` of boot time after noon, the wall clock `off` seconds away from where it should be.
    static func at(_ seconds: Double, off: Double = 0) -> MeterInstant {
        MeterInstant(wall: noon.wall + seconds + off, sinceBootNanoseconds: noon.sinceBootNanoseconds + UInt64(seconds * 1e9))
    }

    static let threeYears: Double = 1095 * 86400

    @Test("a clock that moves as the boot clock does stays believed, through NTP's slewing")
    func steady() {
        var trust = ClockTrust()
        #expect(trust.observe(Self.noon, synchronised: false) == nil)
        for minute in 1...120 {
            #expect(trust.observe(Self.at(Double(minute) * 60, off: Double(minute) * 0.03), synchronised: false) == nil)
        }
        #expect(trust.isTrusted)
        #expect(trust.anchor == Self.at(7200, off: 3.6))
    }

    @Test("three years ahead is doubted; set right, it is believed again at once, and the anchor never moved to the wrong time")
    func aheadAndBack() {
        var trust = ClockTrust()
        _ = trust.observe(Self.noon, synchronised: false)
        #expect(trust.observe(Self.at(10, off: Self.threeYears), synchronised: false) == .doubted(.jumped(seconds: Self.threeYears)))
        #expect(!trust.isTrusted)
        #expect(trust.observe(Self.at(20, off: Self.threeYears), synchronised: false) == nil)
        #expect(trust.anchor == Self.noon)
        #expect(trust.observe(Self.at(30), synchronised: false) == .trusted(.returned))
        #expect(trust.isTrusted)
    }

    @Test("a time source ends a doubt; a jump it vouches for is never doubted")
    func synchronised() {
        var trust = ClockTrust()
        _ = trust.observe(Self.noon, synchronised: false)
        _ = trust.observe(Self.at(10, off: -3600), synchronised: false)
        #expect(trust.observe(Self.at(20, off: -3600), synchronised: true) == .trusted(.synchronised))
        #expect(trust.observe(Self.at(30, off: -3590), synchronised: true) == .stepped(seconds: 10))
        #expect(trust.isTrusted)
    }

    @Test("without a time source, a moved clock is believed once it has agreed with the boot clock for the settle time; moving again starts it afresh")
    func agreed() {
        var trust = ClockTrust()
        _ = trust.observe(Self.noon, synchronised: false)
        _ = trust.observe(Self.at(60, off: 86400), synchronised: false)
        #expect(trust.observe(Self.at(60 + ClockTrust.settleSeconds - 60, off: 86400), synchronised: false) == nil)
        // Moved again: the wait begins from here.
        #expect(trust.observe(Self.at(ClockTrust.settleSeconds, off: 2 * 86400), synchronised: false) == nil)
        #expect(trust.observe(Self.at(ClockTrust.settleSeconds + 120, off: 2 * 86400), synchronised: false) == nil)
        #expect(!trust.isTrusted)
        #expect(trust.observe(Self.at(2 * ClockTrust.settleSeconds, off: 2 * 86400), synchronised: false) == .trusted(.agreed))
        #expect(trust.anchor == Self.at(2 * ClockTrust.settleSeconds, off: 2 * 86400))
    }

    @Test("after a reboot: behind the last believed time is doubted (a board without a real-time clock); ahead of it is believed (the machine was off)")
    func afterReboot() {
        var board = ClockTrust(anchor: Self.noon, sameBoot: false)
        let stale = MeterInstant(wall: 86400 * 365, sinceBootNanoseconds: 5_000_000_000)
        #expect(board.observe(stale, synchronised: false) == .doubted(.behindSaved(seconds: Self.noon.wall - stale.wall)))
        // The boot clock of the last boot is not this one's: only a time source or agreement ends it.
        #expect(board.observe(MeterInstant(wall: Self.noon.wall + 100, sinceBootNanoseconds: 100_000_000_000), synchronised: false) == nil)
        #expect(board.observe(MeterInstant(wall: Self.noon.wall + 110, sinceBootNanoseconds: 110_000_000_000), synchronised: true)
            == .trusted(.synchronised))

        var laptop = ClockTrust(anchor: Self.noon, sameBoot: false)
        #expect(laptop.observe(MeterInstant(wall: Self.noon.wall + 30 * 86400, sinceBootNanoseconds: 9_000_000_000), synchronised: false) == nil)
        #expect(laptop.isTrusted)
    }

    @Test("a restart in this boot resumes from the saved anchor: a clock that jumped while the daemon was down is doubted")
    func restart() {
        var trust = ClockTrust(anchor: Self.noon, sameBoot: true)
        #expect(trust.observe(Self.at(600, off: Self.threeYears), synchronised: false) == .doubted(.jumped(seconds: Self.threeYears)))
        var fresh = ClockTrust(anchor: Self.noon, sameBoot: true)
        #expect(fresh.observe(Self.at(600), synchronised: false) == nil)
    }

    @Test("the reason reads as an admin would say it")
    func reason() {
        #expect(ClockTrust.Reason.jumped(seconds: Self.threeYears).description == "the wall clock moved 1095 d 0 h ahead of the boot clock")
        #expect(ClockTrust.Reason.jumped(seconds: -3700).description == "the wall clock moved 1 h 1 min behind the boot clock")
    }
}
