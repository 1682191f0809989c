import Foundation
import IfMeterTestSupport
import Testing

/// An HTTP argument is the bytes the client sent: a `%00` is a NUL in the name, which names no
/// interface, and never the end of a shorter name whose figures would then be answered.
@Suite("HTTP arguments by their bytes", .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason),
       .ownThread, .timeLimit(.minutes(5)))
struct HTTPArgumentBytesTests {
    @Test("interface=lo%00zz is no interface over HTTP, and lo is still lo; /subject?name=lo%00 likewise")
    func nulInAName() throws {
        let namespace = try NetworkNamespace()
        let daemon = try DaemonProcess(namespace: namespace, config: "interval = 3600\nmetrics_listen = 127.0.0.1:\(metricsPort)\n")
        try daemon.startAsTheUnit()
        func get(_ path: String) throws -> (status: String, body: String) {
            let result = try namespace.run(["curl", "-sS", "--max-time", "10", "-w", "\n%{http_code}", "http://127.0.0.1:\(metricsPort)\(path)"])
            let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            return (String(lines.last ?? ""), lines.dropLast().joined(separator: "\n"))
        }
        let lo = try get("/api/v1/usage?interface=lo&period=total")
        #expect(lo.status == "200" && lo.body.contains("\"rows\""), "\(lo)")
        for path in ["/api/v1/usage?interface=lo%00zz&period=total", "/api/v1/usage?interface=lo%00&period=total",
                     "/subject?name=lo%00"] {
            let answer = try get(path)
            #expect(answer.status == "404", "\(path): \(answer.status) \(answer.body.prefix(200))")
        }
    }
}
