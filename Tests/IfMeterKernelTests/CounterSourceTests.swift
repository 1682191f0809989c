import IfMeterCore
import IfMeterKernel
import IfMeterTestSupport
import Testing

/// The three ways of reading counters agree with the kernel's sysfs, to the byte, for traffic
/// the test generated itself in namespaces it created.
@Suite("Counter sources against the kernel", .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason), .ownThread, .timeLimit(.minutes(10)))
struct CounterSourceTests {
    @Test("veth: netlink link dump, RTM_GETSTATS and getifaddrs equal sysfs for known UDP traffic")
    func vethUDP() throws {
        let pair = try VethPair()
        let datagrams = 250, payload = 1000
        try pair.sendLeftToRight(count: datagrams, payload: payload)
        let wire = UInt64(datagrams * (payload + 42))

        let leftKernel = try sysfsCounters(pair.left, pair.leftName)
        let rightKernel = try sysfsCounters(pair.right, pair.rightName)
        #expect(leftKernel.txBytes == wire && leftKernel.txPackets == UInt64(datagrams))
        #expect(leftKernel.rxBytes == 0 && leftKernel.rxPackets == 0)
        #expect(rightKernel.rxBytes == wire && rightKernel.rxPackets == UInt64(datagrams))

        for (namespace, name, kernel) in [(pair.left, pair.leftName, leftKernel),
                                          (pair.right, pair.rightName, rightKernel)] {
            let (links, readings, fallback) = try namespace.inside {
                let socket = try NetlinkSocket()
                return (try socket.dumpLinks(), try socket.dumpCounters(), try LinkLister.getifaddrsLinks())
            }
            let dumped = try link(named: name, in: links)
            #expect(dumped.counters == kernel)
            #expect(dumped.kind == "veth")
            #expect(dumped.operState == .up)
            #expect(!dumped.countersAre32Bit)
            let reading = try #require(readings.first { $0.ifindex == dumped.ifindex })
            #expect(reading.counters == kernel)
            let viaGetifaddrs = try link(named: name, in: fallback)
            #expect(viaGetifaddrs.ifindex == dumped.ifindex)
            #expect(viaGetifaddrs.countersAre32Bit)
            #expect(viaGetifaddrs.counters == kernel)
            #expect(viaGetifaddrs.address == dumped.address && dumped.address.count == 17)
        }
    }

    @Test("tun: packets the test writes are rx, packets it reads are tx")
    func tunDirections() throws {
        let namespace = try NetworkNamespace()
        let tun = try namespace.inside { try TunDevice(name: "tunt0") }
        try TunTraffic.push(through: tun, in: namespace, written: 40, writtenPayload: 500,
                            read: 30, readPayload: 300)
        let kernel = try sysfsCounters(namespace, "tunt0")
        #expect(kernel.rxPackets == 40 && kernel.rxBytes == 40 * 528)
        #expect(kernel.txPackets == 30 && kernel.txBytes == 30 * 328)

        let (links, readings, fallback) = try namespace.inside {
            let socket = try NetlinkSocket()
            return (try socket.dumpLinks(), try socket.dumpCounters(), try LinkLister.getifaddrsLinks())
        }
        let dumped = try link(named: "tunt0", in: links)
        #expect(dumped.counters == kernel)
        #expect(dumped.kind == "tun" && dumped.arpType == ARPHRD.none && dumped.address.isEmpty)
        #expect(readings.first { $0.ifindex == dumped.ifindex }?.counters == kernel)
        // glibc gives an address-less link a NULL ifa_addr: still listed, type unknown.
        let viaGetifaddrs = try link(named: "tunt0", in: fallback)
        #expect(viaGetifaddrs.counters == kernel)
        #expect(viaGetifaddrs.ifindex == dumped.ifindex && viaGetifaddrs.arpType == ARPHRD.void)
    }

    @Test("1000+ links: every dump returns every link, none truncated")
    func thousandsOfLinks() throws {
        let namespace = try NetworkNamespace()
        let pairs = 520
        try namespace.ipBatch((0..<pairs).map { "link add a\($0) type veth peer name b\($0)" })
        let expected = Set(["lo"] + (0..<pairs).flatMap { ["a\($0)", "b\($0)"] })
        let (links, readings, fallback) = try namespace.inside {
            let socket = try NetlinkSocket()
            return (try socket.dumpLinks(), try socket.dumpCounters(), try LinkLister.getifaddrsLinks())
        }
        #expect(links.count == expected.count)
        #expect(Set(links.map(\.name)) == expected)
        #expect(Set(readings.map(\.ifindex)) == Set(links.map(\.ifindex)))
        #expect(readings.count == links.count)
        #expect(Set(fallback.map(\.name)) == expected)
    }
}
