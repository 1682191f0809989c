/// One instant as the meter sees it: wall time for attributing traffic to calendar buckets, and
/// `CLOCK_BOOTTIME` for elapsed time (rates, plausibility). Boot time is monotonic, so setting
/// the wall clock never moves it, and unlike `CLOCK_MONOTONIC` it keeps counting through
/// suspend, so a laptop waking up is not mistaken for a wall-clock jump.
public struct MeterInstant: Hashable, Sendable {
    /// Seconds since the Unix epoch.
    public var wall: Double
    /// `CLOCK_BOOTTIME` in nanoseconds; comparable only within one boot.
    public var sinceBootNanoseconds: UInt64

    public init(wall: Double, sinceBootNanoseconds: UInt64) {
        self.wall = wall
        self.sinceBootNanoseconds = sinceBootNanoseconds
    }

    /// Seconds of boot time from `earlier` to this instant; 0 if the clock did not advance.
    public func seconds(since earlier: MeterInstant) -> Double {
        guard sinceBootNanoseconds > earlier.sinceBootNanoseconds else { return 0 }
        return Double(sinceBootNanoseconds - earlier.sinceBootNanoseconds) / 1e9
    }
}

/// One unbroken run of an interface's kernel counters (docs/METER.md): a boot, an ifindex, and
/// a generation that moves on when the counters reset in place.
public struct Epoch: Hashable, Sendable {
    public var bootID: String
    public var ifindex: Int32
    public var generation: Int
    /// Wall time the epoch began (or the meter first saw it).
    public var since: Double

    public init(bootID: String, ifindex: Int32, generation: Int = 0, since: Double) {
        self.bootID = bootID
        self.ifindex = ifindex
        self.generation = generation
        self.since = since
    }
}

/// What the meter remembers about one interface it is counting.
public struct TrackedInterface: Hashable, Sendable {
    // In this order the small fields share the padding after the optional speed: 144 bytes a
    // tracked link, not 152.
    public var name: String
    public var kind: String
    public var epoch: Epoch
    /// The raw counters last applied.
    public var last: Traffic
    public var lastInstant: MeterInstant
    public var speedBitsPerSecond: UInt64?
    /// The namespace of the link being counted (not in the coding: the store keeps it in a
    /// column of its own).
    public var namespace: NamespaceID = .own
    public var ifindex: Int32
    public var countersAre32Bit: Bool

    public init(
        name: String, namespace: NamespaceID = .own, ifindex: Int32, kind: String, epoch: Epoch, last: Traffic,
        lastInstant: MeterInstant, countersAre32Bit: Bool = false, speedBitsPerSecond: UInt64? = nil
    ) {
        self.name = name
        self.namespace = namespace
        self.ifindex = ifindex
        self.kind = kind
        self.epoch = epoch
        self.last = last
        self.lastInstant = lastInstant
        self.countersAre32Bit = countersAre32Bit
        self.speedBitsPerSecond = speedBitsPerSecond
    }

    /// The link being counted.
    public var key: LinkKey { LinkKey(namespace, ifindex: ifindex) }
}

/// Everything the meter needs to resume after a restart: export it in the same transaction as
/// the totals it produced, import it on start (docs/METER.md, "Restart").
public struct MeterState: Hashable, Sendable {
    public var bootID: String
    /// The open epochs, in no particular order.
    public var interfaces: [TrackedInterface]
    /// Every name with history, and the wall time its counting began.
    public var firstSeen: DenseTable<String, Double>
    public var lastInstant: MeterInstant?
    /// The last instant the wall clock was believed at (``ClockTrust/anchor``), kept so that a
    /// restart while it is doubted goes on doubting it.
    public var clockAnchor: MeterInstant?

    public init(bootID: String, interfaces: [TrackedInterface], firstSeen: DenseTable<String, Double>,
                lastInstant: MeterInstant?, clockAnchor: MeterInstant? = nil) {
        self.bootID = bootID
        self.interfaces = interfaces
        self.firstSeen = firstSeen
        self.lastInstant = lastInstant
        self.clockAnchor = clockAnchor
    }
}

/// Traffic counted for one interface name, attributed to one wall time.
public struct MeterDelta: Hashable, Sendable {
    public struct Flags: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// The counters restarted before this delta (rules 3, 5, reboot).
        public static let reset = Flags(rawValue: 1)
        /// Counted across a time the daemon was not running (rule 8).
        public static let gap = Flags(rawValue: 2)
        /// A 32-bit counter wrapped (rule 6).
        public static let wrapped = Flags(rawValue: 4)
        /// An implausible delta was left out here (rule 7).
        public static let implausibleDropped = Flags(rawValue: 8)
        /// The interface's final delta, from its deletion (rule 4).
        public static let final = Flags(rawValue: 16)
    }

    public var name: String
    public var namespace: NamespaceID
    public var ifindex: Int32
    public var epoch: Epoch
    public var traffic: Traffic
    /// Wall time the traffic is attributed to.
    public var at: Double
    public var flags: Flags

    public init(name: String, namespace: NamespaceID = .own, ifindex: Int32, epoch: Epoch, traffic: Traffic,
                at: Double, flags: Flags = []) {
        self.name = name
        self.namespace = namespace
        self.ifindex = ifindex
        self.epoch = epoch
        self.traffic = traffic
        self.at = at
        self.flags = flags
    }
}

/// Something that explains why a figure looks the way it does.
public struct CounterEvent: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// Rule 0: a name never seen before, at daemon start: its counters are the baseline.
        case firstSight = "first-sight"
        /// Rule 0: an interface appeared while the daemon runs: counted from zero.
        case appeared
        /// Rules 0, 2: a name with history has a new epoch at daemon start: counted from zero.
        case epochStarted = "epoch-started"
        /// Rule 2: the boot id changed; every epoch of the previous boot closed.
        case reboot
        /// Rule 3: the name came back with a new ifindex; the old epoch closed.
        case recreated
        /// Rule 4: the kernel announced the deletion, with final counters.
        case deleted
        /// Rule 3: the ifindex is gone without a final message; closed at its last values.
        case vanished
        /// Rule 5: counters went backwards with the same ifindex.
        case reset
        /// Rule 6: a 32-bit counter wrapped.
        case wrap
        /// Rule 7: a delta beyond what the link can carry was left out.
        case implausible
        /// Rule 8: counted across a time the daemon was not running.
        case gap
        /// Rule 9: same ifindex, new name.
        case rename
        /// Rule 10: wall time and boot time disagreed.
        case clockJump = "clock-jump"
        /// Link events were lost (the event socket overflowed, a read failed, a message could
        /// not be parsed): state was resynchronised from a full dump, and traffic of links that
        /// came and went meanwhile may be missing.
        case eventsLost = "events-lost"
        /// While the database could not be written, the oldest unsaved 5-minute (then hourly)
        /// buckets were dropped to bound memory; their traffic stays in the coarser buckets.
        case bucketsFolded = "buckets-folded"
        /// A data plan's traffic crossed one of its thresholds in this period (docs/PLANS.md).
        case planThreshold = "plan-threshold"
        /// A data plan's new period began.
        case planPeriodStarted = "plan-period-started"
    }

    public var kind: Kind
    public var at: Double
    public var interface: String?
    /// The namespace of the link it is about (not in the coding: a namespace's links are named
    /// as subjects of their own where they are shown).
    public var namespace: NamespaceID = .own
    public var ifindex: Int32?
    /// Raw counters before and after, where the rule involves them.
    public var previous: Traffic?
    public var current: Traffic?
    /// What was counted (or, for `implausible`, left out).
    public var delta: Traffic?
    public var detail: String
    /// A plan event's figures; nil for every other kind.
    public var plan: PlanEventFacts?

    public init(kind: Kind, at: Double, interface: String? = nil, namespace: NamespaceID = .own, ifindex: Int32? = nil,
                previous: Traffic? = nil, current: Traffic? = nil, delta: Traffic? = nil,
                detail: String, plan: PlanEventFacts? = nil) {
        self.plan = plan
        self.kind = kind
        self.at = at
        self.interface = interface
        self.namespace = namespace
        self.ifindex = ifindex
        self.previous = previous
        self.current = current
        self.delta = delta
        self.detail = detail
    }
}

/// What one input to the meter produced.
public struct MeterOutput: Hashable, Sendable {
    public var deltas: [MeterDelta] = []
    public var events: [CounterEvent] = []

    public init(deltas: [MeterDelta] = [], events: [CounterEvent] = []) {
        self.deltas = deltas
        self.events = events
    }

    public static func += (lhs: inout MeterOutput, rhs: MeterOutput) {
        // An empty side without room reserved takes the other's arrays as they are: at start
        // thousands of events pass through several holders, and appending would copy them into each.
        if lhs.deltas.isEmpty, lhs.deltas.capacity < rhs.deltas.count {
            lhs.deltas = rhs.deltas
        } else {
            lhs.deltas += rhs.deltas
        }
        if lhs.events.isEmpty, lhs.events.capacity < rhs.events.count {
            lhs.events = rhs.events
        } else {
            lhs.events += rhs.events
        }
    }
}

/// The meter's tunables (the config file fills them later).
public struct MeterConfiguration: Hashable, Sendable {
    /// Rule 7: a delta above link speed × elapsed × this margin is implausible.
    public var speedMargin: Double = 2
    /// Rule 7: elapsed time is taken as at least this, since drivers update counters in steps.
    public var minimumCapWindowSeconds: Double = 5
    /// Rule 7: a configured maximum rate, applied to every interface, tun included.
    public var maxBytesPerSecond: UInt64?
    /// Rule 10: wall and boot time may disagree by this much before it is a jump.
    public var clockJumpThresholdSeconds: Double = 5
    /// Time constant of the smoothed rate.
    public var rateSmoothingSeconds: Double = 30

    public init() {}
}
