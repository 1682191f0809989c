import Foundation
import IfMeterCore
import IfMeterKernel
import IfMeterTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The scope programs against the real kernel (docs/SCOPES.md): the tcx programs count a veth
/// end's frames by scope, to the byte of the end's own counters; nothing is classified before
/// the daemon wrote the prefixes; the cgroup program keys applications by scope; attaching is
/// idempotent and the pins of a gone interface go; every datagram arrives. Nested in the
/// application counter's serialized suite: its tests count the process's BPF descriptors.
extension AppCounterTests {
@Suite("The scope programs against the kernel",
       .enabled(if: AppCounterFixture.available, AppCounterFixture.skipReason),
       .serialized, .ownThread, .timeLimit(.minutes(5)))
struct ScopeProgramTests {
    /// A UDP datagram's frame over IPv4: payload, 8 of UDP, 20 of IPv4, 14 of Ethernet.
    static func frames4(_ count: Int, _ payload: Int) -> UInt64 { UInt64(count * (payload + 42)) }
    /// Over IPv6: 40 of IPv6.
    static func frames6(_ count: Int, _ payload: Int) -> UInt64 { UInt64(count * (payload + 62)) }

    @Test("IPv4: local and internet each exact both ways, together the veth end's own counters (the link-layer header counted)")
    func exactIPv4() throws {
        let fixture = try ScopeFixture(subnet: 91)
        try fixture.attachApps()
        try LocalPrefixMap(pinDirectory: fixture.pins).write(fixture.prefixes)
        let before = try fixture.leftCounters()
        #expect(try fixture.attachLeft() == .init(linksMade: 2, pinsPruned: 0))
        try fixture.send(20, payload: 900, to: fixture.pair.rightAddress)
        try fixture.send(30, payload: 500, to: fixture.internetV4)
        try fixture.send(7, payload: 1200, to: fixture.pair.rightAddress, fromRight: true)
        try fixture.send(11, payload: 300, to: fixture.internetV4, fromRight: true)

        let scopes = try fixture.leftScopes()
        #expect(scopes[.local] == Traffic(rxBytes: Self.frames4(7, 1200), txBytes: Self.frames4(20, 900), rxPackets: 7, txPackets: 20))
        #expect(scopes[.internet] == Traffic(rxBytes: Self.frames4(11, 300), txBytes: Self.frames4(30, 500), rxPackets: 11, txPackets: 30))
        #expect(scopes[.unknown] == nil)
        let link = try fixture.leftCounters()
        let grown = link - before
        #expect(scopes.values.reduce(Traffic.zero, +) == grown, "the end's own counters, to the byte")
    }

    @Test("IPv6: internet exact; local, internet and unknown add up to the veth end's counters")
    func exactIPv6() throws {
        let fixture = try ScopeFixture(subnet: 92)
        try fixture.enableIPv6()
        try fixture.attachApps()
        try LocalPrefixMap(pinDirectory: fixture.pins).write(fixture.prefixes)
        try fixture.attachLeft()
        // After the attach, both read at one moment: the kernel's own messages come and go.
        let before = try fixture.leftSnapshot()
        let right = try #require(fixture.localV6).right
        try fixture.send(12, payload: 1000, to: right)
        try fixture.send(9, payload: 700, to: fixture.internetV6)
        try fixture.send(5, payload: 400, to: fixture.internetV6, fromRight: true)

        let after = try fixture.leftSnapshot()
        func grown(_ scope: TrafficScope) -> Traffic { (after.scopes[scope] ?? .zero) - (before.scopes[scope] ?? .zero) }
        #expect(grown(.internet) == Traffic(rxBytes: Self.frames6(5, 400), txBytes: Self.frames6(9, 700), rxPackets: 5, txPackets: 9))
        // The kernel's own neighbour and multicast messages (link-local, multicast) are local too.
        #expect(grown(.local).txBytes >= Self.frames6(12, 1000) && grown(.local).txPackets >= 12)
        #expect(grown(.unknown) == .zero)
        #expect(grown(.local) + grown(.internet) == after.link - before.link, "the end's own counters, to the byte")
    }

    @Test("before the prefixes are written everything is unknown; after, it is classified")
    func unknownBeforeReady() throws {
        let fixture = try ScopeFixture(subnet: 93)
        try fixture.attachApps()
        try fixture.attachLeft()
        try fixture.send(4, payload: 100, to: fixture.internetV4)
        #expect(try fixture.leftScopes() == [.local: .zero, .internet: .zero,
                                             .unknown: Traffic(txBytes: Self.frames4(4, 100), txPackets: 4)])
        let map = try LocalPrefixMap(pinDirectory: fixture.pins)
        #expect(try map.isReady() == false)
        try map.write(fixture.prefixes)
        #expect(try map.isReady())
        try fixture.send(3, payload: 100, to: fixture.internetV4)
        #expect(try fixture.leftScopes()[.internet] == Traffic(txBytes: Self.frames4(3, 100), txPackets: 3))
    }

    @Test("the cgroup program keys each application's traffic by scope: local, internet, unknown before ready")
    func cgroupScopes() throws {
        let fixture = try ScopeFixture(subnet: 94, cgroups: ["early", "app"])
        try fixture.attachApps()
        try fixture.send(2, payload: 50, to: fixture.pair.rightAddress, cgroup: "early")
        try LocalPrefixMap(pinDirectory: fixture.pins).write(fixture.prefixes)
        try fixture.send(5, payload: 200, to: fixture.pair.rightAddress, cgroup: "app")
        try fixture.send(6, payload: 300, to: fixture.internetV4, cgroup: "app")

        let dump = try AppCounterMaps(pinDirectory: fixture.pins).read()
        let early = try fixture.apps.id("early"), app = try fixture.apps.id("app")
        let left = try fixture.apps.ifindex(left: true)
        #expect(left == (try fixture.apps.ifindex(left: false)), "both ends have the same index, each in its namespace")
        func entry(_ id: UInt64, _ scope: TrafficScope) -> AppTraffic? {
            dump.entries.first { $0.cgroupID == id && $0.ifindex == left && $0.scope == scope }?.traffic
        }
        // IP packets at the cgroup hooks: payload, 8 and 20; the sender's and the receiver's
        // (same cgroup, same index) in one entry, each end classifying alike.
        func both(_ count: UInt64, _ bytes: UInt64) -> AppTraffic {
            AppTraffic(rxBytes: count * bytes, rxPackets: count, txBytes: count * bytes, txPackets: count)
        }
        #expect(entry(early, .unknown) == both(2, 78))
        #expect(entry(app, .local) == both(5, 228))
        #expect(entry(app, .internet) == both(6, 328))
        #expect(dump.entries.count == 3)
        let maps = try AppCounterMaps(pinDirectory: fixture.pins, writable: true)
        #expect(try maps.take(cgroupID: app, ifindex: left, scope: .internet) == both(6, 328))
        #expect(try maps.take(cgroupID: app, ifindex: left, scope: .internet) == nil)
    }

    @Test("attach is idempotent (nothing counted twice); the pins of an interface that is gone are removed, its entries too")
    func idempotentAndPruned() throws {
        let fixture = try ScopeFixture(subnet: 95)
        try fixture.attachApps()
        try LocalPrefixMap(pinDirectory: fixture.pins).write(fixture.prefixes)
        try fixture.attachLeft()
        #expect(try fixture.attachLeft() == .init(linksMade: 0, pinsPruned: 0))
        let before = try fixture.leftCounters()
        try fixture.send(10, payload: 100, to: fixture.pair.rightAddress)
        #expect(try fixture.leftCounters().txBytes - before.txBytes == Self.frames4(10, 100), "counted once")
        #expect(try fixture.leftScopes()[.local] == Traffic(txBytes: Self.frames4(10, 100), txPackets: 10))

        try fixture.pair.left.ip("link", "add", "gone0", "type", "veth", "peer", "name", "gone1")
        let gone = try #require(Int32(try fixture.pair.left.exec(["cat", "/sys/class/net/gone0/ifindex"])
            .trimmingCharacters(in: .whitespacesAndNewlines)))
        let pins = fixture.pins
        _ = try fixture.pair.left.inside { try InterfaceScopeProgram.attach(ifindex: gone, pinDirectory: pins) }
        #expect(access(pins + "/tcx_\(gone)_ingress", F_OK) == 0 && access(pins + "/tcx_\(gone)_egress", F_OK) == 0)
        #expect(try ScopeCounterMaps(pinDirectory: pins).read().covers(gone))
        try fixture.pair.left.ip("link", "delete", "gone0")
        #expect(try fixture.attachLeft() == .init(linksMade: 0, pinsPruned: 2))
        #expect(access(pins + "/tcx_\(gone)_ingress", F_OK) != 0 && access(pins + "/tcx_\(gone)_egress", F_OK) != 0)
        let counts = try ScopeCounterMaps(pinDirectory: pins).read()
        let left = try fixture.apps.ifindex(left: true)
        #expect(!counts.covers(gone) && counts.covers(left))

        let missing = try #require(throws: KernelError.self) {
            try fixture.pair.left.inside { try InterfaceScopeProgram.attach(ifindex: 9999, pinDirectory: pins) }
        }
        #expect(missing.errno == ENODEV, "\(missing)")
        #expect(try !ScopeCounterMaps(pinDirectory: pins).read().covers(9999), "no entries for an interface not covered")
        #expect(access(pins + "/tcx_9999_ingress", F_OK) != 0)
    }

    @Test("eight helpers asked for the same interface at once: every one answers ok, and it is covered, once")
    func concurrentAttach() throws {
        let fixture = try ScopeFixture(subnet: 96)
        try fixture.attachApps()
        try fixture.pair.left.ip("link", "add", "race0", "type", "veth", "peer", "name", "race1")
        let ifindex = try fixture.pair.left.exec(["cat", "/sys/class/net/race0/ifindex"]).trimmingCharacters(in: .whitespacesAndNewlines)
        let directory = try TemporaryDirectory()
        try "apps_pins = \(fixture.pins)\n".write(toFile: directory.path + "/test.conf", atomically: true, encoding: .utf8)
        let results = Mutex<[CommandResult]>([])
        let command = ["ip", "netns", "exec", fixture.pair.left.name, DaemonProcess.binary, "--attach-link", ifindex,
                       "--config", directory.path + "/test.conf"]
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let result = (try? Command.run(command))
                ?? CommandResult(status: -1, stdout: "", stderr: "not run")
            results.withLock { $0.append(result) }
        }
        for result in results.withLock({ $0 }) { #expect(result.status == 0, "\(result.stdout) \(result.stderr)") }
        #expect(try ScopeCounterMaps(pinDirectory: fixture.pins).read().covers(Int32(ifindex)!), "its entries were made, and kept")
        #expect(access(fixture.pins + "/tcx_\(ifindex)_ingress", F_OK) == 0 && access(fixture.pins + "/tcx_\(ifindex)_egress", F_OK) == 0)
    }

    @Test("every datagram arrives with both programs on both sides of the pair, at full rate")
    func neverDrops() throws {
        let fixture = try ScopeFixture(subnet: 96, cgroups: ["app"])
        try fixture.attachApps()
        try LocalPrefixMap(pinDirectory: fixture.pins).write(fixture.prefixes)
        try fixture.attachLeft()
        // Each is received before the next is sent: one lost ends the script with a timeout.
        try fixture.send(3000, payload: 1400, to: fixture.internetV4, cgroup: "app")
        try fixture.send(3000, payload: 1400, to: fixture.internetV4, fromRight: true, cgroup: "app")
        #expect(try fixture.leftScopes()[.internet] == Traffic(rxBytes: Self.frames4(3000, 1400), txBytes: Self.frames4(3000, 1400),
                                                              rxPackets: 3000, txPackets: 3000))
    }

    @Test("the prefix map is written as a difference, and read back as written")
    func prefixDiff() throws {
        let fixture = try ScopeFixture(subnet: 97)
        try fixture.attachApps()
        let map = try LocalPrefixMap(pinDirectory: fixture.pins)
        let a = LocalPrefix(parsing: "10.1.0.0/16")!, b = LocalPrefix(parsing: "fd12::/48")!
        let c = LocalPrefix(parsing: "192.168.7.9")!
        #expect(try map.write([a, b]) == .init(added: 2, removed: 0))
        #expect(try map.read() == [a, b])
        #expect(try map.write([b, c]) == .init(added: 1, removed: 1))
        #expect(try map.read() == [b, c])
        #expect(try map.write([b, c]) == .init(added: 0, removed: 0))
        let tooMany = Set((0..<(map.capacity + 1)).map { LocalPrefix(bytes: [10, UInt8($0 >> 8 & 0xFF), UInt8($0 & 0xFF), 0], length: 24 + ($0 >> 16))! })
        #expect(throws: KernelError.self) { try map.write(tooMany) }
        #expect(try map.read() == [b, c], "a write refused changes nothing")
    }

    @Test("a pin directory of the previous release (no scopes' pins) is another layout")
    func previousRelease() throws {
        let fixture = try ScopeFixture(subnet: 98)
        try fixture.attachApps()
        for pin in ["local_prefixes", "scope_ready", "link_scopes", "tcx_ingress_program", "tcx_egress_program"] {
            #expect(unlink(fixture.pins + "/" + pin) == 0)
        }
        let old = try #require(throws: KernelError.self) { try AppCounterMaps(pinDirectory: fixture.pins) }
        #expect(old.errno == EPROTO, "\(old)")
    }
}
}
