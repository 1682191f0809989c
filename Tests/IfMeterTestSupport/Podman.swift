import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Real Podman containers for tests (shared/notes/podman-in-a-test.md): an image made from
/// Debian's static busybox, containers whose host side is a test's own namespace (Podman's
/// bridge, its veths and 10.88.0.0/16 all live there), traffic from inside with busybox `nc`.
/// Container names carry the test process's pid (`ifmt-<pid>-<label>`), so those of a crashed
/// run are removed by the next (``reapStale()``).
public enum Podman {
    public static let image = "localhost/ifmt-bb:1"
    /// The gateway Podman's default network gives the host side (`podman0`).
    public static let gateway = "10.88.0.1"

    /// True when containers can be run here: root, podman, runc and busybox-static installed.
    public static var available: Bool {
        getuid() == 0 && ["podman", "runc", "nsenter"].allSatisfy { (try? Command.resolve($0)) != nil }
            && FileManager.default.isExecutableFile(atPath: "/bin/busybox")
    }

    public static let skipReason: Comment =
        "needs root with podman, runc and busybox-static (scripts/install-deps --test installs them)"

    private static let prepared: Result<Void, Error> = Result { try prepare() }

    /// The name a test's container gets.
    public static func name(_ label: String) -> String { "ifmt-\(getpid())-\(label)" }

    /// Runs `podman ARGS…` with the runtime settings these machines need, its host side in
    /// `namespace`; returns what it printed.
    @discardableResult
    public static func podman(_ arguments: [String], in namespace: NetworkNamespace? = nil) throws -> String {
        // nsenter, not `ip netns exec`: that remounts /sys for the namespace, and runc then finds
        // no cgroup mount.
        let command = (namespace.map { ["nsenter", "--net=/run/netns/\($0.name)"] } ?? [])
            + ["podman", "--runtime", "runc", "--cgroup-manager=cgroupfs"] + arguments
        // conmon, which outlives `podman run -d`, inherits its output: through a pipe the reader
        // would wait for an end that never comes, so the output goes to a file. And Foundation's
        // Process learns that a child exited when the socket the child inherited closes, which
        // conmon would hold open: it is spawned and waited for directly.
        let output = try TemporaryDirectory()
        let file = output.path + "/podman"
        let status = try spawnAndWait(try Command.resolve(command[0]), command, output: file, timeout: timeout)
        let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        guard status == 0 else {
            throw CommandFailed(command: command, result: CommandResult(status: status, stdout: text, stderr: ""))
        }
        return text
    }

    /// The longest one podman command may take.
    public static let timeout: Double = 120

    /// Runs `path` with stdin from /dev/null and stdout and stderr to `output`; its exit status,
    /// or -1 once it has been killed at the deadline.
    private static func spawnAndWait(_ path: String, _ arguments: [String], output: String, timeout: Double) throws -> Int32 {
        let pid = try SpawnWithSignals.start([path] + arguments.dropFirst(), output: output)
        return SpawnWithSignals.wait(pid, within: timeout) ?? -1
    }

    /// Starts a container on Podman's default bridge with its host side in `namespace`; IPv6
    /// is off inside, so nothing but the test's traffic moves its counters. Returns its id.
    @discardableResult
    public static func run(_ label: String, in namespace: NetworkNamespace) throws -> String {
        try prepared.get()
        let output = try podman(["run", "-d", "--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096",
                                 "--sysctl", "net.ipv6.conf.all.disable_ipv6=1", "--sysctl", "net.ipv6.conf.default.disable_ipv6=1",
                                 "--name", name(label), "--network", "bridge", image, "/bin/sleep", "3600"], in: namespace)
        return output.split(separator: "\n").last.map(String.init) ?? ""
    }

    /// Starts a container in the network namespace of the test's container `sharing`
    /// (`--network container:…`, as a pod's containers share its infra container's).
    public static func run(_ label: String, sharingNamespaceOf sharing: String, in namespace: NetworkNamespace) throws {
        try prepared.get()
        try podman(["run", "-d", "--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096",
                    "--name", name(label), "--network", "container:\(name(sharing))", image, "/bin/sleep", "3600"], in: namespace)
    }

    /// Removes a container at once (a `sleep` as PID 1 ignores SIGTERM: no grace period).
    public static func remove(_ label: String) {
        _ = try? Command.run(["podman", "rm", "-f", "-t", "0", name(label)])
    }

    /// Sends `bytes` bytes from inside the container over TCP to a listener on the host side,
    /// and returns once the listener has read them all and the connection is closed.
    public static func send(_ bytes: Int, from label: String, in namespace: NetworkNamespace, port: UInt16) throws {
        let listener = Process()
        listener.executableURL = URL(fileURLWithPath: try Command.resolve("nsenter"))
        listener.arguments = ["--net=/run/netns/\(namespace.name)", "/bin/busybox", "nc", "-l", "-p", String(port),
                              "-e", "/bin/sh", "-c", "cat > /dev/null"]
        try listener.run()
        defer { listener.end(SIGKILL) }
        // The listener is ready once its socket is: the container's nc retries until it is.
        try podman(["exec", name(label), "sh", "-c",
                    "i=0; until dd if=/dev/zero bs=1000 count=\(bytes / 1000) 2>/dev/null | nc \(gateway) \(port); do i=$((i+1)); [ $i -gt 200 ] && exit 1; sleep 0.05; done"])
        try listener.awaitExit("the host's nc listener, after the container's nc sent \(bytes) bytes")
        try awaitClosed(port: port, container: label, host: namespace)
    }

    /// Waits until no TCP socket on `port`, in the container or on its host side, is in a state
    /// that still sends (anything but TIME_WAIT and CLOSE): the connection's last segment, a
    /// late FIN or RST, is then counted, and the counters read after it are final.
    private static func awaitClosed(port: UInt16, container label: String, host: NetworkNamespace) throws {
        let digits = String(port, radix: 16, uppercase: true)
        let hexPort = ":" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        func open(_ table: String) -> Bool {
            table.split(separator: "\n").dropFirst().contains { line in
                let fields = line.split(separator: " ")
                guard fields.count > 3 else { return false }
                let touches = fields[1].hasSuffix(hexPort) || fields[2].hasSuffix(hexPort)
                return touches && fields[3] != "06" && fields[3] != "07" && fields[3] != "0A"
            }
        }
        let deadline = Date().addingTimeInterval(60)
        while try open(podman(["exec", name(label), "cat", "/proc/net/tcp"])) || open(try host.exec(["cat", "/proc/net/tcp"])) {
            guard Date() < deadline else {
                throw CommandFailed(command: ["tcp", String(port)], result: CommandResult(status: 1, stdout: "", stderr: "still open after 60 s"))
            }
            usleep(20_000)
        }
    }

    /// Stops every frame between the container and the bridge, both ways (``EgressDrop`` on each
    /// end), so that its counters read afterwards are final. Without it the kernel still moves
    /// them after a test's traffic: the bridge repeats its IGMP report for 224.0.0.106 (54 bytes
    /// into the container), and a neighbour entry gone stale sends an ARP probe seconds later
    /// (42 bytes each way).
    public static func freeze(_ label: String, in namespace: NetworkNamespace) throws {
        let sandbox = try podman(["inspect", "--format", "{{.NetworkSettings.SandboxKey}}", name(label)])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let peer = try podman(["exec", name(label), "cat", "/sys/class/net/eth0/iflink"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        // `ip -o link` prints "INDEX: NAME@PEER: …"; the host side is the line of eth0's peer index.
        var hostSide: String?
        for line in try namespace.exec(["ip", "-o", "link", "show"]).split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2).map { $0.trimmingCharacters(in: .whitespaces) }
            if fields.count == 3 && fields[0] == peer { hostSide = String(fields[1].prefix { $0 != "@" }) }
        }
        guard let hostSide, !sandbox.isEmpty else {
            throw CommandFailed(command: ["freeze", name(label)],
                                result: CommandResult(status: 1, stdout: sandbox, stderr: "no host side with index \(peer)"))
        }
        try namespace.exec(EgressDrop.command(hostSide))
        try Command.check(["nsenter", "--net=\(sandbox)"] + EgressDrop.command("eth0"))
    }

    /// The container's own counters of its `eth0`: its traffic from its point of view.
    public static func counters(of label: String) throws -> (rx: UInt64, tx: UInt64) {
        let text = try podman(["exec", name(label), "cat", "/sys/class/net/eth0/statistics/rx_bytes",
                               "/sys/class/net/eth0/statistics/tx_bytes"])
        let numbers = text.split(separator: "\n").compactMap { UInt64($0.trimmingCharacters(in: .whitespaces)) }
        guard numbers.count == 2 else {
            throw CommandFailed(command: ["podman", "exec", name(label), "cat"], result: CommandResult(status: 1, stdout: text, stderr: "not two counters"))
        }
        return (numbers[0], numbers[1])
    }

    /// The image, imported from busybox once; and leftovers of crashed runs removed.
    private static func prepare() throws {
        reapStale()
        if (try? Command.run(["podman", "image", "exists", image]))?.status == 0 { return }
        let root = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: root.path + "/rootfs/bin", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: "/bin/busybox", toPath: root.path + "/rootfs/bin/busybox")
        for command in ["sh", "sleep", "nc", "dd", "cat", "ip", "wget"] {
            try FileManager.default.createSymbolicLink(atPath: root.path + "/rootfs/bin/" + command, withDestinationPath: "busybox")
        }
        try Command.check(["tar", "-C", root.path + "/rootfs", "-cf", root.path + "/image.tar", "."])
        try Command.check(["podman", "import", root.path + "/image.tar", image])
    }

    /// Removes `ifmt-<pid>-*` containers whose test process is gone.
    public static func reapStale() {
        guard let names = try? Command.check(["podman", "ps", "-a", "--format", "{{.Names}}"]) else { return }
        for name in names.split(separator: "\n") {
            let parts = name.split(separator: "-")
            guard parts.count >= 3, parts[0] == "ifmt", let pid = Int32(parts[1]) else { continue }
            if pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH {
                _ = try? Command.run(["podman", "rm", "-f", "-t", "0", String(name)])
            }
        }
    }
}
