import Foundation
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The configuration over the socket and at start: reload applies a good file and keeps the
/// running one over a bad one; a bad file at start stops the daemon, saying where.
extension ProtocolTests {
    @Test("SIGHUP and reload: a good config is applied, a bad one is refused and the old one stays")
    func reload() throws {
        let (_, daemon) = try daemon("interval = 30\n")
        let client = try daemon.client()
        #expect(try client.request(#"{"v":1,"cmd":"status"}"#).int("result.interval") == 30)
        try "interval = 7\n".write(toFile: daemon.config, atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        let deadline = Date().addingTimeInterval(60)
        while try client.request(#"{"v":1,"cmd":"status"}"#).int("result.interval") != 7 && Date() < deadline {
            usleep(20_000)
        }
        #expect(try client.request(#"{"v":1,"cmd":"status"}"#).int("result.interval") == 7)

        try "interval = 7\ninterval = soon\n".write(toFile: daemon.config, atomically: true, encoding: .utf8)
        let refused = try client.request(#"{"v":1,"id":1,"cmd":"reload"}"#)
        #expect(errorCode(refused) == "config_error")
        #expect(refused.string("error.message")?.hasPrefix("\(daemon.config):2: interval:") == true)
        #expect(try client.request(#"{"v":1,"cmd":"status"}"#).int("result.interval") == 7)
        #expect(daemon.stderrText.contains("\(daemon.config):2: interval: expected a duration"))
        #expect(daemon.stderrText.contains("keeping the running configuration"))
    }

    @Test("a bad config at start: the daemon does not start, and says where")
    func badConfigAtStart() throws {
        let (_, daemon) = try daemon("interval = 30\nsocket_mode = rwx\n", start: false)
        let result = try daemon.runToExit([])
        #expect(result.status == 78)  // EX_CONFIG
        #expect(result.stderr.contains("\(daemon.config):2: socket_mode: expected octal permissions"))
        #expect(!FileManager.default.fileExists(atPath: daemon.socket))
    }
}
