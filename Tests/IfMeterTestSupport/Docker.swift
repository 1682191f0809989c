import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A real Docker daemon for tests (shared/notes/docker-lxc-vms-in-a-test.md): Debian's `dockerd`
/// started in a test's own namespace (its bridges, veths and iptables rules live there) on a
/// socket of its own, with Docker's default state directories — the ones ifmeterd reads —, an
/// image made from Debian's static busybox, and a user-defined network. Container names carry
/// the test process's pid (`ifmt-<pid>-<label>`). ``stop()`` removes the containers and the
/// network and ends the daemon.
public final class DockerDaemon {
    public static let image = "ifmt-bb:1"

    /// True when Docker can run here: root, Debian's docker.io, nsenter and busybox-static.
    public static var available: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/dockerd")
            && FileManager.default.isExecutableFile(atPath: client)
            && FileManager.default.isExecutableFile(atPath: "/bin/busybox")
            && (try? Command.resolve("nsenter")) != nil
    }

    public static let skipReason: Comment =
        "needs root with Debian's docker.io and busybox-static (scripts/install-deps --test installs them)"

    /// Debian's client: another `docker` may come first on PATH.
    static let client = "/usr/bin/docker"

    public let namespace: NetworkNamespace
    public let socket: String
    /// The user-defined network's name and its first three octets.
    public let network: String
    public let subnet: String
    private let directory: TemporaryDirectory
    /// dockerd's pid (nsenter execs it); 0 once stopped.
    private var pid: pid_t = 0
    private var labels: [String] = []
    /// Each label's host number on the subnet, the same for every container of that label.
    private var addresses: [String: Int] = [:]
    /// The bind mount ``shareNamespaceMounts(_:)`` made, undone at ``stop()``.
    private var sharedMount: String?

    /// Starts `dockerd` with its host side in `namespace` and waits until it answers; its state
    /// where Docker keeps it by default, or under `roots` (`data-root` and `exec-root`).
    public init(in namespace: NetworkNamespace, subnet: String = "10.78.\(getpid() % 200)",
                roots: (data: String, exec: String)? = nil) throws {
        self.namespace = namespace
        self.subnet = subnet
        directory = try TemporaryDirectory()
        socket = directory.path + "/docker.sock"
        network = "ifmt-\(getpid())"
        sharedMount = try Self.shareNamespaceMounts((roots?.exec ?? "/run/docker") + "/netns")
        let log = directory.path + "/dockerd.log"
        pid = try SpawnWithSignals.start([try Command.resolve("nsenter"), "--net=/run/netns/\(namespace.name)", "/usr/sbin/dockerd",
                              "-H", "unix://\(socket)", "--pidfile", directory.path + "/docker.pid", "--storage-driver", "vfs"]
                                 + (roots.map { ["--data-root", $0.data, "--exec-root", $0.exec] } ?? []),
                             output: log)
        let deadline = Date().addingTimeInterval(120)
        while (try? Command.run([Self.client, "-H", "unix://\(socket)", "info"], timeout: 30))?.status != 0 {
            guard kill(pid, 0) == 0, Date() < deadline else {
                let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                stop()
                throw CommandFailed(command: ["dockerd"], result: CommandResult(status: -1, stdout: "", stderr: "not answering: \(text.suffix(2000))"))
            }
            usleep(100_000)
        }
        if (try? docker(["image", "inspect", Self.image])) == nil { try importImage() }
        try docker(["network", "create", "--subnet", "\(subnet).0/24", network])
    }

    deinit { stop() }

    /// The namespaces Docker binds under EXEC-ROOT/netns are mounts of the root mount
    /// namespace; a daemon started with `ip netns exec` has a mount namespace of its own and
    /// would see empty files there, unless the directory is a shared mount (as it is on a
    /// systemd host, where every mount is shared and a unit's namespace receives them). Returns
    /// the mount it made, if it made one.
    private static func shareNamespaceMounts(_ path: String) throws -> String? {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let mounts = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
        let shared = mounts.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.count > 6 && fields[4] == path[...] && fields[6].hasPrefix("shared:")
        }
        guard !shared else { return nil }
        try Command.check(["mount", "--bind", path, path])
        try Command.check(["mount", "--make-shared", path])
        return path
    }

    /// Runs `docker ARGS…` against this daemon; what it printed.
    @discardableResult
    public func docker(_ arguments: [String]) throws -> String {
        try Command.check([Self.client, "-H", "unix://\(socket)"] + arguments, timeout: 120)
    }

    /// The host number on the subnet of the containers of `label`: from 10 up, one a label.
    public func address(of label: String) -> Int {
        if let known = addresses[label] { return known }
        addresses[label] = 10 + addresses.count
        return addresses[label]!
    }

    /// The name a test's container gets.
    public static func name(_ label: String) -> String { "ifmt-\(getpid())-\(label)" }

    /// Starts a container on the test's network at `subnet.host`; IPv6 is off inside, so only
    /// the test's traffic moves its counters.
    public func run(_ label: String, host: Int) throws {
        if !labels.contains(label) { labels.append(label) }
        try docker(["run", "-d", "--name", Self.name(label), "--network", network, "--ip", "\(subnet).\(host)",
                    "--sysctl", "net.ipv6.conf.all.disable_ipv6=1", "--sysctl", "net.ipv6.conf.default.disable_ipv6=1",
                    Self.image, "sleep", "3600"])
    }

    /// `count` pings of `size` bytes from the container to `subnet.host`, once one is answered
    /// (a container just started may not reach the other yet; a loaded machine took seconds).
    public func ping(from label: String, to host: Int, count: Int, size: Int) throws {
        try docker(["exec", Self.name(label), "sh", "-c", PingScript.text(to: "\(subnet).\(host)", count: count, size: size)])
    }

    /// The container's network namespace file (`NetworkSettings.SandboxKey`).
    public func sandbox(of label: String) throws -> String {
        try docker(["inspect", "-f", "{{.NetworkSettings.SandboxKey}}", Self.name(label)]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The container's `eth0` as its namespace shows it (``ContainerEnd``).
    public func end(of label: String) throws -> ContainerEnd {
        ContainerEnd(enter: ["--net=\(try sandbox(of: label))"], host: namespace)
    }

    public func counters(of label: String) throws -> (rx: UInt64, tx: UInt64) { try end(of: label).counters() }

    public func freeze(_ label: String) throws { try end(of: label).freeze() }

    /// Removes a container at once.
    public func remove(_ label: String) throws {
        try docker(["rm", "-f", Self.name(label)])
    }

    /// Removes the test's containers and network, and ends the daemon (SIGTERM, then SIGKILL
    /// past its deadline).
    public func stop() {
        guard pid > 0 else { return }
        for label in labels { _ = try? Command.run([Self.client, "-H", "unix://\(socket)", "rm", "-f", Self.name(label)], timeout: 60) }
        _ = try? Command.run([Self.client, "-H", "unix://\(socket)", "network", "rm", network], timeout: 60)
        kill(pid, SIGTERM)
        _ = SpawnWithSignals.wait(pid, within: 60)
        pid = 0
        // Lazily: a namespace Docker bound below it may still be going.
        if let sharedMount { _ = try? Command.run(["umount", "-l", sharedMount]) }
        sharedMount = nil
    }

    private func importImage() throws {
        let root = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: root.path + "/rootfs/bin", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: "/bin/busybox", toPath: root.path + "/rootfs/bin/busybox")
        for command in ["sh", "sleep", "ping", "nc", "dd", "cat", "ip"] {
            try FileManager.default.createSymbolicLink(atPath: root.path + "/rootfs/bin/" + command, withDestinationPath: "busybox")
        }
        try Command.check(["tar", "-C", root.path + "/rootfs", "-cf", root.path + "/image.tar", "."])
        try docker(["import", root.path + "/image.tar", Self.image])
    }
}
