@testable import IfMeterDaemon
import IfMeterTestSupport
import Testing

@Suite("Requested samples' pace", .ownThread, .timeLimit(.minutes(1)))
struct SamplePaceTests {
    /// A step: who asks at `now` (nil: the pending sample is taken at `now`), and when the
    /// sample answering them is taken.
    struct Step: CustomTestStringConvertible {
        var now: UInt64
        var admin: Bool?
        var at: UInt64?
        var testDescription: String { "\(admin.map { $0 ? "admin" : "user" } ?? "taken") at \(now)" }
    }

    static let second = SamplePace.spacing

    static let cases: [(String, [Step])] = [
        ("the first request is answered at once, whoever asks", [
            Step(now: 5, admin: false, at: 5)]),
        ("a user's second sample waits a second after the first was taken", [
            Step(now: 5, admin: false, at: 5), Step(now: 7, admin: nil, at: nil),
            Step(now: 10, admin: false, at: 7 + second)]),
        ("a request after the second has passed is answered at once", [
            Step(now: 5, admin: false, at: 5), Step(now: 7, admin: nil, at: nil),
            Step(now: 9 + second, admin: false, at: 9 + second)]),
        ("requests while one is pending share it", [
            Step(now: 5, admin: false, at: 5), Step(now: 7, admin: nil, at: nil),
            Step(now: 10, admin: false, at: 7 + second), Step(now: 20, admin: false, at: 7 + second)]),
        ("an admin is not paced: back-to-back samples, each at once", [
            Step(now: 5, admin: true, at: 5), Step(now: 6, admin: nil, at: nil),
            Step(now: 8, admin: true, at: 8), Step(now: 9, admin: nil, at: nil),
            Step(now: 11, admin: true, at: 11)]),
        ("an admin brings a user's paced sample forward, and both share it", [
            Step(now: 5, admin: false, at: 5), Step(now: 7, admin: nil, at: nil),
            Step(now: 10, admin: false, at: 7 + second), Step(now: 12, admin: true, at: 12),
            Step(now: 13, admin: false, at: 12)]),
        ("an admin's samples pace the users after them", [
            Step(now: 5, admin: true, at: 5), Step(now: 6, admin: nil, at: nil),
            Step(now: 8, admin: false, at: 6 + second)]),
    ]

    @Test("when the requested sample is taken", arguments: cases)
    func pace(_ name: String, _ steps: [Step]) {
        var pace = SamplePace()
        for step in steps {
            if let admin = step.admin {
                #expect(pace.request(now: step.now, isAdmin: admin) == step.at, "\(name): \(step.testDescription)")
                #expect(pace.pending == step.at)
            } else {
                pace.taken(at: step.now)
                #expect(pace.pending == nil)
            }
        }
    }

    @Test("an abandoned sample leaves the pace as it was")
    func abandon() {
        var pace = SamplePace()
        _ = pace.request(now: 5, isAdmin: false)
        pace.taken(at: 5)
        _ = pace.request(now: 6, isAdmin: false)
        pace.abandon()
        #expect(pace.pending == nil)
        #expect(pace.request(now: 7, isAdmin: false) == 5 + Self.second)
    }
}
