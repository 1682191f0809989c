import Foundation
import IfMeterTestSupport
import Testing

/// What is LXC's own (docs/NAMESPACES.md): an unprivileged container, its ids mapped. The owner
/// scenario every runtime shares is RuntimeScenarioTests'.
@Suite("Containers on real LXC", .enabled(if: LXCHost.available, LXCHost.skipReason), .serialized, .ownThread, .timeLimit(.minutes(10)))
final class LXCTests {
    let host: NetworkNamespace
    let lxc: LXCHost
    let daemon: DaemonProcess

    init() throws {
        host = try NetworkNamespace()
        lxc = try LXCHost(in: host)
        daemon = try DaemonProcess(namespace: host, config: "interval = 3600\n")
    }

    deinit {
        _ = try? daemon.stop(SIGKILL)
        lxc.destroy()
        host.delete()
    }

    @Test("as the unit runs it: an unprivileged container (its ids mapped, started by root) is named and exact")
    func unprivileged() throws {
        try daemon.startAsTheUnit()
        try lxc.run("u", host: 20, unprivileged: true)
        try lxc.ping(from: "u", to: 1, count: 10, size: 800)
        try lxc.freeze("u")
        let truth = try lxc.counters(of: "u")
        #expect(truth.tx > 10 * 800)
        let figures = try daemon.figuresAfterSample()
        let entry = try #require(figures["container:\(LXCHost.name("u"))"], "not listed: \(figures.keys.sorted())")
        #expect((entry["owner"] as? [String: Any])?["kind"] as? String == "lxc", "\(entry)")
        #expect(entry.int("rx_bytes") == truth.rx && entry.int("tx_bytes") == truth.tx, "\(entry) vs \(truth)")
    }
}
