import Foundation
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

    /// A daemon that reads one request and answers the first `count` bytes of `line`, then closes.
    static func brokenOff(_ line: String, after count: Int, in directory: TemporaryDirectory) throws -> (String, Thread) {
        let path = directory.path + "/s.sock"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(listener, 1) == 0 else { throw CocoaError(.fileWriteUnknown) }
        let bytes = Array(line.utf8.prefix(count))
        let thread = Thread {
            let peer = accept(listener, nil, nil)
            var request = [UInt8](repeating: 0, count: 4096)
            _ = read(peer, &request, request.count)
            _ = bytes.withUnsafeBytes { write(peer, $0.baseAddress, $0.count) }
            close(peer)
            close(listener)
        }
        thread.start()
        return (path, thread)
    }

    @Test("an answer broken off by the daemon is a lost connection (exit 74), wherever it breaks", arguments: [0, 1, 20, 60])
    func brokenOffAnswer(count: Int) throws {
        let directory = try TemporaryDirectory()
        let line = #"{"id":1,"ok":true,"result":{"interfaces":[{"name":"eth0","rx_bytes":12345678}]},"v":1}"# + "\n"
        let (path, _) = try Self.brokenOff(line, after: count, in: directory)
        let client = try DaemonClient(path: path)
        #expect {
            _ = try client.call(InterfacesRequest(), reading: InterfacesResult.self)
        } throws: { error in
            let error = error as? CLIError
            return error?.status == .connectionLost && error?.message.contains("closed the connection") == true
        }
    }
}
