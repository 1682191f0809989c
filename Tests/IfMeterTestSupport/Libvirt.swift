import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Real libvirt and QEMU virtual machines for tests (shared/notes/docker-lxc-vms-in-a-test.md):
/// Debian's libvirtd, run by the test in its own namespace (so the taps it makes are the test's)
/// on a socket of the test's own, and diskless domains under TCG whose firmware's network boot
/// sends DHCP requests: real traffic from a guest, with no image. Each NIC is on a bridge of its
/// own in the namespace, so that a guest's broadcasts reach no other guest's tap. Domain names
/// carry the test process's pid (`ifmt-<pid>-<label>`).
///
/// libvirtd keeps its state in fixed places (`/run/libvirt`, `/var/lib/libvirt`), and a second
/// libvirtd there exits (the host's holds `/run/libvirt/qemu/driver.pid`). So the test's runs in
/// a mount namespace of the test's own with an empty tmpfs on each of those places, beside a
/// virtlogd of its own; the ifmeterd under test enters it too (``enter``), to read the domains'
/// status files where it reads them on a host. A libvirtd of the host's is never touched.
public final class LibvirtHost {
    /// True when libvirt and QEMU can run here: root, libvirtd, virtlogd, virsh, QEMU and its
    /// network boot ROM.
    public static var available: Bool {
        getuid() == 0 && ["libvirtd", "virtlogd", "virsh", "qemu-system-x86_64"].allSatisfy { (try? Command.resolve($0)) != nil }
            && FileManager.default.fileExists(atPath: "/usr/lib/ipxe/qemu/efi-virtio.rom")
    }

    public static let skipReason: Comment =
        "needs root with libvirt-daemon-system and qemu-system-x86 (scripts/install-deps --test installs them)"

    public let namespace: NetworkNamespace
    private let directory: TemporaryDirectory
    /// The process that holds the mount namespace open (a `sleep`); 0 once ended.
    private var mounts: pid_t = 0
    private var libvirtd: pid_t?
    private var virtlogd: pid_t?
    private var labels: [String] = []
    private var bridges: [String] = []
    /// The labels ``mac(of:)`` gave a MAC, in order.
    private var macLabels: [String] = []

    /// One test's libvirt at a time in this process: each boots guests under TCG, a busy core
    /// apiece, on a machine of two.
    private static let oneAtATime = DispatchSemaphore(value: 1)
    private var holdsTurn = false

    public init(in namespace: NetworkNamespace) throws {
        self.namespace = namespace
        directory = try TemporaryDirectory()
        Self.oneAtATime.wait()
        holdsTurn = true
        Self.reapStale()
        // A guest's taps and the bridges send no IPv6 of their own: a suspended guest's tap
        // then carries only what the test sends it.
        try namespace.exec(["sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"])
        try """
        unix_sock_dir = "\(directory.path)"
        auth_unix_rw = "none"
        auth_unix_ro = "none"
        """.write(toFile: directory.path + "/libvirtd.conf", atomically: true, encoding: .utf8)
        do {
            try makeMountNamespace()
            // Its pid file of its own: the default, /run/virtlogd.pid, is outside the private places,
            // and a host's virtlogd holding it would make this one exit at once, and every domain
            // fail to start for want of its socket.
            virtlogd = try SpawnWithSignals.start(enter + [try Command.resolve("virtlogd"), "-p", directory.path + "/virtlogd.pid"],
                                                  output: directory.path + "/virtlogd.log")
            try startDaemon()
        } catch {
            destroy()
            throw error
        }
    }

    /// libvirt's places, each an empty tmpfs in the test's mount namespace.
    public static let privatePlaces = ["/run/libvirt", "/var/lib/libvirt", "/var/cache/libvirt", "/var/log/libvirt"]

    /// A command prefix that runs a program in the test's mount namespace, where its libvirtd
    /// keeps its state.
    public private(set) var enter: [String] = []

    /// Where the test's libvirtd keeps a running domain's status (its live XML), seen from the host.
    public func statusFile(of label: String) -> String { "/proc/\(mounts)/root/run/libvirt/qemu/\(Self.name(label)).xml" }

    /// Starts the process that holds the mount namespace, and returns once it says its mounts
    /// are made. Its name (`ifmt-<pid>-libvirt-mounts`) names the test process, for
    /// ``reapStale()`` and scripts/test-hygiene.
    private func makeMountNamespace() throws {
        let ready = directory.path + "/mounts"
        let script = Self.privatePlaces.map { "mkdir -p \($0) && mount -t tmpfs -o mode=0755 ifmeter-test \($0)" }
            .joined(separator: " && ") + " && echo ready && exec -a ifmt-\(getpid())-libvirt-mounts sleep 2147483647"
        mounts = try SpawnWithSignals.start([try Command.resolve("unshare"), "--mount", "--propagation", "private", "--",
                                             try Command.resolve("bash"), "-c", script], output: ready)
        let deadline = Date().addingTimeInterval(60)
        while (try? String(contentsOfFile: ready, encoding: .utf8)) != "ready\n" {
            let text = (try? String(contentsOfFile: ready, encoding: .utf8)) ?? ""
            var status: Int32 = 0
            guard waitpid(mounts, &status, WNOHANG) == 0, Date() < deadline else {
                if waitpid(mounts, &status, WNOHANG) == 0 { kill(mounts, SIGKILL); _ = waitpid(mounts, &status, 0) }
                mounts = 0
                throw CommandFailed(command: ["unshare", "--mount"], result: CommandResult(status: 1, stdout: text, stderr: "libvirt's mount namespace was not made"))
            }
            usleep(20_000)
        }
        enter = [try Command.resolve("nsenter"), "--mount=/proc/\(mounts)/ns/mnt", "--"]
    }

    deinit { destroy() }

    public static func name(_ label: String) -> String { "ifmt-\(getpid())-\(label)" }

    /// `virsh` on the test's libvirtd.
    @discardableResult
    public func virsh(_ arguments: [String]) throws -> String {
        let command = ["virsh", "-c", "qemu:///system?socket=\(directory.path)/libvirt-sock"] + arguments
        do {
            return try SpawnWithSignals.check(command, timeout: 120)
        } catch let failed as CommandFailed {
            // virsh may say nothing of why: libvirtd's log does.
            let log = (try? String(contentsOfFile: directory.path + "/libvirtd.log", encoding: .utf8)) ?? ""
            throw CommandFailed(command: command, result: CommandResult(status: failed.result.status, stdout: failed.result.stdout,
                                                                        stderr: failed.result.stdout + "\nlibvirtd's log ends: " + String(log.suffix(1500))))
        }
    }

    /// Starts libvirtd in the test's namespace and waits until it answers on its socket.
    public func startDaemon() throws {
        let pid = try SpawnWithSignals.start(enter + [try Command.resolve("ip"), "netns", "exec", namespace.name, try Command.resolve("libvirtd"),
                                               "-f", directory.path + "/libvirtd.conf", "-p", directory.path + "/libvirtd.pid"],
                                   output: directory.path + "/libvirtd.log")
        libvirtd = pid
        // Its answer, not its socket's appearing: it listens before its drivers are up.
        let deadline = Date().addingTimeInterval(120)
        while true {
            do {
                _ = try virsh(["list"])
                return
            } catch {
                var status: Int32 = 0
                let exited = waitpid(pid, &status, WNOHANG) == pid
                guard !exited, Date() < deadline else {
                    if exited { libvirtd = nil }
                    let log = (try? String(contentsOfFile: directory.path + "/libvirtd.log", encoding: .utf8)) ?? ""
                    throw CommandFailed(command: ["libvirtd"], result: CommandResult(
                        status: 1, stdout: log, stderr: (exited ? "libvirtd exited" : "no answer after 120 s")
                            + " (socket \(directory.path)/libvirt-sock): \(error)"))
                }
                usleep(200_000)
            }
        }
    }

    /// Stops libvirtd (its domains run on): a libvirtd started again names its next tap `vnet0`
    /// if none is, the name reuse that hands one VM's tap name to the next.
    public func stopDaemon() throws {
        guard let pid = libvirtd else { return }
        kill(pid, SIGTERM)
        libvirtd = nil
        guard SpawnWithSignals.wait(pid, within: 60) != nil else {
            kill(pid, SIGKILL)
            _ = SpawnWithSignals.wait(pid, within: 10)
            throw CommandFailed(command: ["libvirtd"], result: CommandResult(status: 1, stdout: "", stderr: "still running 60 s after SIGTERM"))
        }
    }

    /// Starts a diskless domain booting from the network under TCG, one NIC for each MAC, each
    /// on a bridge of its own (`ifmtv<label><n>`, `10.76.<n>.1/24` on it); the first NIC's tap
    /// named `tap` (`<target dev='…'/>`), or by libvirt (`vnetN`).
    public func run(_ label: String, macs: [String], tap: String? = nil) throws {
        if !labels.contains(label) { labels.append(label) }
        var interfaces = ""
        for (index, mac) in macs.enumerated() {
            let bridge = Self.bridge(label, index)
            if !bridges.contains(bridge) {
                try namespace.ip("link", "add", bridge, "type", "bridge")
                try namespace.ip("link", "set", bridge, "up")
                bridges.append(bridge)
            }
            let target = index == 0 ? tap.map { "<target dev='\($0)'/>" } ?? "" : ""
            interfaces += "<interface type='bridge'><mac address='\(mac)'/><source bridge='\(bridge)'/>\(target)<model type='virtio'/></interface>"
        }
        let xml = """
        <domain type='qemu'><name>\(Self.name(label))</name><memory unit='MiB'>64</memory><vcpu>1</vcpu>
        <os><type arch='x86_64' machine='pc'>hvm</type><boot dev='network'/></os>
        <devices>\(interfaces)</devices></domain>
        """
        let path = directory.path + "/\(label).xml"
        try xml.write(toFile: path, atomically: true, encoding: .utf8)
        try virsh(["create", path])
    }

    public static func bridge(_ label: String, _ index: Int) -> String { "ifmtv\(label)\(index)" }

    /// The domain's taps, in the order of its NICs (`virsh domiflist`, whose first column is
    /// each NIC's host-side device, below a header and a rule).
    public func taps(of label: String) throws -> [String] {
        try virsh(["domiflist", Self.name(label)]).split(separator: "\n").dropFirst(2).compactMap { line in
            line.split(separator: " ").first.map(String.init)
        }
    }

    /// The MAC of the first NIC of the domains of `label`: the same for each of them.
    public func mac(of label: String) -> String {
        if let index = macLabels.firstIndex(of: label) { return String(format: "52:54:00:77:%02x:01", index) }
        macLabels.append(label)
        return String(format: "52:54:00:77:%02x:01", macLabels.count - 1)
    }

    /// Pauses the guest, so that it sends nothing more, and stops every frame the host would
    /// send it (``EgressDrop`` on each tap): its taps' counters are final.
    public func freeze(_ label: String) throws {
        try virsh(["suspend", Self.name(label)])
        for tap in try taps(of: label) { try namespace.exec(EgressDrop.command(tap)) }
    }

    /// A tap's counters as the host sees them: rx is what the guest sent.
    public func counters(ofTap tap: String) throws -> (rx: UInt64, tx: UInt64) {
        let text = try namespace.ip("-s", "-j", "link", "show", "dev", tap)
        let stats = ((try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])?.first)?["stats64"] as? [String: Any]
        guard let rx = (stats?["rx"] as? [String: Any])?["bytes"] as? NSNumber,
              let tx = (stats?["tx"] as? [String: Any])?["bytes"] as? NSNumber else {
            throw CommandFailed(command: ["ip", "-s", "-j", "link", "show", "dev", tap], result: CommandResult(status: 1, stdout: text, stderr: "no counters"))
        }
        return (rx.uint64Value, tx.uint64Value)
    }

    /// Waits until the guest behind `tap` has sent something (its firmware's DHCP requests):
    /// what the kernel counted, with a deadline.
    public func waitForGuest(on tap: String) throws {
        let deadline = Date().addingTimeInterval(180)
        while try counters(ofTap: tap).rx == 0 {
            guard Date() < deadline else {
                throw CommandFailed(command: ["guest on \(tap)"], result: CommandResult(status: 1, stdout: "", stderr: "sent nothing in 180 s"))
            }
            usleep(200_000)
        }
    }

    /// Stops the domain at once; it goes, being transient, and its taps with it.
    public func remove(_ label: String) throws {
        try virsh(["destroy", Self.name(label)])
        labels.removeAll { $0 == label }
    }

    /// `count` UDP datagrams of `size` bytes from the host into the guest's NIC `index` (to
    /// `10.76.<n>.2`, which the guest does not hold: the bridge delivers them to its tap all the
    /// same, by a neighbour entry for the guest's MAC).
    public func send(to label: String, nic index: Int = 0, mac: String, count: Int, size: Int) throws {
        let bridge = Self.bridge(label, index)
        let subnet = "10.76.\(index + 10 * (labels.firstIndex(of: label) ?? 0))"
        _ = try? namespace.ip("addr", "add", "\(subnet).1/24", "dev", bridge)
        try namespace.ip("neigh", "replace", "\(subnet).2", "lladdr", mac, "dev", bridge, "nud", "permanent")
        let sender = try namespace.inside { try UDPSocket(bindTo: "\(subnet).1", port: 0) }
        for _ in 0..<count { try sender.send([UInt8](repeating: 7, count: size), to: "\(subnet).2", port: 9) }
    }

    /// Destroys the test's domains, stops its daemons and removes its bridges.
    public func destroy() {
        for label in labels { _ = try? virsh(["destroy", Self.name(label)]) }
        labels = []
        try? stopDaemon()
        if let virtlogd {
            kill(virtlogd, SIGTERM)
            if SpawnWithSignals.wait(virtlogd, within: 30) == nil { kill(virtlogd, SIGKILL) }
            self.virtlogd = nil
        }
        for bridge in bridges { _ = try? namespace.ip("link", "del", bridge) }
        bridges = []
        if mounts != 0 {
            // The tmpfs mounts go with the namespace's last process.
            kill(mounts, SIGKILL)
            _ = SpawnWithSignals.wait(mounts, within: 30)
            mounts = 0
        }
        if holdsTurn {
            holdsTurn = false
            Self.oneAtATime.signal()
        }
    }

    /// Kills the QEMU processes of `ifmt-<pid>-*` domains, and the holders of mount namespaces,
    /// whose test process is gone (QEMU runs on when its libvirtd is killed).
    static func reapStale() {
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry),
                  let command = try? String(contentsOfFile: "/proc/\(entry)/cmdline", encoding: .utf8),
                  let range = command.hasPrefix("/usr/bin/qemu-system") ? command.range(of: "guest=ifmt-")
                    : command.hasPrefix("ifmt-") ? command.range(of: "ifmt-") : nil else { continue }
            let owner = command[range.upperBound...].prefix { $0.isNumber }
            if let testPID = Int32(owner), kill(testPID, 0) != 0, errno == ESRCH { kill(pid, SIGKILL) }
        }
    }
}
