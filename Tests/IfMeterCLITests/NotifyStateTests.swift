@testable import IfMeterCLI
import IfMeterTestSupport
import Testing

@Suite("notify's state", .ownThread, .timeLimit(.minutes(3)))
struct NotifyStateTests {
    @Test("keys past the bound are let go, and their events still count as handled; the newest time reads back")
    func forgottenKeysStayHandled() throws {
        let directory = try TemporaryDirectory()
        var state = try NotifyState.load(directory.path + "/notify.state")
        let total = NotifyState.maximumKeys + 2000
        for index in 0..<total { state.remember("plan-threshold p \(index) 0.5", at: Double(index)) }
        #expect(state.count == NotifyState.maximumKeys)
        #expect(state.handled("plan-threshold p 0 0.5", at: 0), "its key was let go; it is older than the newest")
        #expect(!state.handled("plan-threshold p \(total) 0.5", at: Double(total)))
        #expect(state.handled("plan-threshold p \(total - 1) 0.5", at: Double(total - 1)))
        try state.save()
        let again = try NotifyState.load(directory.path + "/notify.state")
        #expect(again.newest == Double(total - 1) && again.count == NotifyState.maximumKeys)
        #expect(again.handled("plan-threshold p 1 0.5", at: 1) && !again.handled("plan-threshold p \(total) 0.5", at: Double(total)))
        #expect(throws: CLIError.self) {
            try NotifyState.parse(Array("ifmeter-notify 1\nnewest soon\n".utf8), path: "bad.state")
        }
    }
}
