import Foundation
import IfMeterTestSupport
import Testing

/// Traffic per container on real LXC (docs/NAMESPACES.md): Debian's lxc with busybox containers
/// on a bridge in a test namespace, the real ifmeterd metering that namespace as the shipped unit
/// runs it (nobody with its two capabilities), and each container's figures compared with its
/// own `eth0` counters over its lifetimes.
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

    @Test("as the unit runs it: a removed, c started, b restarted; each container's figures are its own eth0's over its lifetimes, no veth name keeps a byte")
    func lifetimes() throws {
        try daemon.startAsTheUnit()
        try lxc.run("a", host: 10)
        try lxc.run("b", host: 11)
        try lxc.ping(from: "a", to: 11, count: 20, size: 1000)
        // An LXC container's namespace goes with it, its end inside: the kernel drops the nsid
        // before it deletes the links, so what it sent after the last sample is not counted
        // (docs/NAMESPACES.md). Frozen and sampled first, nothing is after it.
        try lxc.freeze("a")
        let a = try lxc.counters(of: "a")
        #expect(a.tx > 20 * 1000)
        _ = try daemon.figuresAfterSample()
        try lxc.remove("a")

        try lxc.run("c", host: 12)
        try lxc.ping(from: "c", to: 11, count: 10, size: 1000)
        try lxc.freeze("b")
        let b1 = try lxc.counters(of: "b")
        _ = try daemon.figuresAfterSample()
        try lxc.stop("b")
        try lxc.start("b")
        try lxc.ping(from: "b", to: 12, count: 10, size: 500)
        try lxc.freeze("b")
        try lxc.freeze("c")
        let b2 = try lxc.counters(of: "b")
        let c = try lxc.counters(of: "c")

        let figures = try daemon.figuresAfterSample()
        func totals(_ label: String) throws -> (rx: UInt64?, tx: UInt64?) {
            let entry = try #require(figures["container:\(LXCHost.name(label))"], "\(label) not listed: \(figures.keys.sorted())")
            #expect((entry["owner"] as? [String: Any])?["kind"] as? String == (label == "a" ? nil : "lxc"), "\(entry)")
            return (entry.int("rx_bytes"), entry.int("tx_bytes"))
        }
        let countedA = try totals("a"), countedB = try totals("b"), countedC = try totals("c")
        #expect(countedA.rx == a.rx && countedA.tx == a.tx, "a: \(countedA) vs \(a)")
        #expect(countedB.rx == b1.rx + b2.rx && countedB.tx == b1.tx + b2.tx, "b: \(countedB) vs \(b1) + \(b2)")
        #expect(countedC.rx == c.rx && countedC.tx == c.tx, "c: \(countedC) vs \(c)")
        let veths = figures.filter { $0.key.hasPrefix("veth") }
        #expect(veths.isEmpty, "veth names of their own: \(veths.mapValues { ($0.int("rx_bytes"), $0.int("tx_bytes")) })")
        let listed = try Command.check([CLIBinary.path, "--socket", daemon.socket, "containers"])
        for label in ["b", "c"] {
            #expect(listed.split(separator: "\n").contains { $0.hasPrefix("container:\(LXCHost.name(label))") && $0.contains(" lxc ") }, "\(listed)")
        }
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
