import Foundation
import IfMeterTestSupport
import Testing

/// Traffic per container on real Docker (docs/NAMESPACES.md): Debian's dockerd with its host
/// side in a test namespace, the real ifmeterd metering that namespace as the shipped unit runs
/// it (nobody with its two capabilities), busybox pings between containers, and each
/// container's figures compared with its own `eth0` counters over its lifetimes.
@Suite("Containers on real Docker", .enabled(if: DockerDaemon.available, DockerDaemon.skipReason), .serialized, .ownThread, .timeLimit(.minutes(10)))
final class DockerTests {
    let host: NetworkNamespace
    let docker: DockerDaemon
    let daemon: DaemonProcess

    init() throws {
        host = try NetworkNamespace()
        docker = try DockerDaemon(in: host)
        daemon = try DaemonProcess(namespace: host, config: "interval = 3600\n")
    }

    deinit {
        _ = try? daemon.stop(SIGKILL)
        docker.stop()
        host.delete()
    }

    @Test("as the unit runs it: a removed, c started, b restarted; each container's figures are its own eth0's over its lifetimes, no veth name keeps a byte")
    func lifetimes() throws {
        try daemon.startAsTheUnit()
        try docker.run("a", host: 10)
        try docker.run("b", host: 11)
        try docker.ping(from: "a", to: 11, count: 20, size: 1000)
        try docker.freeze("a")
        let a = try docker.counters(of: "a")
        #expect(a.tx > 20 * 1000)
        try docker.remove("a")

        try docker.run("c", host: 12)
        try docker.ping(from: "c", to: 11, count: 10, size: 1000)
        try docker.freeze("b")
        let b1 = try docker.counters(of: "b")
        try docker.docker(["restart", "-t", "0", DockerDaemon.name("b")])
        try docker.ping(from: "b", to: 12, count: 10, size: 500)
        try docker.freeze("b")
        try docker.freeze("c")
        let b2 = try docker.counters(of: "b")
        let c = try docker.counters(of: "c")

        let figures = try daemon.figuresAfterSample()
        func totals(_ label: String) throws -> (rx: UInt64?, tx: UInt64?) {
            let entry = try #require(figures["container:\(DockerDaemon.name(label))"], "\(label) not listed: \(figures.keys.sorted())")
            #expect((entry["owner"] as? [String: Any])?["kind"] as? String == (label == "a" ? nil : "docker"), "\(entry)")
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
            #expect(listed.split(separator: "\n").contains { $0.hasPrefix("container:\(DockerDaemon.name(label))") && $0.contains(" docker ") }, "\(listed)")
        }
    }

    @Test("Docker's state elsewhere (data-root, exec-root): named through docker_root and docker_exec_root, exact")
    func rootsElsewhere() throws {
        let roots = try TemporaryDirectory()
        let elsewhere = try NetworkNamespace()
        let docker = try DockerDaemon(in: elsewhere, subnet: "10.78.\(200 + getpid() % 50)",
                                      roots: (roots.path + "/data", roots.path + "/exec"))
        defer { docker.stop() }
        let daemon = try DaemonProcess(namespace: elsewhere, config: "interval = 3600\ndocker_root = \(roots.path)/data\n"
                                       + "docker_exec_root = \(roots.path)/exec\n")
        defer { _ = try? daemon.stop(SIGKILL) }
        try daemon.startAsTheUnit()
        try docker.run("x", host: 10)
        try docker.run("y", host: 11)
        try docker.ping(from: "x", to: 11, count: 10, size: 800)
        try docker.freeze("x")
        let x = try docker.counters(of: "x")
        let figures = try daemon.figuresAfterSample()
        let entry = try #require(figures["container:\(DockerDaemon.name("x"))"], "\(figures.keys.sorted())")
        #expect((entry["owner"] as? [String: Any])?["kind"] as? String == "docker")
        #expect(entry.int("rx_bytes") == x.rx && entry.int("tx_bytes") == x.tx, "\(entry) vs \(x)")
    }
}
