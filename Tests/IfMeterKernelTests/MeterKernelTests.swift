import IfMeterCore
import IfMeterKernel
import IfMeterHistory
import IfMeterService
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The meter service fed by the real kernel through ``LinkFeed``, in namespaces the tests create.
@Suite("Meter against the kernel", .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason), .ownThread, .timeLimit(.minutes(10)))
struct MeterKernelTests {
    /// A feed and the service it feeds, as the daemon wires them; records every event.
    final class KernelMeter {
        let feed: LinkFeed
        var service: MeterService
        var events: [CounterEvent] = []

        init(in namespace: NetworkNamespace) throws {
            feed = try namespace.inside { try LinkFeed() }
            service = MeterService(bootID: try SystemClock.bootID(), configuration: ServiceConfiguration(),
                                   history: ServiceHistory(), at: SystemClock.now().wall)
        }

        func start() throws {
            let dump = try feed.startDump()
            events += service.start(links: dump.links, unparseable: dump.unparseable, at: SystemClock.now()).events
        }

        func sample() throws {
            let read = try feed.sample()
            events += service.ingest(linkEvents: read.linkEvents, readings: read.readings, at: SystemClock.now()).events
        }

        /// A name's total since its history began.
        func totals(_ name: String) -> Traffic {
            service.snapshot().interfaces.first { $0.name == name }?.total.traffic ?? .zero
        }

        var kinds: [CounterEvent.Kind] { events.map(\.kind) }

        /// Applies link events as they arrive until one of `kind` has been produced.
        func drain(until kind: CounterEvent.Kind, seconds: Double = 10) throws {
            let deadline = monotonicMilliseconds() + Int64(seconds * 1000)
            while !events.contains(where: { $0.kind == kind }) {
                let remaining = deadline - monotonicMilliseconds()
                guard remaining > 0 else { throw Timeout(description: "no \(kind) event; got \(kinds)") }
                var poller = pollfd(fd: feed.events.fileDescriptor, events: Int16(POLLIN), revents: 0)
                _ = poll(&poller, 1, Int32(remaining))
                events += service.ingest(linkEvents: try feed.readEvents(), at: SystemClock.now()).events
            }
        }
    }

    @Test("traffic on a tun deleted between two polls is fully counted")
    func tunDeletedBetweenPolls() throws {
        let namespace = try NetworkNamespace()
        let recorder = try KernelMeter(in: namespace)
        let tun = try namespace.inside { try TunDevice(name: "tunm0") }
        try recorder.start()
        #expect(recorder.kinds == [.firstSight, .firstSight])  // lo and tunm0, baselined

        try TunTraffic.push(through: tun, in: namespace, written: 10, writtenPayload: 400,
                            read: 6, readPayload: 100)
        try recorder.sample()
        #expect(recorder.totals("tunm0") == Traffic(rxBytes: 10 * 428, txBytes: 6 * 128, rxPackets: 10, txPackets: 6))

        // More traffic, then the tun is gone before the next poll.
        let receiver = try namespace.inside { try UDPSocket(bindTo: "10.88.0.1", port: 0) }
        let more = TunDevice.udpPacket(from: [10, 88, 0, 2], to: [10, 88, 0, 1], port: receiver.port, payload: 1000)
        for _ in 0..<7 {
            try tun.write(more)
            try receiver.receive(timeoutMilliseconds: 30_000)
        }
        tun.close()
        try recorder.drain(until: .deleted)
        try recorder.sample()
        #expect(recorder.totals("tunm0") == Traffic(
            rxBytes: 10 * 428 + 7 * 1028, txBytes: 6 * 128, rxPackets: 17, txPackets: 6))
        #expect(recorder.kinds.last == .deleted)
        #expect(!recorder.kinds.contains(.reset))
    }

    @Test("a link event queued between a sample's event read and its dump carries older counters: no reset, no phantom bytes")
    func eventOlderThanTheDump() throws {
        let namespace = try NetworkNamespace()
        let recorder = try KernelMeter(in: namespace)
        let tun = try namespace.inside { try TunDevice(name: "tunm2") }
        try recorder.start()
        try TunTraffic.push(through: tun, in: namespace, written: 10, writtenPayload: 400, read: 6, readPayload: 100)

        // The daemon's order: the queued events, then (on another thread) the dump, then the
        // readings applied; the events queued meanwhile are read after them.
        let queued = try recorder.feed.readQueuedEvents()
        try namespace.ip("link", "set", "tunm2", "mtu", "1400")
        let receiver = try namespace.inside { try UDPSocket(bindTo: "10.88.0.1", port: 0) }
        let more = TunDevice.udpPacket(from: [10, 88, 0, 2], to: [10, 88, 0, 1], port: receiver.port, payload: 200)
        for _ in 0..<5 {
            try tun.write(more)
            try receiver.receive(timeoutMilliseconds: 30_000)
        }
        let readings = try recorder.feed.dumpCounters()
        recorder.events += recorder.service.ingest(linkEvents: queued, readings: readings, at: SystemClock.now()).events
        let later = try recorder.feed.readQueuedEvents()
        let older = later.compactMap { observation -> Traffic? in
            guard case .event(.newOrChanged(let link)) = observation, link.name == "tunm2" else { return nil }
            return link.counters.map(Traffic.init)
        }
        let dumped = readings.first { reading in later.contains { observation in
            if case .event(.newOrChanged(let link)) = observation { link.key == reading.key && link.name == "tunm2" } else { false }
        } }.map { Traffic($0.counters) }
        // The setup itself: the event read after the readings is older than them.
        #expect(older.contains { event in dumped.map { !event.isAtLeast($0) } ?? false },
                "the mtu event \(older) should be older than the dump \(String(describing: dumped))")
        recorder.events += recorder.service.ingest(linkEvents: later, at: SystemClock.now()).events
        try recorder.sample()

        #expect(recorder.totals("tunm2") == Traffic(
            rxBytes: 10 * 428 + 5 * 228, txBytes: 6 * 128, rxPackets: 15, txPackets: 6))
        #expect(!recorder.kinds.contains(.reset), "events: \(recorder.kinds)")
    }

    @Test("a tun re-created under the same name starts a new epoch with no phantom bytes")
    func tunRecreated() throws {
        let namespace = try NetworkNamespace()
        let recorder = try KernelMeter(in: namespace)
        try recorder.start()
        let first = try namespace.inside { try TunDevice(name: "tunm1") }
        try TunTraffic.push(through: first, in: namespace, written: 12, writtenPayload: 300,
                            read: 4, readPayload: 50)
        try recorder.sample()
        first.close()
        try recorder.drain(until: .deleted)

        let second = try namespace.inside { try TunDevice(name: "tunm1") }
        try TunTraffic.push(through: second, in: namespace, written: 3, writtenPayload: 900,
                            read: 5, readPayload: 20)
        try recorder.drain(until: .epochStarted)
        try recorder.sample()

        #expect(recorder.totals("tunm1") == Traffic(
            rxBytes: 12 * 328 + 3 * 928, txBytes: 4 * 78 + 5 * 48, rxPackets: 15, txPackets: 9))
        let epochs = Set(recorder.events.filter { $0.interface == "tunm1" }.compactMap(\.ifindex))
        #expect(epochs.count == 2)
        let kinds = recorder.kinds.filter { $0 != .firstSight }
        #expect(kinds == [.appeared, .deleted, .epochStarted])
    }

    @Test("a veth whose peer goes away: no false reset, nothing lost")
    func vethPeerGone() throws {
        let pair = try VethPair(subnet: 81)
        let recorder = try KernelMeter(in: pair.left)
        try recorder.start()
        try pair.sendLeftToRight(count: 30, payload: 100)
        try pair.sendRightToLeft(count: 20, payload: 300)
        try recorder.sample()
        try pair.right.ip("link", "delete", pair.rightName)
        try recorder.drain(until: .deleted)
        try recorder.sample()

        #expect(recorder.totals(pair.leftName) == Traffic(
            rxBytes: 20 * 342, txBytes: 30 * 142, rxPackets: 20, txPackets: 30))
        #expect(!recorder.kinds.contains(.reset))
        #expect(recorder.kinds.last == .deleted)
    }

    @Test("a sample applies every queued link event first, however many reads that takes")
    func sampleDrainsEveryQueuedEvent() throws {
        let namespace = try NetworkNamespace()
        let recorder = try KernelMeter(in: namespace)
        try recorder.start()
        // 600 tun devices made and deleted with nobody reading: about 1200 link messages, more than one
        // bounded read takes (1024).
        try namespace.ipBatch((0..<600).map { "tuntap add mode tun name q\($0)" })
        try namespace.ipBatch((0..<600).map { "tuntap del mode tun name q\($0)" })
        try recorder.sample()
        #expect(recorder.events.filter { $0.kind == .deleted }.count == 600)
        #expect(!recorder.events.contains { $0.kind == .eventsLost })
    }
}
