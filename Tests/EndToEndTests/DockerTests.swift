import Foundation
import IfMeterTestSupport
import Testing

/// What is Docker's own (docs/NAMESPACES.md): its state where an admin moved it. The owner
/// scenario every runtime shares is RuntimeScenarioTests'.
@Suite("Containers on real Docker", .enabled(if: DockerDaemon.available, DockerDaemon.skipReason), .serialized, .ownThread, .timeLimit(.minutes(10)))
struct DockerTests {
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
