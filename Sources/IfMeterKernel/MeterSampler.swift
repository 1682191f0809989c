import IfMeterCore

/// Feeds a ``Meter`` from the kernel in the order DESIGN §3 requires: before a sample's
/// counters are applied, every link event already queued is applied, so a sample never runs
/// ahead of a deletion, re-creation or rename the kernel has announced. An overflowed event
/// socket forces a full `RTM_GETLINK` resync.
///
/// Its sockets belong to the network namespace of the thread that created it.
public final class MeterSampler {
    public private(set) var meter: Meter
    private let dumps: NetlinkSocket
    public let events: LinkEventSocket

    /// Subscribes to link events first, so nothing that happens during the start dump is missed.
    public init(meter: Meter) throws(KernelError) {
        self.meter = meter
        events = try LinkEventSocket()
        dumps = try NetlinkSocket()
    }

    /// The start dump: resumes, baselines and counts per the meter's rules.
    public func start(at instant: MeterInstant = SystemClock.now()) throws(KernelError) -> MeterOutput {
        let links = try dumps.dumpLinks()
        return meter.start(links: links, at: instant)
    }

    /// Applies every queued link event; resyncs from a full dump if the socket overflowed.
    public func drainEvents(at instant: MeterInstant = SystemClock.now()) throws(KernelError) -> MeterOutput {
        let batch = try events.readEvents()
        var output = MeterOutput()
        for event in batch.events {
            output += meter.apply(event, at: instant)
        }
        if batch.overflowed {
            output += meter.resync(links: try dumps.dumpLinks(), at: instant)
        }
        return output
    }

    /// One periodic sample: queued events first, then a counters-only dump.
    public func sample(at instant: MeterInstant = SystemClock.now()) throws(KernelError) -> MeterOutput {
        var output = try drainEvents(at: instant)
        output += meter.apply(sample: try dumps.dumpCounters(), at: instant)
        return output
    }
}
