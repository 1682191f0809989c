import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Real LXC containers for tests (shared/notes/docker-lxc-vms-in-a-test.md): Debian's lxc,
/// busybox containers (`lxc-create -t busybox`) on a bridge the test makes in its own namespace,
/// started there, so their host-side veths are the test's. LXC's command socket is an abstract
/// socket of that namespace: every lxc tool runs in it (`ip netns exec`). Container names carry
/// the test process's pid (`ifmt-<pid>-<label>`); ``destroy()`` removes them.
public final class LXCHost {
    /// True when LXC can run here: root, lxc's tools, busybox-static.
    public static var available: Bool {
        getuid() == 0 && ["lxc-create", "lxc-start", "lxc-attach", "lxc-stop", "lxc-destroy", "nsenter"]
            .allSatisfy { (try? Command.resolve($0)) != nil }
            && FileManager.default.isExecutableFile(atPath: "/bin/busybox")
    }

    public static let skipReason: Comment = "needs root with lxc and busybox-static (scripts/install-deps --test installs them)"

    public let namespace: NetworkNamespace
    /// The bridge's first three octets; the bridge itself is `.1`.
    public let subnet: String
    public static let bridge = "ifmtbr"
    private var labels: [String] = []
    /// Each label's host number on the subnet, the same for every container of that label.
    private var addresses: [String: Int] = [:]

    /// A bridge in `namespace` for the containers.
    public init(in namespace: NetworkNamespace, subnet: String = "10.79.\(getpid() % 200)") throws {
        self.namespace = namespace
        self.subnet = subnet
        Self.reapStale()
        try namespace.ip("link", "add", Self.bridge, "type", "bridge")
        try namespace.ip("link", "set", Self.bridge, "up")
        try namespace.ip("addr", "add", "\(subnet).1/24", "dev", Self.bridge)
    }

    deinit { destroy() }

    /// The host number on the subnet of the containers of `label`: from 10 up, one a label.
    public func address(of label: String) -> Int {
        if let known = addresses[label] { return known }
        addresses[label] = 10 + addresses.count
        return addresses[label]!
    }

    /// The name a test's container gets.
    public static func name(_ label: String) -> String { "ifmt-\(getpid())-\(label)" }

    /// An lxc tool run in the test's namespace, with its signals reset (``SpawnWithSignals``).
    @discardableResult
    public func lxc(_ arguments: [String]) throws -> String {
        try SpawnWithSignals.check(["ip", "netns", "exec", namespace.name] + arguments, timeout: 120)
    }

    /// Creates and starts a busybox container at `subnet.host` on the bridge, IPv6 off inside;
    /// `unprivileged`, its ids mapped (root inside is uid 200000 outside, started by root).
    public func run(_ label: String, host: Int, unprivileged: Bool = false) throws {
        let name = Self.name(label)
        if !labels.contains(label) { labels.append(label) }
        var create = ["lxc-create", "-n", name, "-t", "busybox"]
        let mapped = "/var/lib/lxc/\(name).create.conf"
        defer { try? FileManager.default.removeItem(atPath: mapped) }
        if unprivileged {
            try Self.delegateIDs()
            // In place of /etc/lxc/default.conf: the template makes the tree owned by the mapped ids.
            try "lxc.net.0.type = veth\nlxc.net.0.flags = up\nlxc.idmap = u 0 200000 65536\nlxc.idmap = g 0 200000 65536\n"
                .write(toFile: mapped, atomically: true, encoding: .utf8)
            create += ["-f", mapped]
        }
        try SpawnWithSignals.check(create, timeout: 120)
        let path = "/var/lib/lxc/\(name)/config"
        var config = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("lxc.net.0.link") && !$0.hasPrefix("lxc.apparmor") }.joined(separator: "\n")
        // No AppArmor on these machines; the bridge is the test's.
        config += "\nlxc.apparmor.profile = unconfined\nlxc.net.0.link = \(Self.bridge)\n"
            + "lxc.net.0.ipv4.address = \(subnet).\(host)/24\n"
            + "lxc.sysctl.net.ipv6.conf.all.disable_ipv6 = 1\nlxc.sysctl.net.ipv6.conf.default.disable_ipv6 = 1\n"
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        // The template's init asks DHCP for an address (udhcpc), and without a server there
        // takes away the one the config gives.
        let rcS = "/var/lib/lxc/\(name)/rootfs/etc/init.d/rcS"
        let script = try String(contentsOfFile: rcS, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.contains("udhcpc") }.joined(separator: "\n")
        try script.write(toFile: rcS, atomically: false, encoding: .utf8)
        try start(label)
    }

    /// Root may map ids 200000–265535 (newuidmap reads /etc/subuid and /etc/subgid): the line
    /// is added to each file that lacks it, and left there.
    static func delegateIDs() throws {
        for file in ["/etc/subuid", "/etc/subgid"] {
            let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
            guard !text.split(separator: "\n").contains("root:200000:65536") else { continue }
            try (text + (text.isEmpty || text.hasSuffix("\n") ? "" : "\n") + "root:200000:65536\n")
                .write(toFile: file, atomically: true, encoding: .utf8)
        }
    }

    public func start(_ label: String) throws {
        try lxc(["lxc-start", "-n", Self.name(label)])
    }

    /// Stops a container at once (`lxc-stop -k`).
    public func stop(_ label: String) throws {
        try lxc(["lxc-stop", "-k", "-n", Self.name(label)])
    }

    /// Stops and destroys a container.
    public func remove(_ label: String) throws {
        try stop(label)
        try lxc(["lxc-destroy", "-n", Self.name(label)])
        labels.removeAll { $0 == label }
    }

    /// `count` pings of `size` bytes from the container to `subnet.host`, once one is answered.
    public func ping(from label: String, to host: Int, count: Int, size: Int) throws {
        try lxc(["lxc-attach", "-n", Self.name(label), "--", "/bin/busybox", "sh", "-c",
                 PingScript.text(to: "\(subnet).\(host)", count: count, size: size)])
    }

    /// The container's init pid.
    public func pid(of label: String) throws -> Int32 {
        let text = try lxc(["lxc-info", "-n", Self.name(label), "-pH"]).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let pid = Int32(text) else {
            throw CommandFailed(command: ["lxc-info", "-pH"], result: CommandResult(status: 1, stdout: text, stderr: "no pid"))
        }
        return pid
    }

    /// The container's `eth0` as its namespace shows it (``ContainerEnd``).
    public func end(of label: String) throws -> ContainerEnd {
        ContainerEnd(enter: ["-t", String(try pid(of: label)), "-n"], host: namespace)
    }

    public func counters(of label: String) throws -> (rx: UInt64, tx: UInt64) { try end(of: label).counters() }

    public func freeze(_ label: String) throws { try end(of: label).freeze() }

    /// Stops and destroys the test's containers.
    public func destroy() {
        for label in labels {
            _ = try? lxc(["lxc-stop", "-k", "-n", Self.name(label)])
            _ = try? lxc(["lxc-destroy", "-n", Self.name(label)])
        }
        labels = []
    }

    /// Destroys `ifmt-<pid>-*` containers whose test process is gone (their namespaces went
    /// with it, so they are stopped already).
    static func reapStale() {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/var/lib/lxc")) ?? [] {
            let parts = name.split(separator: "-")
            guard parts.count >= 3, parts[0] == "ifmt", let pid = Int32(parts[1]), pid != getpid(),
                  kill(pid, 0) != 0, errno == ESRCH else { continue }
            _ = try? SpawnWithSignals.check(["lxc-destroy", "-f", "-n", name], timeout: 60)
        }
    }
}
