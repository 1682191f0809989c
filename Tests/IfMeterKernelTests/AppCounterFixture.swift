import Foundation
import IfMeterKernel
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What an application counter test stands on, made fresh and always taken away: a bpffs of its
/// own mounted on a temporary directory (so nothing is pinned where the machine's is), a cgroup
/// `ifmeter-test-<pid>-<n>` under the cgroup2 root with sub-cgroups, and a veth pair between two
/// namespaces. The program is attached to the test's cgroup, never to the root: it sees only
/// the sockets of the test's own processes.
final class AppCounterFixture {
    static var available: Bool { NetworkNamespace.available && FileManager.default.isExecutableFile(atPath: python) }
    static let skipReason: Comment =
        "needs root (CAP_BPF, CAP_NET_ADMIN, mounts, cgroups), iproute2 and /usr/bin/python3; run the tests as root"
    /// Debian's python, not a user's pyenv shim: `nobody` runs it too.
    static let python = "/usr/bin/python3"

    let bpffs: TemporaryDirectory
    let pins: String
    let cgroup: String
    let pair: VethPair
    let subnet: Int
    private(set) var children: [String: String] = [:]
    private var mounted = false

    nonisolated(unsafe) private static var counter = 0
    private static let lock = NSLock()

    init(children names: [String], subnet: Int) throws {
        let index = Self.lock.withLock { () -> Int in
            Self.counter += 1
            return Self.counter
        }
        let root = try Cgroup2.mountPoint()
        Self.reapStale(under: root)
        bpffs = try TemporaryDirectory()
        pins = bpffs.path + "/ifmeter"
        cgroup = root + "/ifmeter-test-\(getpid())-\(index)"
        self.subnet = subnet
        pair = try VethPair(subnet: subnet)
        // Everyone may pass the mount point, as /sys/fs/bpf: the pins' own modes decide.
        guard chmod(bpffs.path, 0o755) == 0, mount("bpf", bpffs.path, "bpf", 0, nil) == 0 else {
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        mounted = true
        do {
            try Self.makeDirectory(cgroup)
            for name in names {
                children[name] = cgroup + "/" + name
                try Self.makeDirectory(cgroup + "/" + name)
            }
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    /// Detaches, removes the cgroups (killing anything left in them) and unmounts the bpffs,
    /// whatever a test left half done.
    func close() {
        try? AppCounterProgram.detach(pinDirectory: pins)
        for path in children.values { AppsHost.removeCgroup(path) }
        children = [:]
        AppsHost.removeCgroup(cgroup)
        if mounted { umount2(bpffs.path, Int32(MNT_DETACH)) }
        mounted = false
        pair.left.delete()
        pair.right.delete()
    }

    func attach(
        maxEntries: UInt32 = AppCounterProgram.defaultMaxEntries,
        overflowEntries: UInt32 = AppCounterProgram.defaultOverflowEntries, owner: (uid: UInt32, gid: UInt32) = (0, 0)
    ) throws {
        try AppCounterProgram.attach(cgroupRoot: cgroup, pinDirectory: pins, maxEntries: maxEntries,
                                     overflowEntries: overflowEntries, owner: owner)
    }

    func id(_ child: String) throws -> UInt64 { try Cgroup2.id(ofDirectory: try #require(children[child])) }

    /// The ifindex of the left (`va`) or right (`vb`) end, in its own namespace.
    func ifindex(left: Bool) throws -> Int32 {
        let (namespace, name) = left ? (pair.left, pair.leftName) : (pair.right, pair.rightName)
        let text = try namespace.exec(["cat", "/sys/class/net/\(name)/ifindex"])
        return try #require(Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    /// One process that binds a receiver on the right end while in cgroup `receiver`, then for
    /// each sender in turn joins that cgroup, opens a socket on the left and sends its count of
    /// `payload`-byte datagrams, each received before the next is sent. A socket's cgroup is
    /// the one its process was in when it was made. Exits 0 only when every datagram arrived.
    /// Over IPv6 when `address` is the right end's IPv6 address (`enableIPv6()`); over the
    /// left namespace's loopback when `address` is 127.0.0.1.
    func send(payload: Int, receiver: String, senders: [(cgroup: String, count: Int)], to address: String? = nil) throws {
        let script = AppsHost.scriptPreamble + """
            right, left, receiver, address, payload = sys.argv[1:6]
            join(receiver)
            enter(right)
            family = socket.AF_INET6 if ":" in address else socket.AF_INET
            rx = socket.socket(family, socket.SOCK_DGRAM)
            rx.bind((address, 9000))
            rx.settimeout(30)
            enter(left)
            data = b"\\x5a" * int(payload)
            senders = sys.argv[6:]
            for cgroup, count in zip(senders[0::2], senders[1::2]):
                join(cgroup)
                tx = socket.socket(family, socket.SOCK_DGRAM)
                for _ in range(int(count)):
                    tx.sendto(data, (address, 9000))
                    if len(rx.recv(65536)) != len(data): sys.exit("a datagram arrived short")
                tx.close()
            """
        let receiving = address == "127.0.0.1" ? pair.left : pair.right
        var arguments = [Self.python, "-c", script, "/run/netns/\(receiving.name)", "/run/netns/\(pair.left.name)",
                         try #require(children[receiver]), address ?? pair.rightAddress, String(payload)]
        for sender in senders { arguments += [try #require(children[sender.cgroup]), String(sender.count)] }
        try Command.check(arguments, timeout: 60)
    }

    /// Turns IPv6 on for the two ends only, with addresses that skip duplicate detection and
    /// permanent neighbour entries, as the pair's IPv4 has; returns the right end's address.
    /// The kernel's own router and multicast messages come from no socket of the test's cgroup.
    func enableIPv6() throws -> String {
        let addresses = ["fd00:\(subnet)::1", "fd00:\(subnet)::2"]
        let ends = [(pair.left, pair.leftName), (pair.right, pair.rightName)]
        for (index, (namespace, name)) in ends.enumerated() {
            try namespace.exec(["sysctl", "-qw", "net.ipv6.conf.\(name).disable_ipv6=0"])
            try namespace.ip("-6", "address", "add", "\(addresses[index])/64", "dev", name, "nodad")
        }
        for (index, (namespace, name)) in ends.enumerated() {
            let (peer, peerName) = ends[1 - index]
            let mac = try peer.exec(["cat", "/sys/class/net/\(peerName)/address"])
                .trimmingCharacters(in: .whitespacesAndNewlines)
            try namespace.ip("-6", "neigh", "add", addresses[1 - index], "lladdr", mac, "dev", name, "nud", "permanent")
        }
        return addresses[1]
    }

    static func makeDirectory(_ path: String) throws {
        guard mkdir(path, 0o755) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    }

    /// Removes `ifmeter-test-<pid>-*` cgroups whose test process is gone.
    static func reapStale(under root: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [] {
            let parts = name.split(separator: "-")
            guard parts.count == 4, name.hasPrefix("ifmeter-test-"), let pid = Int32(parts[2]),
                  pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            let path = root + "/" + name
            for child in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            where !child.contains(".") { AppsHost.removeCgroup(path + "/" + child) }
            AppsHost.removeCgroup(path)
        }
    }
}

/// The descriptors of BPF objects (maps, programs, links) this process holds.
func bpfDescriptors() -> Int {
    let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return fds.filter { fd in
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd))?.hasPrefix("anon_inode:bpf") == true
    }.count
}
