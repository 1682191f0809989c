import IfMeterCore
import IfMeterHistory

/// The estimate log's content for one save window: the events in it, then one estimate per
/// name that had traffic or flags (docs/LOG.md).
public struct LogWindow: Hashable, Sendable {
    public var events: [CounterEvent] = []
    public var estimates: [WindowEstimate] = []

    public init(events: [CounterEvent] = [], estimates: [WindowEstimate] = []) {
        self.events = events
        self.estimates = estimates
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
                        verdicts: SlotTable<Classification>, lostEvents: LostEventTimes) -> LogWindow {
        let byName = Dictionary(links.values.map { ($0.name, $0.key) }) { first, _ in first }
        let lost = lostEvents.count(from: start, to: end.nextUp)
        // The names sorted, each entry then looked up: sorting the entries would copy them all.
        let estimates = writes.traffic.keys.sorted().map { name in
            let entry = writes.traffic[name]!
            return WindowEstimate(name: name, classification: byName[name].flatMap { verdicts[$0] }, start: start, end: end,
                           tally: entry.total, epoch: entry.epoch, eventsLost: lost)
        }
        defer { start = end }
        return LogWindow(events: writes.events, estimates: estimates)
    }
}
