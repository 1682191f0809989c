import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What an end-to-end test of the application counter (docs/APPS.md) stands on, made fresh and
/// always taken away (``close()``, also from `deinit`): a veth pair from the daemon's namespace
/// (`left`, end `va`) to a peer's (`right`, end `vb`); a bpffs of the test's own mounted on a
/// temporary directory, the pins in its `ifmeter` (so nothing is pinned where the machine's
/// is); and cgroups `ifmeter-test-<pid>-<n>-<name>` right under the cgroup2 root, each one
/// application (`service:ifmeter-test-<pid>-<n>-<name>`). The program is attached by the real
/// `ifmeterd --attach-apps` run inside `left`: it counts only that namespace's packets.
public final class AppsHost: @unchecked Sendable {
    public static var available: Bool {
        NetworkNamespace.available && FileManager.default.isExecutableFile(atPath: python) && cgroup2Root() != nil
    }
    public static let skipReason: Comment =
        "needs root (CAP_BPF, CAP_NET_ADMIN, mounts, cgroups), a cgroup2 hierarchy, iproute2 and /usr/bin/python3; run the tests as root"
    /// Debian's python, not a user's pyenv shim.
    public static let python = "/usr/bin/python3"

    /// `ip netns exec` gives the command a mount namespace of its own with a fresh sysfs on
    /// /sys, without the cgroup filesystems: this, put after it, mounts the unified hierarchy on
    /// /sys/fs/cgroup there (gone with that mount namespace) and execs the rest, as a host's
    /// mount namespace would have it. The same hierarchy: the same cgroups, ids and paths.
    public static let mountingCgroup2 = ["/bin/sh", "-c", #"mount -t cgroup2 cgroup2 /sys/fs/cgroup && exec "$0" "$@""#]

    public let pair: VethPair
    public var left: NetworkNamespace { pair.left }
    public var right: NetworkNamespace { pair.right }
    public let bpffs: TemporaryDirectory
    public var pins: String { bpffs.path + "/ifmeter" }
    /// The cgroup2 root in the test's (the host's) mount namespace.
    public let root: String
    /// Each application's cgroup directory, by the name the test gave it.
    public private(set) var cgroups: [String: String] = [:]
    /// Each application's subject, by the name the test gave it (also once its cgroup is gone).
    private var subjects: [String: String] = [:]
    private var mounted = false
    /// The config the program was attached with, to detach it again.
    private var attachedWith: String?

    nonisolated(unsafe) private static var counter = 0
    private static let lock = NSLock()

    public init(applications names: [String], subnet: Int) throws {
        let index = Self.lock.withLock { () -> Int in
            Self.counter += 1
            return Self.counter
        }
        guard let root = Self.cgroup2Root() else {
            throw CommandFailed(command: ["cgroup2"], result: CommandResult(status: 1, stdout: "", stderr: "no cgroup2 mount in /proc/self/mountinfo"))
        }
        self.root = root
        Self.reapStale(under: root)
        pair = try VethPair(subnet: subnet)
        bpffs = try TemporaryDirectory()
        // Mode 0700, as systemd mounts /sys/fs/bpf: only root, or a daemon holding
        // CAP_DAC_READ_SEARCH (the unit's), passes it to the pins.
        guard mount("bpf", bpffs.path, "bpf", 0, "mode=0700") == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        mounted = true
        do {
            for name in names {
                let path = root + "/ifmeter-test-\(getpid())-\(index)-\(name)"
                guard mkdir(path, 0o755) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
                cgroups[name] = path
                subjects[name] = "service:" + (path.split(separator: "/").last.map(String.init) ?? name)
            }
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    /// The subject the daemon counts application `name` under.
    public func subject(_ name: String) -> String {
        subjects[name] ?? "service:\(name)"
    }

    /// Application `name`'s cgroup directory.
    public func cgroupPath(_ name: String) -> String? { cgroups[name] }

    /// Removes application `name`'s cgroup (its processes have exited): the cgroup is gone.
    public func removeApplication(_ name: String) {
        guard let path = cgroups.removeValue(forKey: name) else { return }
        Self.removeCgroup(path)
    }

    /// Runs the real `ifmeterd --attach-apps --config CONFIG [--apps-user USER]` inside `left`,
    /// as root; throws with its output unless it exits 0.
    @discardableResult
    public func attach(config: String, user: String? = nil) throws -> CommandResult {
        let result = try attachCommand(config: config, user: user)
        guard result.status == 0 else { throw CommandFailed(command: ["ifmeterd", "--attach-apps"], result: result) }
        attachedWith = config
        return result
    }

    /// The same, whatever it says: to look at a refusal.
    public func attachCommand(config: String, user: String? = nil, mountingCgroup2: Bool = true) throws -> CommandResult {
        try Command.run(["ip", "netns", "exec", left.name] + (mountingCgroup2 ? Self.mountingCgroup2 : [])
            + [DaemonProcess.binary, "--attach-apps", "--config", config] + (user.map { ["--apps-user", $0] } ?? []))
    }

    /// `ifmeterd --detach-apps --config CONFIG` inside `left`.
    public func detach() throws -> CommandResult {
        guard let config = attachedWith else { return CommandResult(status: 0, stdout: "", stderr: "") }
        let result = try Command.run(["ip", "netns", "exec", left.name, DaemonProcess.binary, "--detach-apps", "--config", config])
        if result.status == 0 { attachedWith = nil }
        return result
    }

    /// Detaches, removes the cgroups (killing anything left in them), unmounts the bpffs (which
    /// drops whatever pins are left, and the program with them) and deletes the namespaces,
    /// whatever a test left half done.
    public func close() {
        _ = try? detach()
        for path in cgroups.values { Self.removeCgroup(path) }
        cgroups = [:]
        if mounted { umount2(bpffs.path, Int32(MNT_DETACH)) }
        mounted = false
        pair.left.delete()
        pair.right.delete()
    }

    /// One process that joins application `name`'s cgroup, opens a UDP socket in `left` (its
    /// cgroup is the one its process was in when it was made) and sends `count` datagrams of
    /// `payload` bytes to a socket the peer bound in `right` before, which answers each with
    /// `answer` bytes (none when 0); each exchange finishes before the next. Exits 0 only when
    /// every datagram and answer arrived whole. The peer's socket is `right`'s: the program,
    /// counting only `left`'s packets, never sees it.
    public func exchange(from name: String, count: Int, payload: Int, answer: Int) throws {
        let cgroup = try #require(cgroups[name], "no application \(name)")
        let script = """
            import ctypes, os, socket, sys
            libc = ctypes.CDLL(None, use_errno=True)
            def enter(path):
                fd = os.open(path, os.O_RDONLY)
                if libc.setns(fd, 0x40000000) != 0: raise OSError(ctypes.get_errno(), "setns " + path)
                os.close(fd)
            peer_ns, own_ns, cgroup, address, count, payload, answer = sys.argv[1:8]
            enter(peer_ns)
            peer = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            peer.bind((address, 0))
            peer.settimeout(30)
            port = peer.getsockname()[1]
            with open(cgroup + "/cgroup.procs", "w") as f: f.write(str(os.getpid()))
            enter(own_ns)
            own = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            own.settimeout(30)
            data, reply = b"\\x5a" * int(payload), b"\\xa5" * int(answer)
            for _ in range(int(count)):
                own.sendto(data, (address, port))
                got, source = peer.recvfrom(65536)
                if len(got) != len(data): sys.exit("a datagram arrived short")
                if reply:
                    peer.sendto(reply, source)
                    if len(own.recv(65536)) != len(reply): sys.exit("an answer arrived short")
            """
        try Command.check([Self.python, "-c", script, "/run/netns/\(right.name)", "/run/netns/\(left.name)", cgroup,
                           pair.rightAddress, String(count), String(payload), String(answer)], timeout: 60)
    }

    /// The cgroup2 mount of the whole hierarchy in this process's mount namespace.
    public static func cgroup2Root() -> String? {
        guard let text = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 9, let dash = fields[6...].firstIndex(of: "-"), dash + 1 < fields.count,
                  fields[dash + 1] == "cgroup2", fields[3] == "/" else { continue }
            return String(fields[4])
        }
        return nil
    }

    /// What every traffic script of the application tests begins with: `enter(path)` joins the
    /// network namespace bound at `path`, `join(path)` moves the script into the cgroup `path`.
    public static let scriptPreamble = """
        import ctypes, os, socket, sys
        libc = ctypes.CDLL(None, use_errno=True)
        def enter(path):
            fd = os.open(path, os.O_RDONLY)
            if libc.setns(fd, 0x40000000) != 0: raise OSError(ctypes.get_errno(), "setns " + path)
            os.close(fd)
        def join(path):
            with open(path + "/cgroup.procs", "w") as f: f.write(str(os.getpid()))

        """


    /// Kills what is left in the cgroup (cgroup.kill), waits for it to empty, and removes it,
    /// the cgroups below it first.
    public static func removeCgroup(_ path: String) {
        guard access(path, F_OK) == 0 else { return }
        for child in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
            var info = stat()
            if lstat(path + "/" + child, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { removeCgroup(path + "/" + child) }
        }
        if let procs = try? String(contentsOfFile: path + "/cgroup.procs", encoding: .utf8), !procs.isEmpty {
            try? "1".write(toFile: path + "/cgroup.kill", atomically: false, encoding: .utf8)
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline,
                  let events = try? String(contentsOfFile: path + "/cgroup.events", encoding: .utf8),
                  events.contains("populated 1") {
                usleep(10_000)
            }
        }
        rmdir(path)
    }

    /// Removes `ifmeter-test-<pid>-<n>-<name>` cgroups whose test process is gone.
    static func reapStale(under root: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [] {
            let parts = name.split(separator: "-")
            guard parts.count == 5, name.hasPrefix("ifmeter-test-"), let pid = Int32(parts[2]),
                  pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            removeCgroup(root + "/" + name)
        }
    }
}
