/// How far a figure can be trusted: since when it counts, and what broke its continuity.
public struct Continuity: Hashable, Sendable, Codable {
    /// Wall time counting began for this name (or the earliest of a sum's members).
    public var since: Double?
    /// Counter restarts in the window: resets, re-creations, new epochs, reboots, vanishings.
    public var resets: Int
    /// Times the daemon was not sampling and counted the difference on resume.
    public var gaps: Int
    /// Deltas left out as implausible.
    public var implausibleDropped: Int
    /// `events-lost` events in the window: links that came and went then may be missing.
    public var eventsLost: Int

    public init(since: Double? = nil, resets: Int = 0, gaps: Int = 0, implausibleDropped: Int = 0, eventsLost: Int = 0) {
        self.since = since
        self.resets = resets
        self.gaps = gaps
        self.implausibleDropped = implausibleDropped
        self.eventsLost = eventsLost
    }

    /// `events_lost` is absent in answers of daemons older than it: zero then.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        since = try container.decodeIfPresent(Double.self, forKey: .since)
        resets = try container.decode(Int.self, forKey: .resets)
        gaps = try container.decode(Int.self, forKey: .gaps)
        implausibleDropped = try container.decode(Int.self, forKey: .implausibleDropped)
        eventsLost = try container.decodeIfPresent(Int.self, forKey: .eventsLost) ?? 0
    }

    enum CodingKeys: String, CodingKey {
        case since, resets, gaps, implausibleDropped = "implausible_dropped", eventsLost = "events_lost"
    }

    /// The events that restart counters; a reboot (no interface) restarts all of them.
    static let resetKinds: Set<CounterEvent.Kind> = [.reset, .recreated, .epochStarted, .vanished, .reboot]
}

/// A labelled figure: traffic in a window, for one interface, one class, or a sum — the only
/// form in which ifmeter hands out numbers (DESIGN §1).
public struct Estimate: Hashable, Sendable, Codable {
    /// Interface name, or nil for a class or a sum.
    public var interface: String?
    /// The interface's class, or the class summed; nil for a sum of several classes.
    public var interfaceClass: InterfaceClass?
    /// Window as wall times, start inclusive, end exclusive.
    public var start: Double
    public var end: Double
    public var traffic: Traffic
    public var continuity: Continuity
    public var labels: [EstimateLabel]

    enum CodingKeys: String, CodingKey {
        case interface, interfaceClass = "class", start, end, traffic, continuity, labels
    }

    /// Classes a sum across interfaces includes unless asked otherwise: loopback is not traffic,
    /// virtual links carry what physical ones also count, tunnels count it twice.
    public static let defaultSumClasses: Set<InterfaceClass> = [.wifi, .cellular, .ethernet, .other]

    /// The estimate for one interface name over `[start, end)`, from the meter's deltas and
    /// events (those outside the window or for other names are ignored).
    public init(
        interface: String, interfaceClass: InterfaceClass, start: Double, end: Double,
        deltas: [MeterDelta], events: [CounterEvent], since: Double?
    ) {
        self.interface = interface
        self.interfaceClass = interfaceClass
        self.start = start
        self.end = end
        let inWindow = { (at: Double) in at >= start && at < end }
        traffic = deltas.filter { $0.name == interface && inWindow($0.at) }
            .reduce(Traffic.zero) { $0 + $1.traffic }
        let relevant = events.filter { inWindow($0.at) && ($0.interface == interface || $0.kind == .reboot) }
        continuity = Continuity(
            since: since,
            resets: relevant.filter { Continuity.resetKinds.contains($0.kind) }.count,
            gaps: relevant.filter { $0.kind == .gap }.count,
            implausibleDropped: relevant.filter { $0.kind == .implausible }.count)
        labels = Self.labels(classes: [interfaceClass], continuity: continuity, excludedClasses: false)
    }

    /// The sum of several estimates over the same window, counting only `classes` (by default
    /// ``defaultSumClasses``, so tunnelled traffic is not counted twice; the labels say so).
    public init(summing estimates: [Estimate], classes: Set<InterfaceClass> = Estimate.defaultSumClasses,
                start: Double, end: Double) {
        let included = estimates.filter { $0.interfaceClass.map(classes.contains) ?? false }
        interface = nil
        let presentClasses = Set(included.compactMap(\.interfaceClass))
        interfaceClass = presentClasses.count == 1 ? presentClasses.first : nil
        self.start = start
        self.end = end
        traffic = included.reduce(Traffic.zero) { $0 + $1.traffic }
        continuity = Continuity(
            since: included.compactMap(\.continuity.since).min(),
            resets: included.map(\.continuity.resets).reduce(0, +),
            gaps: included.map(\.continuity.gaps).reduce(0, +),
            implausibleDropped: included.map(\.continuity.implausibleDropped).reduce(0, +))
        let excluded = !Set(estimates.compactMap(\.interfaceClass)).isSubset(of: classes)
        labels = Self.labels(classes: classes, continuity: continuity, excludedClasses: excluded)
    }

    static func labels(classes: Set<InterfaceClass>, continuity: Continuity, excludedClasses: Bool)
        -> [EstimateLabel]
    {
        var labels = EstimateLabel.labels(
            tunnel: classes.contains(.tunnel), resets: continuity.resets, gaps: continuity.gaps,
            implausibleDropped: continuity.implausibleDropped)
        if excludedClasses { labels.append(.excludesLoopbackVirtualTunnel) }
        return labels
    }

    /// The one-line footnote for human output.
    public var footnote: String {
        var notes: [String] = []
        if labels.contains(.resetInPeriod) { notes.append("counters restarted in this period") }
        if labels.contains(.gapInPeriod) { notes.append("includes traffic counted after a pause in sampling") }
        if labels.contains(.implausibleDropped) { notes.append("an implausible jump was left out") }
        if labels.contains(.excludesLoopbackVirtualTunnel) {
            notes.append("sum excludes loopback, virtual and tunnel interfaces")
        }
        return notes.isEmpty
            ? EstimateLabel.footnote
            : EstimateLabel.footnote + " Here: " + notes.joined(separator: "; ") + "."
    }
}
