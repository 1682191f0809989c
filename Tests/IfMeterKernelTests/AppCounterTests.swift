import Foundation
import IfMeterKernel
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The application counter's BPF program against the real kernel: what it counts, for whom, on
/// which interface, to the byte; that it never drops a packet, even with its map full; that its
/// pins outlive the process that attached it; and that its maps open for their owner alone.
/// Serialized: one test's count of the process's BPF descriptors must not see another's.
@Suite("The application counter against the kernel",
       .enabled(if: AppCounterFixture.available, AppCounterFixture.skipReason),
       .serialized, .ownThread, .timeLimit(.minutes(5)))
struct AppCounterTests {
    /// An IPv4 UDP datagram's IP packet: payload, 8 bytes of UDP and 20 of IPv4.
    static func ipv4(_ datagrams: Int, payload: Int) -> UInt64 { UInt64(datagrams * (payload + 28)) }

    @Test("a sender's and a receiver's cgroups are counted to the byte, each on its interface, by the cgroup's inode")
    func exactCounts() throws {
        let fixture = try AppCounterFixture(children: ["sender", "receiver"], subnet: 81)
        let descriptors = bpfDescriptors()
        try fixture.attach()
        #expect(bpfDescriptors() == descriptors, "attach keeps nothing open: the pins hold it")
        let datagrams = 25, payload = 1000
        try fixture.send(payload: payload, receiver: "receiver", senders: [("sender", datagrams)])

        let maps = try AppCounterMaps(pinDirectory: fixture.pins, writable: true)
        let dump = try maps.read()
        let bytes = Self.ipv4(datagrams, payload: payload)
        let sent = AppCounterEntry(cgroupID: try fixture.id("sender"), ifindex: try fixture.ifindex(left: true),
                                   traffic: AppTraffic(txBytes: bytes, txPackets: UInt64(datagrams)), ancestorID: try fixture.id("sender"))
        let received = AppCounterEntry(cgroupID: try fixture.id("receiver"), ifindex: try fixture.ifindex(left: false),
                                       traffic: AppTraffic(rxBytes: bytes, rxPackets: UInt64(datagrams)),
                                       ancestorID: try fixture.id("receiver"))
        // Each entry names its cgroup's ancestor two levels below the root: here the cgroup itself.
        #expect(Set(dump.entries) == [sent, received])
        #expect(dump.overflow.isEmpty && dump.lost == AppTraffic())
        #expect(dump.mapID == maps.mapID && dump.maxEntries == Int(AppCounterProgram.defaultMaxEntries))

        #expect(try maps.take(cgroupID: sent.cgroupID, ifindex: sent.ifindex) == sent.traffic)
        #expect(try maps.take(cgroupID: sent.cgroupID, ifindex: sent.ifindex) == nil)
        #expect(try maps.read().entries == [received])
    }

    @Test("IPv6: each datagram is its payload, 8 bytes of UDP and 40 of IPv6")
    func exactCountsIPv6() throws {
        let fixture = try AppCounterFixture(children: ["sender", "receiver"], subnet: 85)
        let address = try fixture.enableIPv6()
        try fixture.attach()
        let datagrams = 12, payload = 1200
        try fixture.send(payload: payload, receiver: "receiver", senders: [("sender", datagrams)], to: address)

        let dump = try AppCounterMaps(pinDirectory: fixture.pins).read()
        let bytes = UInt64(datagrams * (payload + 48))
        #expect(Set(dump.entries) == [
            AppCounterEntry(cgroupID: try fixture.id("sender"), ifindex: try fixture.ifindex(left: true),
                            traffic: AppTraffic(txBytes: bytes, txPackets: UInt64(datagrams)), ancestorID: try fixture.id("sender")),
            AppCounterEntry(cgroupID: try fixture.id("receiver"), ifindex: try fixture.ifindex(left: false),
                            traffic: AppTraffic(rxBytes: bytes, rxPackets: UInt64(datagrams)), ancestorID: try fixture.id("receiver")),
        ])
    }

    @Test("with app_counts full, every datagram still arrives, and what did not fit is in app_overflow, exactly")
    func neverDrops() throws {
        let fixture = try AppCounterFixture(children: ["first", "second", "receiver"], subnet: 82)
        try fixture.attach(maxEntries: 1)
        let payload = 600
        // The first sender's first packet takes the one entry; everything after overflows.
        try fixture.send(payload: payload, receiver: "receiver", senders: [("first", 10), ("second", 15)])

        let dump = try AppCounterMaps(pinDirectory: fixture.pins).read()
        let left = try fixture.ifindex(left: true), right = try fixture.ifindex(left: false)
        #expect(dump.maxEntries == 1)
        #expect(dump.entries == [AppCounterEntry(cgroupID: try fixture.id("first"), ifindex: left,
                                                 traffic: AppTraffic(txBytes: Self.ipv4(10, payload: payload), txPackets: 10),
                                                 ancestorID: try fixture.id("first"))])
        var overflow: [Int32: AppTraffic] = [:]
        overflow[left, default: AppTraffic()].txBytes += Self.ipv4(15, payload: payload)
        overflow[left, default: AppTraffic()].txPackets += 15
        overflow[right, default: AppTraffic()].rxBytes += Self.ipv4(25, payload: payload)
        overflow[right, default: AppTraffic()].rxPackets += 25
        #expect(dump.overflow == overflow)
        #expect(dump.lost == AppTraffic())
    }

    @Test("with app_overflow full too, every datagram still arrives, and what fit nowhere is in app_lost, exactly")
    func lostWhenBothAreFull() throws {
        let fixture = try AppCounterFixture(children: ["first", "second", "receiver"], subnet: 86)
        try fixture.attach(maxEntries: 1, overflowEntries: 1)
        let payload = 300
        // The veth end takes app_counts' one entry (the first sender) and app_overflow's (the
        // receiver); loopback (ifindex 1, never a veth's) finds both full.
        try fixture.send(payload: payload, receiver: "receiver", senders: [("first", 4)])
        try fixture.send(payload: payload, receiver: "receiver", senders: [("second", 6)], to: "127.0.0.1")

        let dump = try AppCounterMaps(pinDirectory: fixture.pins).read()
        let left = try fixture.ifindex(left: true), right = try fixture.ifindex(left: false)
        #expect(left != 1 && right != 1)
        #expect(dump.entries == [AppCounterEntry(cgroupID: try fixture.id("first"), ifindex: left,
                                                 traffic: AppTraffic(txBytes: Self.ipv4(4, payload: payload), txPackets: 4),
                                                 ancestorID: try fixture.id("first"))])
        #expect(dump.overflow == [right: AppTraffic(rxBytes: Self.ipv4(4, payload: payload), rxPackets: 4)])
        #expect(dump.lost == AppTraffic(rxBytes: Self.ipv4(6, payload: payload), rxPackets: 6,
                                        txBytes: Self.ipv4(6, payload: payload), txPackets: 6))
    }

    @Test("the pins keep counting with no process behind them; a second attach is refused and counts nothing twice; detach stops it")
    func pinsOutliveTheAttacher() throws {
        let fixture = try AppCounterFixture(children: ["sender", "receiver"], subnet: 83)
        try fixture.attach()
        let again = try #require(throws: KernelError.self) { try fixture.attach() }
        #expect(again.errno == EEXIST, "\(again)")
        #expect(again.description.contains("detach it first"), "\(again)")

        try fixture.send(payload: 100, receiver: "receiver", senders: [("sender", 7)])
        let maps = try AppCounterMaps(pinDirectory: fixture.pins)
        let sender = try fixture.id("sender")
        let counted = try maps.read().entries.first { $0.cgroupID == sender }
        #expect(counted?.traffic == AppTraffic(txBytes: Self.ipv4(7, payload: 100), txPackets: 7))

        try AppCounterProgram.detach(pinDirectory: fixture.pins)
        #expect(access(fixture.pins, F_OK) != 0, "the pins and their directory are gone")
        try fixture.send(payload: 100, receiver: "receiver", senders: [("sender", 5)])
        // The map lives on through this descriptor, but no program adds to it any more.
        #expect(try maps.read().entries.first { $0.cgroupID == sender } == counted)
        let gone = try #require(throws: KernelError.self) { try AppCounterMaps(pinDirectory: fixture.pins) }
        #expect(gone.errno == ENOENT, "\(gone)")
    }

    @Test("an attach that fails says why, in libbpf's words where it has them, and leaves nothing behind")
    func failureSaysWhy() throws {
        let fixture = try AppCounterFixture(children: [], subnet: 87)
        let plain = try TemporaryDirectory()
        let notBPF = try #require(throws: KernelError.self) {
            try AppCounterProgram.attach(cgroupRoot: fixture.cgroup, pinDirectory: plain.path + "/pins", owner: (0, 0))
        }
        #expect(notBPF.errno == EINVAL && notBPF.description.contains("libbpf: ") && notBPF.description.contains("BPF FS")
                && notBPF.description.hasSuffix("; mount one: mount -t bpf bpf /sys/fs/bpf"),
                "\(notBPF)")
        #expect(access(plain.path + "/pins", F_OK) != 0, "the pin directory it made is gone again")

        let noCgroup = try #require(throws: KernelError.self) {
            try AppCounterProgram.attach(cgroupRoot: fixture.cgroup + "/missing", pinDirectory: fixture.pins, owner: (0, 0))
        }
        #expect(noCgroup.errno == ENOENT && noCgroup.description.hasPrefix(
            "attach the application counter to \(fixture.cgroup)/missing, pinned in \(fixture.pins) failed: "), "\(noCgroup)")
        #expect(noCgroup.description.contains("cgroup2"), "\(noCgroup)")
        #expect(access(fixture.pins, F_OK) != 0)
    }

    @Test("a process with no capability opens the maps when their pins are its own, and not otherwise")
    func ownerOpens() throws {
        let fixture = try AppCounterFixture(children: [], subnet: 84)
        let nobody: UInt32 = 65534
        try fixture.attach(owner: (nobody, nobody))
        #expect(try Self.openAsNobody(fixture.pins + "/app_counts") == 0)
        #expect(try Self.openAsNobody(fixture.pins + "/link_ingress") == EACCES, "the links are root's")

        try AppCounterProgram.detach(pinDirectory: fixture.pins)
        try fixture.attach()
        #expect(try Self.openAsNobody(fixture.pins + "/app_counts") == EACCES)
        #expect(try Self.openAsNobody(fixture.pins + "/app_overflow") == EACCES)
    }

    /// BPF_OBJ_GET of `path`, read-only, as nobody (runuser: every uid 65534, no capability).
    /// 0 when it opened, or the errno.
    static func openAsNobody(_ path: String) throws -> Int32 {
        let script = """
            import ctypes, platform, struct, sys
            libc = ctypes.CDLL(None, use_errno=True)
            number = {"x86_64": 321, "aarch64": 280}[platform.machine()]
            path = ctypes.create_string_buffer(sys.argv[1].encode())
            # union bpf_attr for BPF_OBJ_GET (7): pathname, bpf_fd, file_flags (BPF_F_RDONLY)
            attr = ctypes.create_string_buffer(struct.pack("=QII", ctypes.addressof(path), 0, 1 << 3), 24)
            fd = libc.syscall(ctypes.c_long(number), ctypes.c_int(7), attr, ctypes.c_uint(24))
            print(0 if fd >= 0 else ctypes.get_errno())
            """
        let output = try Command.check(["runuser", "-u", "nobody", "--", AppCounterFixture.python, "-c", script, path])
        return try #require(Int32(output.trimmingCharacters(in: .whitespacesAndNewlines)), "\(output)")
    }
}

@Suite("The cgroup2 mount point", .ownThread, .timeLimit(.minutes(1)))
struct Cgroup2MountTests {
    @Test("found in the hybrid layout, on a pure-v2 machine, with an escaped name; nil without one")
    func mountPoints() {
        let hybrid = """
            25 30 0:23 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
            26 25 0:24 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:8 - tmpfs tmpfs ro,mode=755
            27 26 0:25 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate
            28 26 0:26 / /sys/fs/cgroup/cpu rw,nosuid shared:10 - cgroup cgroup rw,cpu
            """
        #expect(Cgroup2.mountPoint(inMountinfo: hybrid) == "/sys/fs/cgroup/unified")
        let pure = "30 1 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw\n"
        #expect(Cgroup2.mountPoint(inMountinfo: pure) == "/sys/fs/cgroup")
        let bindFirst = """
            40 1 0:26 /machine.slice /srv/a\\040b rw shared:4 - cgroup2 cgroup2 rw
            41 1 0:26 / /mnt/cgroup\\040v2 rw - cgroup2 none rw
            """
        #expect(Cgroup2.mountPoint(inMountinfo: bindFirst) == "/mnt/cgroup v2")
        #expect(Cgroup2.mountPoint(inMountinfo: String(bindFirst.prefix { $0 != "\n" })) == "/srv/a b")
        #expect(Cgroup2.mountPoint(inMountinfo: "28 26 0:26 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n") == nil)
    }

    @Test("this machine's, read from /proc/self/mountinfo, is a directory with an id",
          .enabled(if: FileManager.default.fileExists(atPath: "/sys/fs/cgroup/cgroup.controllers")
                   || FileManager.default.fileExists(atPath: "/sys/fs/cgroup/unified/cgroup.controllers"),
                   "no cgroup2 hierarchy mounted"))
    func thisMachine() throws {
        let point = try Cgroup2.mountPoint()
        #expect(FileManager.default.fileExists(atPath: point + "/cgroup.procs"))
        #expect(try Cgroup2.id(ofDirectory: point) > 0)
    }
}
