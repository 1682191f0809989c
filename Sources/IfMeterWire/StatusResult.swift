import IfMeterCore
import IfMeterJSON

public struct StoreHealth: Hashable, Sendable {
    public var path: String
    /// False while saves fail; counting goes on in memory and saves are retried.
    public var healthy: Bool
    public var lastSaveAt: Double?
    public var error: String?
    /// The last sample whose traffic the last append to the save journal holds (docs/CONFIG.md,
    /// `fold_interval`); nil before the first.
    public var lastJournalAt: Double?

    public init(path: String, healthy: Bool, lastSaveAt: Double?, error: String?, lastJournalAt: Double? = nil) {
        self.path = path
        self.healthy = healthy
        self.lastSaveAt = lastSaveAt
        self.error = error
        self.lastJournalAt = lastJournalAt
    }
}

extension StoreHealth: JSONWritable, JSONReadable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        if let error { w.key("error"); w.string(error) }
        w.key("healthy"); w.bool(healthy)
        if let lastJournalAt { w.key("last_journal_at"); w.number(lastJournalAt) }
        if let lastSaveAt { w.key("last_save_at"); w.number(lastSaveAt) }
        w.key("path"); w.string(path)
        w.endObject()
    }

    public init(reading r: inout JSONReader) throws {
        self.init(path: "", healthy: false, lastSaveAt: nil, error: nil)
        try r.readObject { r, key in
            switch key {
            case "path": path = try r.readString()
            case "healthy": healthy = try r.readBool()
            case "last_save_at": lastSaveAt = try r.readOptionalDouble()
            case "last_journal_at": lastJournalAt = try r.readOptionalDouble()
            case "error": error = try r.readNull() ? nil : try r.readString()
            default: try r.skipValue()
            }
        }
    }
}

public struct LinkEventsHealth: Hashable, Sendable {
    /// `systemd` (passed by `ifmeterd-events.socket`) or `own`.
    public var origin: String
    /// Bytes; what a burst of link events may fill before events are lost.
    public var receiveBuffer: Int
    /// The socket that hears other namespaces' link deletions; nil when nothing is attributed
    /// to owners, or the daemon lacks `CAP_NET_BROADCAST`.
    public var peers: PeerEventsHealth?

    public init(origin: String, receiveBuffer: Int, peers: PeerEventsHealth? = nil) {
        self.origin = origin
        self.receiveBuffer = receiveBuffer
        self.peers = peers
    }
}

/// The peers socket's part of ``LinkEventsHealth``.
public struct PeerEventsHealth: Hashable, Sendable {
    public var origin: String
    public var receiveBuffer: Int
    /// Reads that found it had lost messages (a tenant flooding its namespace's link group, or
    /// a burst larger than the buffer): each labels the owners' links that went then.
    public var losses: Int

    public init(origin: String, receiveBuffer: Int, losses: Int) {
        self.origin = origin
        self.receiveBuffer = receiveBuffer
        self.losses = losses
    }
}

extension LinkEventsHealth: JSONWritable, JSONReadable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("origin"); w.string(origin)
        w.key("receive_buffer"); w.number(receiveBuffer)
        if let peers {
            w.key("peers")
            w.beginObject()
            w.key("origin"); w.string(peers.origin)
            w.key("receive_buffer"); w.number(peers.receiveBuffer)
            w.key("losses"); w.number(peers.losses)
            w.endObject()
        }
        w.endObject()
    }

    public init(reading r: inout JSONReader) throws {
        self.init(origin: "", receiveBuffer: 0)
        try r.readObject { r, key in
            switch key {
            case "origin": origin = try r.readString()
            case "receive_buffer": receiveBuffer = try r.readInt()
            case "peers":
                var peers = PeerEventsHealth(origin: "", receiveBuffer: 0, losses: 0)
                try r.readObject { r, key in
                    switch key {
                    case "origin": peers.origin = try r.readString()
                    case "receive_buffer": peers.receiveBuffer = try r.readInt()
                    case "losses": peers.losses = try r.readInt()
                    default: try r.skipValue()
                    }
                }
                self.peers = peers
            default: try r.skipValue()
            }
        }
    }
}

/// Whether applications are counted (docs/APPS.md), and what says so or why not.
public struct AppsHealth: Hashable, Sendable {
    public var counting: Bool
    /// `map 12: 345 of 65536 entries`, or why applications are not counted.
    public var detail: String

    public init(counting: Bool, detail: String) {
        (self.counting, self.detail) = (counting, detail)
    }
}

extension AppsHealth: JSONWritable, JSONReadable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("counting"); w.bool(counting)
        w.key("detail"); w.string(detail)
        w.endObject()
    }

    public init(reading r: inout JSONReader) throws {
        self.init(counting: false, detail: "")
        try r.readObject { r, key in
            switch key {
            case "counting": counting = try r.readBool()
            case "detail": detail = try r.readString()
            default: try r.skipValue()
            }
        }
    }
}

/// Whether the wall clock is believed for what cannot be undone (docs/METER.md, "When the wall
/// clock moves"): while it is doubted, retention, `retention_owners`, `metrics_keep_absent` and
/// plans' periods and thresholds wait.
public struct ClockHealth: Hashable, Sendable {
    public var trusted: Bool
    /// Wall time (as the doubted clock read it) the doubt began.
    public var doubtedSince: Double?
    /// Why it is doubted, and what waits.
    public var detail: String?

    public init(trusted: Bool, doubtedSince: Double? = nil, detail: String? = nil) {
        (self.trusted, self.doubtedSince, self.detail) = (trusted, doubtedSince, detail)
    }
}

extension ClockHealth: JSONWritable, JSONReadable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        if let detail { w.key("detail"); w.string(detail) }
        if let doubtedSince { w.key("doubted_since"); w.number(doubtedSince) }
        w.key("trusted"); w.bool(trusted)
        w.endObject()
    }

    public init(reading r: inout JSONReader) throws {
        self.init(trusted: false)
        try r.readObject { r, key in
            switch key {
            case "trusted": trusted = try r.readBool()
            case "doubted_since": doubtedSince = try r.readOptionalDouble()
            case "detail": detail = try r.readNull() ? nil : try r.readString()
            default: try r.skipValue()
            }
        }
    }
}

public struct StatusResult: Hashable, Sendable {
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
    /// Whether applications are counted; absent before the first sample.
    public var apps: AppsHealth?
    /// Whether the wall clock is believed; absent before the first sample.
    public var clock: ClockHealth?
    /// Whether interfaces' traffic is split by scope (docs/SCOPES.md); absent with `apps = no`.
    public var scopes: ScopesHealth?

    public init(ready: Bool, version: String, pid: Int32, startedAt: Double, interval: UInt64,
                saveInterval: UInt64, lastSampleAt: Double?, source: String?, interfaces: Int?,
                store: StoreHealth?, socket: String, timeZone: String?, linkEvents: LinkEventsHealth? = nil,
                metrics: String? = nil, apps: AppsHealth? = nil, clock: ClockHealth? = nil, scopes: ScopesHealth? = nil) {
        self.apps = apps
        self.scopes = scopes
        self.clock = clock
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
}

extension StatusResult: JSONWritable, JSONReadable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        if let apps { w.key("apps"); apps.write(to: &w) }
        if let clock { w.key("clock"); clock.write(to: &w) }
        if let interfaces { w.key("interfaces"); w.number(interfaces) }
        w.key("interval"); w.number(interval)
        if let lastSampleAt { w.key("last_sample_at"); w.number(lastSampleAt) }
        if let linkEvents { w.key("link_events"); linkEvents.write(to: &w) }
        if let metrics { w.key("metrics"); w.string(metrics) }
        w.key("pid"); w.number(pid)
        w.key("ready"); w.bool(ready)
        w.key("save_interval"); w.number(saveInterval)
        if let scopes { w.key("scopes"); scopes.write(to: &w) }
        w.key("socket"); w.string(socket)
        if let source { w.key("source"); w.string(source) }
        w.key("started_at"); w.number(startedAt)
        if let store { w.key("store"); store.write(to: &w) }
        if let timeZone { w.key("time_zone"); w.string(timeZone) }
        w.key("version"); w.string(version)
        w.endObject()
    }

    public init(reading r: inout JSONReader) throws {
        self.init(ready: false, version: "", pid: 0, startedAt: 0, interval: 0, saveInterval: 0, lastSampleAt: nil,
                  source: nil, interfaces: nil, store: nil, socket: "", timeZone: nil)
        var hasReady = false
        try r.readObject { r, key in
            switch key {
            case "ready": ready = try r.readBool(); hasReady = true
            case "version": version = try r.readString()
            case "pid": pid = try r.readInt32()
            case "started_at": startedAt = try r.readDouble()
            case "interval": interval = try r.readUInt64()
            case "save_interval": saveInterval = try r.readUInt64()
            case "last_sample_at": lastSampleAt = try r.readOptionalDouble()
            case "source": source = try r.readNull() ? nil : try r.readString()
            case "interfaces": interfaces = try r.readNull() ? nil : try r.readInt()
            case "store": store = try r.readNull() ? nil : try StoreHealth(reading: &r)
            case "socket": socket = try r.readString()
            case "time_zone": timeZone = try r.readNull() ? nil : try r.readString()
            case "link_events": linkEvents = try r.readNull() ? nil : try LinkEventsHealth(reading: &r)
            case "metrics": metrics = try r.readNull() ? nil : try r.readString()
            case "apps": apps = try r.readNull() ? nil : try AppsHealth(reading: &r)
            case "clock": clock = try r.readNull() ? nil : try ClockHealth(reading: &r)
            case "scopes": scopes = try r.readNull() ? nil : try ScopesHealth(reading: &r)
            default: try r.skipValue()
            }
        }
        guard hasReady else { throw missing("ready", in: "a status", r) }
    }
}
