import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A network namespace a test creates, works in, and always deletes.
///
/// Names carry the creating process's pid (`ifmt-<pid>-<n>`), so namespaces left by a test
/// process that crashed are found and deleted by the next run (``reapStale()``).
public final class NetworkNamespace: @unchecked Sendable {
    public let name: String
    private var deleted = false

    /// True when this process may create namespaces (root, with `ip` installed).
    public static var available: Bool {
        getuid() == 0 && (try? Command.resolve("ip")) != nil
    }

    public static let skipReason: Comment =
        "needs root and iproute2 to create network namespaces; run the tests as root"

    nonisolated(unsafe) private static var counter = 0
    private static let lock = NSLock()
    private static let reaped: Void = reapStale()

    /// Creates the namespace with IPv6 off, so no router solicitation, MLD or DAD packet ever
    /// moves a counter the test did not move itself, and with loopback up.
    public init() throws {
        _ = Self.reaped
        let index = Self.lock.withLock { () -> Int in
            Self.counter += 1
            return Self.counter
        }
        name = "ifmt-\(getpid())-\(index)"
        try Command.check(["ip", "netns", "add", name])
        do {
            try exec(["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
                      "net.ipv6.conf.default.disable_ipv6=1"])
            try ip("link", "set", "lo", "up")
        } catch {
            delete()
            throw error
        }
    }

    deinit { delete() }

    /// Deletes the namespace and, with it, every interface still inside.
    public func delete() {
        guard !deleted else { return }
        deleted = true
        _ = try? Command.run(["ip", "netns", "delete", name])
    }

    /// `ip -n NAME ARGS…`
    @discardableResult
    public func ip(_ arguments: String...) throws -> String {
        try Command.check(["ip", "-n", name] + arguments)
    }

    /// Feeds `ip -n NAME -batch -` one command a line (fast for thousands of links).
    public func ipBatch(_ lines: [String]) throws {
        try Command.check(["ip", "-n", name, "-batch", "-"], stdin: lines.joined(separator: "\n") + "\n")
    }

    /// Runs a program inside the namespace (with its own sysfs mounted, as `ip netns exec` does).
    public func run(_ arguments: [String]) throws -> CommandResult {
        try Command.run(["ip", "netns", "exec", name] + arguments)
    }

    @discardableResult
    public func exec(_ arguments: [String]) throws -> String {
        try Command.check(["ip", "netns", "exec", name] + arguments)
    }

    /// The kernel's own counter from `/sys/class/net/IF/statistics/STAT`, read inside.
    /// `count` raw 100-byte frames out of `interface`, each of which arrives at its other end
    /// (broadcast, an EtherType for local experiments: nothing in the namespace answers them).
    public func sendFrames(_ count: Int, from interface: String) throws {
        _ = try exec(["python3", "-c", """
            import socket, sys
            frame = b"\\xff" * 6 + b"\\x02\\x00\\x00\\x00\\x00\\x01" + b"\\x88\\xb5" + b"ifmeter test".ljust(86, b"\\0")
            with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as s:
                for _ in range(int(sys.argv[2])): s.sendto(frame, (sys.argv[1], 0))
            """, interface, String(count)])
    }

    public func sysfsCounter(_ interface: String, _ statistic: String) throws -> UInt64 {
        let text = try exec(["cat", "/sys/class/net/\(interface)/statistics/\(statistic)"])
        guard let value = UInt64(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw CommandFailed(
                command: ["cat", statistic],
                result: CommandResult(status: 0, stdout: text, stderr: "not a number"))
        }
        return value
    }

    /// Polls `/sys/class/net/IF/operstate` until it reads `state`: the kernel's linkwatch sets
    /// it asynchronously, a second after the carrier changes on an idle machine, and many
    /// seconds later while another test creates or deletes a thousand links (both hold the
    /// RTNL lock linkwatch needs): hence a deadline only a stuck kernel misses.
    public func waitForOperstate(_ interface: String, _ state: String, seconds: Double = 60) throws {
        let deadline = Date().addingTimeInterval(seconds)
        var last = ""
        while Date() < deadline {
            last = try exec(["cat", "/sys/class/net/\(interface)/operstate"])
                .trimmingCharacters(in: .whitespacesAndNewlines)
            if last == state { return }
            usleep(20_000)
        }
        // What the kernel says of the link, to tell a link that is not up from one whose state
        // the kernel has not got round to changing (its flags, carrier and operstate).
        let link = (try? run(["ip", "-d", "link", "show", "dev", interface]))?.stdout ?? ""
        let carrier = (try? exec(["cat", "/sys/class/net/\(interface)/carrier"])) ?? "?"
        throw CommandFailed(
            command: ["operstate", interface],
            result: CommandResult(status: 1, stdout: last, stderr: "still \(last), not \(state), after \(Int(seconds)) s; carrier \(carrier.trimmingCharacters(in: .whitespacesAndNewlines)); \(link)"))
    }

    /// Runs `body` on a fresh thread that has entered this namespace: sockets it opens
    /// (netlink, UDP, /dev/net/tun) belong to the namespace and stay there after it returns.
    /// The calling thread's namespace is never touched.
    public func inside<T>(_ body: () throws -> T) throws -> T {
        try withoutActuallyEscaping(body) { body in
            let box = ThreadResult<T>(body: body)
            let path = "/run/netns/\(name)"
            let done = DispatchSemaphore(value: 0)
            let thread = Thread {
                box.result = Result {
                    let fd = open(path, O_RDONLY | O_CLOEXEC)
                    guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
                    defer { close(fd) }
                    guard setNetworkNamespace(fd) == 0 else {
                        throw POSIXError(.init(rawValue: errno) ?? .EIO)
                    }
                    return try box.run()
                }
                done.signal()
            }
            thread.start()
            done.wait()
            return try box.result!.get()
        }
    }

    /// Deletes `ifmt-<pid>-*` namespaces whose creating process is gone.
    static func reapStale() {
        guard let list = try? Command.check(["ip", "netns", "list"]) else { return }
        for line in list.split(separator: "\n") {
            let namespace = line.split(separator: " ").first.map(String.init) ?? ""
            let parts = namespace.split(separator: "-")
            guard parts.count == 3, parts[0] == "ifmt", let pid = Int32(parts[1]) else { continue }
            if pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH {
                _ = try? Command.run(["ip", "netns", "delete", namespace])
            }
        }
    }
}

/// `setns(fd, CLONE_NEWNET)`. Glibc declares `setns` only under `_GNU_SOURCE`, which Swift's
/// Glibc module does not define, so it is looked up at run time.
private func setNetworkNamespace(_ fd: Int32) -> Int32 {
    typealias SetNS = @convention(c) (Int32, Int32) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "setns") else {
        errno = ENOSYS
        return -1
    }
    let cloneNewNet: Int32 = 0x4000_0000  // CLONE_NEWNET, <linux/sched.h>
    return unsafeBitCast(symbol, to: SetNS.self)(fd, cloneNewNet)
}

/// Carries a closure to another thread and its result back. The closure is dropped as soon as
/// it has run, because `withoutActuallyEscaping` traps if it outlives the call.
private final class ThreadResult<T>: @unchecked Sendable {
    private var body: (() throws -> T)?
    var result: Result<T, any Error>?
    init(body: @escaping () throws -> T) { self.body = body }

    func run() throws -> T {
        defer { body = nil }
        return try body!()
    }
}

/// A veth pair with one end in each of two namespaces, addressed, up, and with permanent
/// neighbour entries so no ARP ever crosses it: the only packets are the test's own.
public final class VethPair: @unchecked Sendable {
    public let left: NetworkNamespace
    public let right: NetworkNamespace
    public let leftName: String
    public let rightName: String
    public let leftAddress: String
    public let rightAddress: String

    public init(leftName: String = "va", rightName: String = "vb", subnet: Int = 77) throws {
        left = try NetworkNamespace()
        right = try NetworkNamespace()
        self.leftName = leftName
        self.rightName = rightName
        leftAddress = "10.\(subnet).0.1"
        rightAddress = "10.\(subnet).0.2"
        try left.ip("link", "add", leftName, "type", "veth", "peer", "name", rightName,
                    "netns", right.name)
        try left.ip("address", "add", "\(leftAddress)/24", "dev", leftName)
        try right.ip("address", "add", "\(rightAddress)/24", "dev", rightName)
        let leftMAC = try left.exec(["cat", "/sys/class/net/\(leftName)/address"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let rightMAC = try right.exec(["cat", "/sys/class/net/\(rightName)/address"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        try left.ip("neigh", "add", rightAddress, "lladdr", rightMAC, "dev", leftName, "nud", "permanent")
        try right.ip("neigh", "add", leftAddress, "lladdr", leftMAC, "dev", rightName, "nud", "permanent")
        try left.ip("link", "set", leftName, "up")
        try right.ip("link", "set", rightName, "up")
        try left.waitForOperstate(leftName, "up")
        try right.waitForOperstate(rightName, "up")
    }

    /// Sends `count` UDP datagrams of `payload` bytes from the left namespace to a bound
    /// receiver on the right. Each is `payload + 42` bytes on the wire (Ethernet 14, IPv4 20,
    /// UDP 8). Returns once every datagram has arrived.
    public func sendLeftToRight(count: Int, payload: Int, port: UInt16 = 9000) throws {
        try Self.send(count: count, payload: payload, port: port,
                      from: (left, leftAddress), to: (right, rightAddress))
    }

    /// The same, from right to left.
    public func sendRightToLeft(count: Int, payload: Int, port: UInt16 = 9000) throws {
        try Self.send(count: count, payload: payload, port: port,
                      from: (right, rightAddress), to: (left, leftAddress))
    }

    private static func send(
        count: Int, payload: Int, port: UInt16,
        from source: (NetworkNamespace, String), to destination: (NetworkNamespace, String)
    ) throws {
        let receiver = try destination.0.inside { try UDPSocket(bindTo: destination.1, port: port) }
        let sender = try source.0.inside { try UDPSocket(bindTo: source.1, port: 0) }
        let bytes = [UInt8](repeating: 0x5a, count: payload)
        for _ in 0..<count {
            try sender.send(bytes, to: destination.1, port: port)
            try receiver.receive(timeoutMilliseconds: 30_000)
        }
    }
}
