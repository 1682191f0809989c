import Foundation
import IfMeterCore
import IfMeterKernel
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// An application counter fixture (its bpffs, cgroup and veth pair) with the scope programs'
/// world: the right end also holds an "internet" address of each family, outside the pair's
/// prefix, which the left reaches through a route via the right end, as a host reaches the
/// internet through its gateway. The left end is the one the tcx programs cover.
final class ScopeFixture {
    let apps: AppCounterFixture
    var pair: VethPair { apps.pair }
    var pins: String { apps.pins }
    let subnet: Int
    /// The right end's addresses outside the pair's prefixes.
    let internetV4: String
    let internetV6 = "2001:db8:62::2"
    /// The pair's IPv6 addresses once ``enableIPv6()`` ran.
    private(set) var localV6: (left: String, right: String)?

    init(subnet: Int, cgroups: [String] = []) throws {
        self.subnet = subnet
        apps = try AppCounterFixture(children: cgroups, subnet: subnet)
        internetV4 = "198.51.100.\(subnet)"
        try pair.right.ip("address", "add", "\(internetV4)/32", "dev", pair.rightName)
        try pair.left.ip("route", "add", "\(internetV4)/32", "via", pair.rightAddress, "dev", pair.leftName)
    }

    /// The pair's own prefix and the built-in ones: what the daemon would write for the left.
    var prefixes: Set<LocalPrefix> {
        var all = Set(LocalPrefix.builtIn)
        all.insert(LocalPrefix(parsing: "10.\(subnet).0.0/24")!)
        all.insert(LocalPrefix(parsing: "fd00:\(subnet)::/64")!)
        return all
    }

    func attachApps() throws { try apps.attach() }

    /// `ifmeterd --attach-link` for the left end, from the left's namespace.
    @discardableResult
    func attachLeft() throws -> InterfaceScopeProgram.Attached {
        let ifindex = try apps.ifindex(left: true)
        let pins = self.pins
        return try pair.left.inside { try InterfaceScopeProgram.attach(ifindex: ifindex, pinDirectory: pins) }
    }

    func enableIPv6() throws {
        let right = try apps.enableIPv6()
        localV6 = ("fd00:\(subnet)::1", right)
        try pair.right.ip("-6", "address", "add", "\(internetV6)/128", "dev", pair.rightName, "nodad")
        try pair.left.ip("-6", "route", "add", "\(internetV6)/128", "via", right, "dev", pair.leftName)
    }

    /// The left end's own counters, from sysfs.
    func leftCounters() throws -> Traffic {
        func read(_ name: String) throws -> UInt64 { try pair.left.sysfsCounter(pair.leftName, name) }
        return Traffic(rxBytes: try read("rx_bytes"), txBytes: try read("tx_bytes"),
                       rxPackets: try read("rx_packets"), txPackets: try read("tx_packets"))
    }

    /// The left end's counters, read until two reads agree: each file is read by itself, and a
    /// frame counted between two of them would be in the bytes and not the packets.
    func leftCountersAtRest() throws -> Traffic {
        var last = try leftCounters()
        for _ in 0..<1000 {
            let now = try leftCounters()
            if now == last { return now }
            last = now
        }
        return last
    }

    /// The left end's entries of link_scopes.
    func leftScopes() throws -> [TrafficScope: Traffic] {
        let ifindex = try apps.ifindex(left: true)
        let counts = try ScopeCounterMaps(pinDirectory: pins).read()
        var scopes: [TrafficScope: Traffic] = [:]
        for (key, traffic) in counts.counters where key.ifindex == ifindex { scopes[key.scope] = traffic }
        return scopes
    }

    /// The left end's scopes and its own counters at one moment: read until the link's counters
    /// are the same before and after the scopes' read (the kernel's own IPv6 messages may cross
    /// meanwhile), for at most 10 s; the last read otherwise.
    func leftSnapshot() throws -> (scopes: [TrafficScope: Traffic], link: Traffic) {
        let deadline = Date().addingTimeInterval(10)
        while true {
            let first = try leftCountersAtRest()
            let scopes = try leftScopes()
            let second = try leftCounters()
            if first == second || Date() > deadline { return (scopes, second) }
        }
    }

    /// `count` UDP datagrams of `payload` bytes from the left end to `to` on the right (or, with
    /// `fromRight`, from `to` on the right to the left end), each received before the next is
    /// sent; with `cgroup`, the sending and receiving sockets are made in that cgroup. Exits 0
    /// only when every datagram arrived.
    func send(_ count: Int, payload: Int, to address: String, fromRight: Bool = false, cgroup: String? = nil) throws {
        let script = AppsHost.scriptPreamble + """
            rightns, leftns, here, payload, count, cgroup, to, source = sys.argv[1:9]
            if cgroup: join(cgroup)
            family = socket.AF_INET6 if ":" in to else socket.AF_INET
            enter(rightns if here == "right" else leftns)
            rx = socket.socket(family, socket.SOCK_DGRAM)
            rx.bind((to, 9100))
            rx.settimeout(30)
            enter(leftns if here == "right" else rightns)
            tx = socket.socket(family, socket.SOCK_DGRAM)
            tx.bind((source, 0))
            data = b"\\x5a" * int(payload)
            for _ in range(int(count)):
                tx.sendto(data, (to, 9100))
                if len(rx.recv(65536)) != len(data): sys.exit("a datagram arrived short")
            """
        let v6 = address.contains(":")
        let left = v6 ? try #require(localV6).left : pair.leftAddress
        // The receiver binds where the datagrams go; the sender binds its own end's address.
        let (receiverSide, receiverAddress, senderAddress) = fromRight ? ("left", left, address) : ("right", address, left)
        let cgroupPath = try cgroup.map { try #require(apps.children[$0]) } ?? ""
        try Command.check([AppCounterFixture.python, "-c", script, "/run/netns/\(pair.right.name)",
                           "/run/netns/\(pair.left.name)", receiverSide, String(payload), String(count),
                           cgroupPath, receiverAddress, senderAddress], timeout: 60)
    }
}

extension Traffic {
    /// `self` less `other`, field by field: a counter's growth between two reads.
    static func - (lhs: Traffic, rhs: Traffic) -> Traffic {
        Traffic(rxBytes: lhs.rxBytes - rhs.rxBytes, txBytes: lhs.txBytes - rhs.txBytes,
                rxPackets: lhs.rxPackets - rhs.rxPackets, txPackets: lhs.txPackets - rhs.txPackets)
    }
}
