import IfMeterCore

/// Feeds a ``Meter`` from the kernel in the order DESIGN §3 requires: before a sample's
/// counters are applied, every link event already queued is applied, so a sample never runs
/// ahead of a deletion, re-creation or rename the kernel has announced. An overflowed event
/// socket forces a full `RTM_GETLINK` resync.
///
/// Its sockets belong to the network namespace of the thread that created it.
public final class MeterSampler {
    public private(set) var meter: Meter
    /// Every link the kernel has announced, by ifindex: metadata from the start dump and link
    /// events, counters as of their last message (names are never re-read per sample).
    public private(set) var links: [Int32: Link] = [:]
    private let dumps: NetlinkSocket
    public let events: LinkEventSocket
    /// Adds what netlink does not say (the daemon reads link speed from sysfs) to each link
    /// before the meter sees it; runs on dumps and events, never per sample.
    public var annotate: (inout Link) -> Void = { _ in }

    /// Replaces the meter's tunables (a config reload).
    public func reconfigure(_ configuration: MeterConfiguration) {
        meter.configuration = configuration
    }

    /// Subscribes to link events first, so nothing that happens during the start dump is missed.
    public init(meter: Meter, eventSocket: Int32? = nil) throws(KernelError) {
        self.meter = meter
        events = try LinkEventSocket(adopting: eventSocket)
        dumps = try NetlinkSocket()
    }

    /// The start dump: resumes, baselines and counts per the meter's rules.
    public func start(at instant: MeterInstant = SystemClock.now()) throws(KernelError) -> MeterOutput {
        let links = try annotated(dumps.dumpLinks())
        self.links = Dictionary(links.map { ($0.ifindex, $0) }) { _, last in last }
        var output = meter.start(links: links, at: instant)
        if dumps.unparseableInLastDump > 0 {
            output.events.append(CounterEvent(
                kind: .eventsLost, at: instant.wall,
                detail: "\(dumps.unparseableInLastDump) link message(s) of the start dump could not be parsed; "
                    + "those links are not metered until the kernel announces them again"))
        }
        return output
    }

    /// Applies the link events one bounded read takes off the socket (the daemon calls this
    /// whenever the socket is readable, so a burst is taken over several loop turns); resyncs
    /// from a full dump if events were lost.
    public func drainEvents(at instant: MeterInstant = SystemClock.now()) throws(KernelError) -> MeterOutput {
        try drainOnce(at: instant).output
    }

    /// Reads before a sample give up after this many (each up to 1024 messages): far more than
    /// the largest event-socket buffer holds, so only an endless flood reaches it.
    static let maximumReadsBeforeSample = 64

    /// Applies every queued link event, however many reads that takes: a sample must never run
    /// ahead of an event the kernel already announced.
    private func drainAll(at instant: MeterInstant) throws(KernelError) -> MeterOutput {
        var output = MeterOutput()
        for _ in 0..<Self.maximumReadsBeforeSample {
            let (drained, messages) = try drainOnce(at: instant)
            output += drained
            if messages == 0 { break }
        }
        return output
    }

    /// One bounded read: what it applied, and how many messages it took off the socket.
    private func drainOnce(at instant: MeterInstant) throws(KernelError) -> (output: MeterOutput, messages: Int) {
        let batch = try events.readEvents()
        var output = MeterOutput()
        for event in batch.events {
            switch event {
            case .newOrChanged(var link):
                annotate(&link)
                links[link.ifindex] = link
                output += meter.apply(.newOrChanged(link), at: instant)
            case .deleted(let link):
                links[link.ifindex] = nil
                output += meter.apply(event, at: instant)
            }
        }
        if batch.overflowed {
            let dump = try annotated(dumps.dumpLinks())
            links = Dictionary(dump.map { ($0.ifindex, $0) }) { _, last in last }
            let resync = meter.resync(links: dump, at: instant)
            let vanished = resync.events.filter { $0.kind == .vanished }.compactMap(\.interface)
            output.events.append(CounterEvent(
                kind: .eventsLost, at: instant.wall,
                detail: "link events were lost (\(batch.unparseable > 0 ? "\(batch.unparseable) unparseable message(s)" : "the event socket overflowed or a read failed")); "
                    + "resynchronised from a full dump; "
                    + (vanished.isEmpty ? "no known link vanished meanwhile" : "vanished meanwhile: \(vanished.joined(separator: ", "))")
                    + "; traffic of links that came and went between the lost events is not counted"))
            output += resync
        }
        return (output, batch.messages)
    }

    private func annotated(_ links: [Link]) -> [Link] {
        links.map { link in
            var link = link
            annotate(&link)
            return link
        }
    }

    /// One periodic sample: every queued event first, then a counters-only dump.
    public func sample(at instant: MeterInstant = SystemClock.now()) throws(KernelError) -> MeterOutput {
        var output = try drainAll(at: instant)
        output += meter.apply(sample: try dumps.dumpCounters(), at: instant)
        return output
    }
}
