@testable import IfMeterCLI
import IfMeterWire
import IfMeterTestSupport
import Testing

@Suite("ifmeter's client", .ownThread, .timeLimit(.minutes(3)))
struct DaemonClientTests {
    @Test("a daemon speaking another protocol version is named as such (exit 76)")
    func versionMismatch() {
        #expect {
            _ = try DaemonClient.decode(Array(#"{"v":2,"ok":true,"result":{}}"#.utf8))
        } throws: { error in
            let error = error as? CLIError
            return error?.status == .protocolMismatch && error?.message == "ifmeterd speaks protocol 2, this ifmeter speaks 1; install matching versions"
        }
        let refused = DaemonClient.describe(WireError(.unsupportedVersion, "protocol version 1 is not supported"), command: "usage")
        #expect(refused.status == .protocolMismatch)
        #expect(DaemonClient.describe(WireError(.notReady, ""), command: "usage").status == .starting)
        #expect(DaemonClient.describe(WireError(.permissionDenied, "no"), command: "forget").status == .noPermission)
    }
}
