import Foundation
import IfMeterTestSupport
import Testing

/// What is Podman's own (docs/NAMESPACES.md): containers sharing one namespace, and a container
/// removed between samples. The owner scenario every runtime shares is RuntimeScenarioTests'.
@Suite("Containers on real Podman", .enabled(if: Podman.available, Podman.skipReason), .serialized, .ownThread, .timeLimit(.minutes(10)))
final class ContainersTests {
    let host: NetworkNamespace
    let daemon: DaemonProcess
    var labels: [String] = []

    init() throws {
        host = try NetworkNamespace()
        daemon = try DaemonProcess(namespace: host, config: "interval = 3600\n")
    }

    deinit {
        _ = try? daemon.stop(SIGKILL)
        // Last made first: podman refuses to remove a container while others share its
        // namespace (`--network container:…`), and it would stay up with its conmon.
        for label in labels.reversed() { Podman.remove(label) }
        host.delete()
    }

    func run(_ label: String) throws {
        if !labels.contains(label) { labels.append(label) }
        try Podman.run(label, in: host)
    }

    func request(_ line: String) throws -> [String: Any] {
        let reply = try daemon.client().request(line)
        return try #require(reply["result"] as? [String: Any], "\(reply)")
    }

    func interfaces() throws -> [String: [String: Any]] {
        _ = try request(#"{"v":1,"cmd":"sample"}"#)
        let list = try #require(try request(#"{"v":1,"cmd":"interfaces"}"#)["interfaces"] as? [[String: Any]])
        return Dictionary(list.map { ($0["name"] as? String ?? "", $0) }) { first, _ in first }
    }

    /// The host side of the container's veth, as the kernel names it now.
    func hostSide(of label: String) throws -> String {
        let figures = try #require(try interfaces()["container:\(Podman.name(label))"], "container \(label) not listed")
        let owner = try #require(figures["owner"] as? [String: Any])
        return try #require(owner["alias"] as? String)
    }

    @Test("containers sharing one namespace (--network container:X, as a pod's): it is named by the first created of them, the same at five daemon starts")
    func sharedNamespaceOwner() throws {
        try run("first")
        for label in ["second", "third"] {
            if !labels.contains(label) { labels.append(label) }
            try Podman.run(label, sharingNamespaceOf: "first", in: host)
        }
        var named: [[String]] = []
        for _ in 0..<5 {
            try daemon.start()
            named.append(try daemon.figuresAfterSample().keys.filter { $0.hasPrefix("container:") }.sorted())
            try daemon.stop()
        }
        #expect(named == Array(repeating: ["container:\(Podman.name("first"))"], count: 5), "\(named)")
    }

    /// The shipped unit's privileges without systemd: an unprivileged user (nobody) holding
    /// only CAP_DAC_READ_SEARCH and CAP_NET_BROADCAST, as ifmeterd.service grants them.
    @Test("as nobody with only the unit's two capabilities: containers are named, and one removed between samples is exact")
    func underTheUnitsPrivileges() throws {
        try daemon.startAsTheUnit()
        let status = try String(contentsOfFile: "/proc/\(daemon.pid)/status", encoding: .utf8)
        #expect(status.contains("CapEff:\t0000000000000804"), "\(status.split(separator: "\n").filter { $0.hasPrefix("Cap") })")
        #expect(!daemon.stderrText.contains("NETLINK_LISTEN_ALL_NSID"), "\(daemon.stderrText)")
        try run("u")
        _ = try hostSide(of: "u")
        try Podman.send(80_000, from: "u", in: host, port: 5011)
        try Podman.freeze("u", in: host)
        let counted = try Podman.counters(of: "u")
        Podman.remove("u")
        let gone = try #require(try interfaces()["container:\(Podman.name("u"))"])
        #expect(gone["operstate"] as? String == "absent")
        #expect(gone.int("rx_bytes") == counted.rx && gone.int("tx_bytes") == counted.tx, "\(gone) vs \(counted)")
    }
}
