import IfMeterCore

/// Every network namespace the daemon meters, each through a ``LinkFeed`` of its own; the
/// daemon's own namespace is the first. A sample reads each feed's queued events, then each
/// feed's counters, so every namespace keeps events-before-counters order.
public final class LinkFeeds {
    public let feeds: [LinkFeed]

    /// `feeds`, the daemon's own namespace's first.
    public init(_ feeds: [LinkFeed]) {
        precondition(feeds.first?.namespace == .own, "the daemon's own namespace is metered first")
        self.feeds = feeds
    }

    /// The feed of the daemon's own namespace.
    public var own: LinkFeed { feeds[0] }

    /// Every feed's start dump, one after another, and how many messages could not be parsed.
    public func startDump() throws(KernelError) -> (links: [Link], unparseable: Int) {
        var all: (links: [Link], unparseable: Int) = ([], 0)
        for feed in feeds {
            let dump = try feed.startDump()
            if all.links.isEmpty { all.links = dump.links } else { all.links += dump.links }
            all.unparseable += dump.unparseable
        }
        return all
    }

    /// A sample's first half: every feed's queued link events, feed by feed.
    public func readQueuedEvents() throws(KernelError) -> [LinkObservation] {
        var observations: [LinkObservation] = []
        for feed in feeds { observations += try feed.readQueuedEvents() }
        return observations
    }

    /// A sample's second half: every feed's counters (see ``LinkFeed/dumpCounters()`` for the
    /// thread it may run on).
    public func dumpCounters() throws(KernelError) -> [CounterReading] {
        var readings: [CounterReading] = []
        for feed in feeds {
            if readings.isEmpty { readings = try feed.dumpCounters() } else { readings += try feed.dumpCounters() }
        }
        return readings
    }

    /// A whole sample on the calling thread.
    public func sample() throws(KernelError) -> (linkEvents: [LinkObservation], readings: [CounterReading]) {
        (try readQueuedEvents(), try dumpCounters())
    }
}
