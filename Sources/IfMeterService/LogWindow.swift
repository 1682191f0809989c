import IfMeterCore
import IfMeterHistory

/// The estimate log's content for one save window: the events in it, then one estimate per
/// name that had traffic or flags (docs/LOG.md).
///
/// The estimates are worked out as they are read, from what the batch holds anyway (its
/// traffic and its snapshot of the links and their classes), not held as estimates for as
/// long as the save takes.
public struct LogWindow: Sendable {
    public var events: [CounterEvent] = []
    public let start: Double
    public let end: Double
    private let traffic: DenseTable<String, PendingTraffic>
    private let links: SlotTable<Link>
    private let verdicts: SlotTable<Classification>
    private let lostEvents: LostEvents

    public init() {
        self.init(events: [], start: 0, end: 0, traffic: DenseTable(), links: SlotTable(), verdicts: SlotTable(),
                  lostEvents: LostEvents())
    }

    init(events: [CounterEvent], start: Double, end: Double, traffic: DenseTable<String, PendingTraffic>,
         links: SlotTable<Link>, verdicts: SlotTable<Classification>, lostEvents: LostEvents) {
        self.events = events
        self.start = start
        self.end = end
        self.traffic = traffic
        self.links = links
        self.verdicts = verdicts
        self.lostEvents = lostEvents
    }

    /// How many estimates the window has.
    public var estimateCount: Int { traffic.count }

    /// Each estimate, by name: the names sorted and walked beside the links sorted by name, so
    /// nothing per name is held but two arrays of positions.
    public func forEachEstimate(_ body: (WindowEstimate) throws -> Void) rethrows {
        let names = traffic.keys.indices.sorted { traffic.keys[$0] < traffic.keys[$1] }
        let present = links.values.indices.sorted { links.values[$0].name < links.values[$1].name }
        var next = present.startIndex
        // Networks and applications are other views of the same bytes (docs/NETWORKS.md,
        // docs/APPS.md): a reader summing the window's records would count them twice.
        for position in names where !SubjectKinds.isAnotherView(traffic.keys[position]) {
            let name = traffic.keys[position]
            while next < present.endIndex, links.values[present[next]].name < name { next += 1 }
            // The first link of a name, as a name is looked up everywhere else.
            let link = next < present.endIndex && links.values[present[next]].name == name ? links.values[present[next]] : nil
            let entry = traffic.values[position]
            try body(WindowEstimate(name: name, classification: link.flatMap { verdicts[$0.key] }, start: start, end: end,
                                    tally: entry.total, epoch: entry.epoch,
                                    eventsLost: lostEvents.count(from: start, to: end.nextUp, for: name)))
        }
    }

    /// Every estimate at once (for tests and small windows).
    public var estimates: [WindowEstimate] {
        var estimates: [WindowEstimate] = []
        estimates.reserveCapacity(estimateCount)
        forEachEstimate { estimates.append($0) }
        return estimates
    }
}

/// One name's traffic in a save window.
public struct WindowEstimate: Hashable, Sendable {
    public var name: String
    /// The class as decided now; nil when the link is no longer present.
    public var classification: Classification?
    public var start: Double
    public var end: Double
    public var tally: BucketTally
    /// The epoch of its last delta in the window.
    public var epoch: Epoch
    public var eventsLost: Int

    public var labels: [EstimateLabel] { tally.labels(tunnel: classification?.isTunnel ?? false, eventsLost: eventsLost, subject: name) }
}

/// Where the estimate log's open window began. Its content is the pending writes: a window is
/// closed by the save that takes them (a failed save's are carried apart, not into the next
/// window), so the same traffic and events are not held twice.
struct LogWindowBuilder: Sendable {
    private var start: Double

    init(start: Double) {
        self.start = start
    }

    /// The window `[start, end)` of `writes`, and a new one from `end`.
    mutating func close(at end: Double, writes: PendingWrites, links: SlotTable<Link>,
                        verdicts: SlotTable<Classification>, lostEvents: LostEvents) -> LogWindow {
        defer { start = end }
        return LogWindow(events: writes.events, start: start, end: end, traffic: writes.traffic, links: links,
                         verdicts: verdicts, lostEvents: lostEvents)
    }
}
