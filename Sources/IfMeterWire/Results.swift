import IfMeterCore

/// Result shapes of the socket API (docs/PROTOCOL.md). Times are Unix seconds; byte and
/// packet counts are integers; absent keys mean "not known", never zero.

public struct StoreHealth: Codable, Hashable, Sendable {
    public var path: String
    /// False while saves fail; counting goes on in memory and saves are retried.
    public var healthy: Bool
    public var lastSaveAt: Double?
    public var error: String?

    public init(path: String, healthy: Bool, lastSaveAt: Double?, error: String?) {
        self.path = path
        self.healthy = healthy
        self.lastSaveAt = lastSaveAt
        self.error = error
    }

    enum CodingKeys: String, CodingKey { case path, healthy, lastSaveAt = "last_save_at", error }
}

public struct StatusResult: Codable, Hashable, Sendable {
    public var ready: Bool
    public var version: String
    public var pid: Int32
    public var startedAt: Double
    public var interval: UInt64
    public var saveInterval: UInt64
    public var lastSampleAt: Double?
    public var source: String?
    public var interfaces: Int?
    public var store: StoreHealth?
    public var socket: String
    /// The zone buckets are cut in: `local` (the daemon's `TZ`) or `utc`.
    public var timeZone: String?
    /// The link-event socket: who made it, and the receive buffer the kernel granted.
    public var linkEvents: LinkEventsHealth?
    /// Where `/metrics` is served (`ADDR:PORT`); absent when it is not.
    public var metrics: String?

    public init(ready: Bool, version: String, pid: Int32, startedAt: Double, interval: UInt64,
                saveInterval: UInt64, lastSampleAt: Double?, source: String?, interfaces: Int?,
                store: StoreHealth?, socket: String, timeZone: String?, linkEvents: LinkEventsHealth? = nil,
                metrics: String? = nil) {
        self.linkEvents = linkEvents
        self.metrics = metrics
        self.ready = ready
        self.version = version
        self.pid = pid
        self.startedAt = startedAt
        self.interval = interval
        self.saveInterval = saveInterval
        self.lastSampleAt = lastSampleAt
        self.source = source
        self.interfaces = interfaces
        self.store = store
        self.socket = socket
        self.timeZone = timeZone
    }

    enum CodingKeys: String, CodingKey {
        case ready, version, pid, startedAt = "started_at", interval, saveInterval = "save_interval"
        case lastSampleAt = "last_sample_at", source, interfaces, store, socket, timeZone = "time_zone"
        case linkEvents = "link_events", metrics
    }
}

public struct LinkEventsHealth: Codable, Hashable, Sendable {
    /// `systemd` (passed by `ifmeterd-events.socket`) or `own`.
    public var origin: String
    /// Bytes; what a burst of link events may fill before events are lost.
    public var receiveBuffer: Int

    public init(origin: String, receiveBuffer: Int) {
        self.origin = origin
        self.receiveBuffer = receiveBuffer
    }

    enum CodingKeys: String, CodingKey { case origin, receiveBuffer = "receive_buffer" }
}

public struct RateResult: Codable, Hashable, Sendable {
    public var rxBytesPerSecond: Double
    public var txBytesPerSecond: Double
    public var smoothedRxBytesPerSecond: Double
    public var smoothedTxBytesPerSecond: Double

    public init(rxBytesPerSecond: Double, txBytesPerSecond: Double, smoothedRxBytesPerSecond: Double,
                smoothedTxBytesPerSecond: Double) {
        self.rxBytesPerSecond = rxBytesPerSecond
        self.txBytesPerSecond = txBytesPerSecond
        self.smoothedRxBytesPerSecond = smoothedRxBytesPerSecond
        self.smoothedTxBytesPerSecond = smoothedTxBytesPerSecond
    }

    enum CodingKeys: String, CodingKey {
        case rxBytesPerSecond = "rx_bytes_per_second", txBytesPerSecond = "tx_bytes_per_second"
        case smoothedRxBytesPerSecond = "smoothed_rx_bytes_per_second"
        case smoothedTxBytesPerSecond = "smoothed_tx_bytes_per_second"
    }
}

/// The kernel counter epoch an interface is in now, with the raw kernel counters last read
/// in it.
public typealias EpochResult = WithTraffic<EpochFields>

public struct EpochFields: Codable, Hashable, Sendable {
    public var bootID: String
    public var ifindex: Int32
    public var generation: Int
    public var since: Double

    public init(bootID: String, ifindex: Int32, generation: Int, since: Double) {
        self.bootID = bootID
        self.ifindex = ifindex
        self.generation = generation
        self.since = since
    }

    enum CodingKeys: String, CodingKey { case bootID = "boot_id", ifindex, generation, since }
}

/// An interface present now, or (`operstate` `absent`, no `ifindex`) a name with history that
/// is not present; its traffic is since the name's history began, across all its epochs.
public typealias InterfaceResult = WithTraffic<InterfaceFields>

public struct InterfaceFields: Codable, Hashable, Sendable {
    public var name: String
    public var ifindex: Int32?
    public var `class`: String
    public var classReason: String
    public var kind: String
    public var operstate: String
    public var epoch: EpochResult?
    public var rate: RateResult?
    public var continuity: Continuity
    public var labels: [String]
    /// When an absent interface was last present.
    public var lastSeen: Double?

    public init(name: String, ifindex: Int32?, class: String, classReason: String, kind: String,
                operstate: String, epoch: EpochResult?, rate: RateResult?, continuity: Continuity, labels: [String],
                lastSeen: Double? = nil) {
        self.name = name
        self.ifindex = ifindex
        self.class = `class`
        self.classReason = classReason
        self.kind = kind
        self.operstate = operstate
        self.epoch = epoch
        self.rate = rate
        self.continuity = continuity
        self.labels = labels
        self.lastSeen = lastSeen
    }

    enum CodingKeys: String, CodingKey {
        case name, ifindex, `class`, classReason = "class_reason", kind, operstate
        case epoch, rate, continuity, labels, lastSeen = "last_seen"
    }
}

public struct InterfacesResult: Codable, Hashable, Sendable {
    public var interfaces: [InterfaceResult]
    public var footnote: String
    public init(interfaces: [InterfaceResult], footnote: String) {
        self.interfaces = interfaces
        self.footnote = footnote
    }
}

/// One period's traffic for an interface or a class.
public typealias UsageRowResult = WithTraffic<UsageRowFields>

public struct UsageRowFields: Codable, Hashable, Sendable {
    public var start: Double
    public var end: Double
    public var continuity: Continuity
    public var labels: [String]

    public init(start: Double, end: Double, continuity: Continuity, labels: [String]) {
        self.start = start
        self.end = end
        self.continuity = continuity
        self.labels = labels
    }
}

public struct ProjectionResult: Codable, Hashable, Sendable {
    public var start: Double
    public var end: Double
    public var elapsedFraction: Double
    public var rxBytes: UInt64
    public var txBytes: UInt64
    public var labels: [String]

    public init(start: Double, end: Double, elapsedFraction: Double, rxBytes: UInt64, txBytes: UInt64,
                labels: [String]) {
        self.start = start
        self.end = end
        self.elapsedFraction = elapsedFraction
        self.rxBytes = rxBytes
        self.txBytes = txBytes
        self.labels = labels
    }

    enum CodingKeys: String, CodingKey {
        case start, end, elapsedFraction = "elapsed_fraction", rxBytes = "rx_bytes", txBytes = "tx_bytes", labels
    }
}

public struct UsageResult: Codable, Hashable, Sendable {
    public var interface: String?
    public var `class`: String?
    public var period: String
    public var rows: [UsageRowResult]
    public var projection: ProjectionResult?
    public var footnote: String

    public init(interface: String?, class: String?, period: String, rows: [UsageRowResult],
                projection: ProjectionResult?, footnote: String) {
        self.interface = interface
        self.class = `class`
        self.period = period
        self.rows = rows
        self.projection = projection
        self.footnote = footnote
    }
}

public struct EventsResult: Codable, Hashable, Sendable {
    public var events: [CounterEvent]
    /// True when events counted since the last save may be missing (a peer other than an
    /// admin asked within 10 s of the last save it forced); absent otherwise.
    public var unsavedNotIncluded: Bool?
    public init(events: [CounterEvent], unsavedNotIncluded: Bool? = nil) {
        self.events = events
        self.unsavedNotIncluded = unsavedNotIncluded
    }

    enum CodingKeys: String, CodingKey {
        case events
        case unsavedNotIncluded = "unsaved_not_included"
    }
}

/// One `watch` stream line after each sample.
public struct RatesResult: Codable, Hashable, Sendable {
    public struct Entry: Codable, Hashable, Sendable {
        public var name: String
        public var rate: RateResult
        public init(name: String, rate: RateResult) {
            self.name = name
            self.rate = rate
        }
    }
    public var at: Double
    public var interfaces: [Entry]
    public init(at: Double, interfaces: [Entry]) {
        self.at = at
        self.interfaces = interfaces
    }
}

public struct SampleResult: Codable, Hashable, Sendable {
    public var sampledAt: Double
    public var interfaces: Int
    public init(sampledAt: Double, interfaces: Int) {
        self.sampledAt = sampledAt
        self.interfaces = interfaces
    }
    enum CodingKeys: String, CodingKey { case sampledAt = "sampled_at", interfaces }
}

public struct AdminResult: Codable, Hashable, Sendable {
    public var done: String
    public init(done: String) { self.done = done }
}

/// The `metrics` answer: the exposition, exactly as `/metrics` would serve it.
public struct MetricsResult: Codable, Hashable, Sendable {
    public var contentType: String
    public var text: String

    public init(contentType: String, text: String) {
        self.contentType = contentType
        self.text = text
    }

    enum CodingKeys: String, CodingKey { case contentType = "content_type", text }
}

/// The `import` answer: what came in (or, with `dry_run`, would), per interface.
public struct ImportResult: Codable, Hashable, Sendable {
    public struct Interface: Codable, Hashable, Sendable {
        public var name: String
        /// New buckets by period (`5min`, `hour`, `day`, `month`, `year`).
        public var buckets: [String: Int]
        public var alreadyImported: Int
        public var overlapSkipped: Int
        public var totalRxBytes: UInt64
        public var totalTxBytes: UInt64
        /// When both meters counted: ifmeter from `overlap_from`, vnStat until `overlap_to`.
        public var overlapFrom: Double?
        public var overlapTo: Double?

        public init(name: String, buckets: [String: Int], alreadyImported: Int, overlapSkipped: Int, totalRxBytes: UInt64,
                    totalTxBytes: UInt64, overlapFrom: Double?, overlapTo: Double?) {
            self.name = name
            self.buckets = buckets
            self.alreadyImported = alreadyImported
            self.overlapSkipped = overlapSkipped
            self.totalRxBytes = totalRxBytes
            self.totalTxBytes = totalTxBytes
            self.overlapFrom = overlapFrom
            self.overlapTo = overlapTo
        }

        enum CodingKeys: String, CodingKey {
            case name, buckets, alreadyImported = "already_imported", overlapSkipped = "overlap_skipped"
            case totalRxBytes = "total_rx_bytes", totalTxBytes = "total_tx_bytes", overlapFrom = "overlap_from", overlapTo = "overlap_to"
        }
    }

    public var source: String
    public var path: String
    public var dryRun: Bool
    public var interfaces: [Interface]

    public init(source: String, path: String, dryRun: Bool, interfaces: [Interface]) {
        self.source = source
        self.path = path
        self.dryRun = dryRun
        self.interfaces = interfaces
    }

    enum CodingKeys: String, CodingKey { case source, path, dryRun = "dry_run", interfaces }
}
