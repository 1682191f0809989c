import IfMeterCore

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

    public var labels: [EstimateLabel] { tally.labels(tunnel: classification?.isTunnel ?? false, eventsLost: eventsLost) }
}

/// Accumulates a window's deltas and events until a save closes it.
struct LogWindowBuilder: Sendable {
    private var start: Double
    private var tallies: [String: (tally: BucketTally, epoch: Epoch)] = [:]
    private var events: [CounterEvent] = []

    init(start: Double) {
        self.start = start
    }

    mutating func add(_ output: MeterOutput) {
        for delta in output.deltas {
            var entry = tallies[delta.name] ?? (BucketTally(), delta.epoch)
            entry.tally += BucketTally(delta)
            entry.epoch = delta.epoch
            tallies[delta.name] = entry
        }
        if events.isEmpty { events = output.events } else { events += output.events }
    }

    /// The window `[start, end)`, and a new one from `end`.
    mutating func close(at end: Double, links: SlotTable<Link>, verdicts: SlotTable<Classification>,
                        lostEvents: LostEventTimes) -> LogWindow {
        let byName = Dictionary(links.values.map { ($0.name, $0.key) }) { first, _ in first }
        let lost = lostEvents.count(from: start, to: end.nextUp)
        let estimates = tallies.sorted { $0.key < $1.key }.map { name, entry in
            WindowEstimate(name: name, classification: byName[name].flatMap { verdicts[$0] }, start: start, end: end,
                           tally: entry.tally, epoch: entry.epoch, eventsLost: lost)
        }
        defer {
            tallies = [:]
            events = []
            start = end
        }
        return LogWindow(events: events, estimates: estimates)
    }
}
