/// How far a figure can be trusted: since when it counts, and what broke its continuity.
public struct Continuity: Hashable, Sendable {
    /// Wall time counting began for this name (or the earliest of a sum's members).
    public var since: Double?
    /// Deltas that began a new counter epoch (a reset, a re-creation, a new epoch for a known name).
    public var resets: Int
    /// Times the daemon was not sampling and counted the difference on resume.
    public var gaps: Int
    /// Deltas left out as implausible.
    public var implausibleDropped: Int
    /// `events-lost` events in the window: links that came and went then may be missing.
    public var eventsLost: Int
    /// Part of the figure was imported from vnStat (`imported-vnstat`).
    public var imported: Bool

    public init(since: Double? = nil, resets: Int = 0, gaps: Int = 0, implausibleDropped: Int = 0, eventsLost: Int = 0,
                imported: Bool = false) {
        self.since = since
        self.resets = resets
        self.gaps = gaps
        self.implausibleDropped = implausibleDropped
        self.eventsLost = eventsLost
        self.imported = imported
    }
}

/// The one continuity count: what a bucket, a total or a window accumulates — traffic, and how
/// many resets, gaps and implausible drops happened in it. Every figure ifmeter hands out is a
/// tally, labelled by ``labels(tunnel:eventsLost:)``.
public struct BucketTally: Hashable, Sendable {
    public var traffic = Traffic.zero
    // Counts kept in 32 bits (held at 2^32 − 1): a daemon keeps five pending tallies per busy
    // link, and 48 bytes instead of 64 each is 80 bytes a link (docs/BENCHMARKS.md).
    private var resetCount: UInt32 = 0
    private var gapCount: UInt32 = 0
    private var implausibleCount: UInt32 = 0
    /// Some of it was imported from vnStat.
    public var imported = false

    public var resets: Int {
        get { Int(resetCount) }
        set { resetCount = UInt32(clamping: newValue) }
    }
    public var gaps: Int {
        get { Int(gapCount) }
        set { gapCount = UInt32(clamping: newValue) }
    }
    public var implausible: Int {
        get { Int(implausibleCount) }
        set { implausibleCount = UInt32(clamping: newValue) }
    }

    public init(traffic: Traffic = .zero, resets: Int = 0, gaps: Int = 0, implausible: Int = 0, imported: Bool = false) {
        self.traffic = traffic
        self.resets = resets
        self.gaps = gaps
        self.implausible = implausible
        self.imported = imported
    }

    /// What one meter delta adds: its traffic, and one per reset, gap or implausible flag.
    public init(_ delta: MeterDelta) {
        traffic = delta.traffic
        resets = delta.flags.contains(.reset) ? 1 : 0
        gaps = delta.flags.contains(.gap) ? 1 : 0
        implausible = delta.flags.contains(.implausibleDropped) ? 1 : 0
    }

    /// The labels of a figure with this tally (each label in docs/PROTOCOL.md, "Labels").
    /// - Parameter subject: the name the tally is of; its kind adds what it says of its figures
    ///   (``SubjectKind/countedLabel(_:)``, ``SubjectKind/closingLabel(_:)``): an owner's
    ///   subject counted on the host side is labelled so.
    public func labels(tunnel: Bool, eventsLost: Int = 0, subject: String = "") -> [EstimateLabel] {
        let kind = subject.isEmpty ? nil : SubjectKinds.kind(of: subject)
        var labels = EstimateLabel.labels(base: kind?.kind.baseLabels ?? EstimateLabel.always, tunnel: tunnel, resets: resets, gaps: gaps, implausibleDropped: implausible,
                                          eventsLost: eventsLost, imported: imported,
                                          hostSide: kind.flatMap { $0.kind.countedLabel($0.name) })
        if let closing = kind.flatMap({ $0.kind.closingLabel($0.name) }) { labels.append(closing) }
        return labels
    }

    /// The tally's continuity as answered, with when counting began and the `events-lost`
    /// events in its period.
    public func continuity(since: Double? = nil, eventsLost: Int = 0) -> Continuity {
        Continuity(since: since, resets: resets, gaps: gaps, implausibleDropped: implausible, eventsLost: eventsLost,
                   imported: imported)
    }

    /// A sum that would pass 2^64 − 1 is held there and counted as implausible, so the figure
    /// is labelled instead of the daemon trapping.
    public static func += (lhs: inout BucketTally, rhs: BucketTally) {
        _ = lhs.add(rhs)
    }

    /// Adds `other`; true when a counter had to be held at 2^64 − 1.
    public mutating func add(_ other: BucketTally) -> Bool {
        let (sum, overflowed) = traffic.adding(other.traffic)
        traffic = sum
        resets += other.resets
        gaps += other.gaps
        implausible += other.implausible + (overflowed ? 1 : 0)
        imported = imported || other.imported
        return overflowed
    }
}
