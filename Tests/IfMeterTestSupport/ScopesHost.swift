import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What an end-to-end test of local and internet traffic (docs/SCOPES.md) stands on, made fresh
/// and always taken away (``close()``, also from `deinit`): three namespaces, two veth pairs.
///
/// ```
///  lan: host0        ──  lan0  router  wan0  ──  isp0: internet
///  192.168.50.10/24       .1           100.64.0.2/30     100.64.0.1 (the gateway); on its
///  2001:db8:50::10/64     ::1    2001:db8:ffff::2/64     loopback, the "internet" servers
///                                                         198.51.100.7 and 2001:db8:beef::7
/// ```
///
/// The router forwards both families, masquerades IPv4 out of wan0 (IPv6 is routed), and is
/// where the daemon runs. Every neighbour entry is permanent, and IPv6 does no DAD and sends
/// no router solicitation: what crosses the links is the test's own traffic, bar the odd MLD
/// report, which is local. A bpffs of the test's own holds the pins (``pins``), and a cgroup
/// right under the cgroup2 root (``application``) stands for an application of the router's.
public final class ScopesHost: @unchecked Sendable {
    public let lan: NetworkNamespace
    public let router: NetworkNamespace
    public let internet: NetworkNamespace
    public let bpffs: TemporaryDirectory
    public var pins: String { bpffs.path + "/ifmeter" }
    /// The application's cgroup directory.
    public let application: String
    /// The subject the daemon counts the application under.
    public var applicationSubject: String { "service:" + (application.split(separator: "/").last.map(String.init) ?? "") }
    private var mounted = false
    private var closed = false

    /// The addresses, by role.
    public enum Address {
        public static let lanHost4 = "192.168.50.10", lanHost6 = "2001:db8:50::10"
        public static let routerLAN4 = "192.168.50.1", routerLAN6 = "2001:db8:50::1"
        public static let routerWAN4 = "100.64.0.2", routerWAN6 = "2001:db8:ffff::2"
        public static let gateway4 = "100.64.0.1", gateway6 = "2001:db8:ffff::1"
        public static let server4 = "198.51.100.7", server6 = "2001:db8:beef::7"
    }

    nonisolated(unsafe) private static var counter = 0
    private static let lock = NSLock()

    public init() throws {
        let index = Self.lock.withLock { () -> Int in
            Self.counter += 1
            return Self.counter
        }
        guard let root = AppsHost.cgroup2Root() else {
            throw CommandFailed(command: ["cgroup2"], result: CommandResult(status: 1, stdout: "", stderr: "no cgroup2 mount in /proc/self/mountinfo"))
        }
        lan = try NetworkNamespace()
        router = try NetworkNamespace()
        internet = try NetworkNamespace()
        bpffs = try TemporaryDirectory()
        application = root + "/ifmeter-test-\(getpid())-scopes\(index)"
        do {
            guard mount("bpf", bpffs.path, "bpf", 0, "mode=0700") == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            mounted = true
            guard mkdir(application, 0o755) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            try build()
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    private func build() throws {
        for namespace in [lan, router, internet] {
            try namespace.exec(["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=0", "net.ipv6.conf.default.disable_ipv6=0",
                                "net.ipv6.conf.default.accept_dad=0", "net.ipv6.conf.default.dad_transmits=0",
                                "net.ipv6.conf.default.router_solicitations=0", "net.ipv6.conf.default.accept_ra=0"])
        }
        try router.exec(["sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1"])
        try router.ip("link", "add", "lan0", "type", "veth", "peer", "name", "host0", "netns", lan.name)
        try router.ip("link", "add", "wan0", "type", "veth", "peer", "name", "isp0", "netns", internet.name)
        try lan.ip("address", "add", "\(Address.lanHost4)/24", "dev", "host0")
        try lan.ip("-6", "address", "add", "\(Address.lanHost6)/64", "dev", "host0", "nodad")
        try router.ip("address", "add", "\(Address.routerLAN4)/24", "dev", "lan0")
        try router.ip("-6", "address", "add", "\(Address.routerLAN6)/64", "dev", "lan0", "nodad")
        try router.ip("address", "add", "\(Address.routerWAN4)/30", "dev", "wan0")
        try router.ip("-6", "address", "add", "\(Address.routerWAN6)/64", "dev", "wan0", "nodad")
        try internet.ip("address", "add", "\(Address.gateway4)/30", "dev", "isp0")
        try internet.ip("-6", "address", "add", "\(Address.gateway6)/64", "dev", "isp0", "nodad")
        try internet.ip("address", "add", "\(Address.server4)/32", "dev", "lo")
        try internet.ip("-6", "address", "add", "\(Address.server6)/128", "dev", "lo")
        for (namespace, link) in [(lan, "host0"), (router, "lan0"), (router, "wan0"), (internet, "isp0")] {
            try namespace.ip("link", "set", link, "up")
        }
        func mac(_ namespace: NetworkNamespace, _ link: String) throws -> String {
            try namespace.exec(["cat", "/sys/class/net/\(link)/address"]).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let (host0, lan0, wan0, isp0) = (try mac(lan, "host0"), try mac(router, "lan0"), try mac(router, "wan0"), try mac(internet, "isp0"))
        for (namespace, address, lladdr, link) in [
            (lan, Address.routerLAN4, lan0, "host0"), (lan, Address.routerLAN6, lan0, "host0"),
            (router, Address.lanHost4, host0, "lan0"), (router, Address.lanHost6, host0, "lan0"),
            (router, Address.gateway4, isp0, "wan0"), (router, Address.gateway6, isp0, "wan0"),
            (internet, Address.routerWAN4, wan0, "isp0"), (internet, Address.routerWAN6, wan0, "isp0"),
        ] {
            try namespace.ip("neigh", "replace", address, "lladdr", lladdr, "dev", link, "nud", "permanent")
        }
        try lan.ip("route", "add", "default", "via", Address.routerLAN4)
        try lan.ip("-6", "route", "add", "default", "via", Address.routerLAN6)
        try router.ip("route", "add", "default", "via", Address.gateway4)
        try router.ip("-6", "route", "add", "default", "via", Address.gateway6)
        try internet.ip("-6", "route", "add", "2001:db8:50::/64", "via", Address.routerWAN6)
        try router.exec(["iptables", "-t", "nat", "-A", "POSTROUTING", "-o", "wan0", "-j", "MASQUERADE"])
        for (namespace, link) in [(lan, "host0"), (router, "lan0"), (router, "wan0"), (internet, "isp0")] {
            try namespace.waitForOperstate(link, "up")
        }
    }

    /// Sends `count` UDP datagrams of `payload` bytes from `source` (an address of `from`'s) to
    /// `destination`, where a socket bound in `to` receives each before the next is sent; from
    /// within the application's cgroup when `asApplication`. Each datagram is `payload` + 8 +
    /// 20 (IPv4) or 40 (IPv6) bytes of IP packet, 14 more on a veth.
    public func send(count: Int, payload: Int, from: NetworkNamespace, source: String, to: NetworkNamespace,
                     destination: String, asApplication: Bool = false) throws {
        let script = AppsHost.scriptPreamble + """
            to_ns, from_ns, source, destination, count, payload, cgroup = sys.argv[1:8]
            family = socket.AF_INET6 if ":" in destination else socket.AF_INET
            enter(to_ns)
            peer = socket.socket(family, socket.SOCK_DGRAM)
            peer.bind((destination, 0))
            peer.settimeout(30)
            port = peer.getsockname()[1]
            if cgroup: join(cgroup)
            enter(from_ns)
            own = socket.socket(family, socket.SOCK_DGRAM)
            own.bind((source, 0))
            data = b"\\x5a" * int(payload)
            for _ in range(int(count)):
                own.sendto(data, (destination, port))
                if len(peer.recv(65536)) != len(data): sys.exit("a datagram arrived short")
            """
        try Command.check([AppsHost.python, "-c", script, "/run/netns/\(to.name)", "/run/netns/\(from.name)", source, destination,
                           String(count), String(payload), asApplication ? application : ""], timeout: 60)
    }

    /// The bytes one datagram of `payload` bytes to `destination` is on a veth.
    public static func frameBytes(payload: Int, to destination: String) -> UInt64 {
        UInt64(payload + 8 + (destination.contains(":") ? 40 : 20) + 14)
    }

    /// Removes the cgroup, unmounts the bpffs (its pins, and the programs with them) and deletes
    /// the namespaces, whatever a test left half done.
    public func close() {
        guard !closed else { return }
        closed = true
        AppsHost.removeCgroup(application)
        if mounted { umount2(bpffs.path, Int32(MNT_DETACH)) }
        mounted = false
        for namespace in [lan, router, internet] { namespace.delete() }
    }
}
