import IfMeterCore
import IfMeterJSON

/// The hand-written JSON form of the results the views live on: written by the daemon and the
/// client's `--json`, read by the client as they arrive. Keys in sorted order, absent optionals
/// left out: byte for byte what ``JSONLineEncoder`` makes of the `Codable` form (a test holds
/// every type to it), so old and new peers read each other.

/// A value written by its own `write(to:)`.
public protocol JSONWritable {
    func write(to writer: inout JSONWriter)
}

/// A value read member by member, unknown members skipped (a newer daemon may add some).
public protocol JSONReadable {
    init(reading reader: inout JSONReader) throws
}

extension JSONWritable {
    /// The value as one JSON text.
    public var jsonBytes: [UInt8] {
        var writer = JSONWriter()
        write(to: &writer)
        return writer.bytes
    }
}

/// A required member that was not in the object.
func missing(_ key: String, in type: String, _ reader: JSONReader) -> JSONReadError {
    JSONReadError("\(type) has no \"\(key)\"", offset: reader.offset)
}

extension JSONWriter {
    /// `rx_bytes` and `rx_packets`: the rx half of a flattened ``Traffic``.
    mutating func rx(_ traffic: Traffic) {
        key("rx_bytes"); number(traffic.rxBytes)
        key("rx_packets"); number(traffic.rxPackets)
    }

    /// `tx_bytes` and `tx_packets`.
    mutating func tx(_ traffic: Traffic) {
        key("tx_bytes"); number(traffic.txBytes)
        key("tx_packets"); number(traffic.txPackets)
    }
}

extension JSONReader {
    /// Reads a flattened ``Traffic`` member into `traffic`; false when `key` is not one.
    mutating func readTraffic(_ key: String, into traffic: inout Traffic) throws -> Bool {
        switch key {
        case "rx_bytes": traffic.rxBytes = try readUInt64()
        case "tx_bytes": traffic.txBytes = try readUInt64()
        case "rx_packets": traffic.rxPackets = try readUInt64()
        case "tx_packets": traffic.txPackets = try readUInt64()
        default: return false
        }
        return true
    }

    mutating func readOptionalDouble() throws -> Double? {
        try readNull() ? nil : try readDouble()
    }
}

extension Continuity: JSONWritable, JSONReadable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("events_lost"); w.number(eventsLost)
        w.key("gaps"); w.number(gaps)
        w.key("implausible_dropped"); w.number(implausibleDropped)
        if imported { w.key("imported"); w.bool(true) }
        w.key("resets"); w.number(resets)
        if let since { w.key("since"); w.number(since) }
        w.endObject()
    }

    public init(reading r: inout JSONReader) throws {
        self.init()
        var seen = (resets: false, gaps: false, implausible: false)
        try r.readObject { r, key in
            switch key {
            case "since": since = try r.readOptionalDouble()
            case "resets": resets = try r.readInt(); seen.resets = true
            case "gaps": gaps = try r.readInt(); seen.gaps = true
            case "implausible_dropped": implausibleDropped = try r.readInt(); seen.implausible = true
            case "events_lost": eventsLost = try r.readInt()
            case "imported": imported = try r.readBool()
            default: try r.skipValue()
            }
        }
        guard seen.resets && seen.gaps && seen.implausible else { throw missing("resets", in: "continuity", r) }
    }
}

extension RateResult: JSONWritable, JSONReadable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("rx_bytes_per_second"); w.number(rxBytesPerSecond)
        w.key("smoothed_rx_bytes_per_second"); w.number(smoothedRxBytesPerSecond)
        w.key("smoothed_tx_bytes_per_second"); w.number(smoothedTxBytesPerSecond)
        w.key("tx_bytes_per_second"); w.number(txBytesPerSecond)
        w.endObject()
    }

    public init(reading r: inout JSONReader) throws {
        self.init(rxBytesPerSecond: 0, txBytesPerSecond: 0, smoothedRxBytesPerSecond: 0, smoothedTxBytesPerSecond: 0)
        try r.readObject { r, key in
            switch key {
            case "rx_bytes_per_second": rxBytesPerSecond = try r.readDouble()
            case "tx_bytes_per_second": txBytesPerSecond = try r.readDouble()
            case "smoothed_rx_bytes_per_second": smoothedRxBytesPerSecond = try r.readDouble()
            case "smoothed_tx_bytes_per_second": smoothedTxBytesPerSecond = try r.readDouble()
            default: try r.skipValue()
            }
        }
    }
}

/// A figure's fields that write and read themselves with a ``Traffic`` flattened among them
/// (``WithTraffic``'s form).
public protocol TrafficFields: Codable, Hashable, Sendable {
    func write(traffic: Traffic, to writer: inout JSONWriter)
    static func read(_ reader: inout JSONReader, traffic: inout Traffic) throws -> Self
}

extension WithTraffic: JSONWritable where Fields: TrafficFields {
    public func write(to writer: inout JSONWriter) {
        fields.write(traffic: traffic, to: &writer)
    }
}

extension WithTraffic: JSONReadable where Fields: TrafficFields {
    public init(reading reader: inout JSONReader) throws {
        var traffic = Traffic.zero
        let fields = try Fields.read(&reader, traffic: &traffic)
        self.init(fields, traffic: traffic)
    }
}

extension EpochFields: TrafficFields {
    public func write(traffic: Traffic, to w: inout JSONWriter) {
        let fields = self
        w.beginObject()
        w.key("boot_id"); w.string(fields.bootID)
        w.key("generation"); w.number(fields.generation)
        w.key("ifindex"); w.number(fields.ifindex)
        w.rx(traffic)
        w.key("since"); w.number(fields.since)
        w.tx(traffic)
        w.endObject()
    }

    public static func read(_ r: inout JSONReader, traffic: inout Traffic) throws -> EpochFields {
        var fields = EpochFields(bootID: "", ifindex: 0, generation: 0, since: 0)
        try r.readObject { r, key in
            guard !(try r.readTraffic(key, into: &traffic)) else { return }
            switch key {
            case "boot_id": fields.bootID = try r.readString()
            case "generation": fields.generation = try r.readInt()
            case "ifindex": fields.ifindex = try r.readInt32()
            case "since": fields.since = try r.readDouble()
            default: try r.skipValue()
            }
        }
        return fields
    }
}

extension InterfaceFields: TrafficFields {
    public func write(traffic: Traffic, to w: inout JSONWriter) {
        let f = self
        w.beginObject()
        w.key("class"); w.string(f.class)
        w.key("class_reason"); w.string(f.classReason)
        w.key("continuity"); f.continuity.write(to: &w)
        if let epoch = f.epoch { w.key("epoch"); epoch.write(to: &w) }
        if let ifindex = f.ifindex { w.key("ifindex"); w.number(ifindex) }
        w.key("kind"); w.string(f.kind)
        w.key("labels"); w.strings(f.labels)
        if let lastSeen = f.lastSeen { w.key("last_seen"); w.number(lastSeen) }
        w.key("name"); w.string(f.name)
        w.key("operstate"); w.string(f.operstate)
        if let rate = f.rate { w.key("rate"); rate.write(to: &w) }
        w.rx(traffic)
        w.tx(traffic)
        w.endObject()
    }

    public static func read(_ r: inout JSONReader, traffic: inout Traffic) throws -> InterfaceFields {
        var f = InterfaceFields(name: "", ifindex: nil, class: "", classReason: "", kind: "", operstate: "", epoch: nil,
                                rate: nil, continuity: Continuity(), labels: [])
        var named = false
        try r.readObject { r, key in
            guard !(try r.readTraffic(key, into: &traffic)) else { return }
            switch key {
            case "name": f.name = try r.readString(); named = true
            case "class": f.class = try r.readString()
            case "class_reason": f.classReason = try r.readString()
            case "continuity": f.continuity = try Continuity(reading: &r)
            case "epoch": f.epoch = try r.readNull() ? nil : try EpochResult(reading: &r)
            case "ifindex": f.ifindex = try r.readNull() ? nil : try r.readInt32()
            case "kind": f.kind = try r.readString()
            case "labels": f.labels = try r.readStrings()
            case "last_seen": f.lastSeen = try r.readOptionalDouble()
            case "operstate": f.operstate = try r.readString()
            case "rate": f.rate = try r.readNull() ? nil : try RateResult(reading: &r)
            default: try r.skipValue()
            }
        }
        guard named else { throw missing("name", in: "an interface", r) }
        return f
    }
}

extension UsageRowFields: TrafficFields {
    public func write(traffic: Traffic, to w: inout JSONWriter) {
        w.beginObject()
        w.key("continuity"); continuity.write(to: &w)
        w.key("end"); w.number(end)
        w.key("labels"); w.strings(labels)
        w.rx(traffic)
        w.key("start"); w.number(start)
        w.tx(traffic)
        w.endObject()
    }

    public static func read(_ r: inout JSONReader, traffic: inout Traffic) throws -> UsageRowFields {
        var fields = UsageRowFields(start: 0, end: 0, continuity: Continuity(), labels: [])
        try r.readObject { r, key in
            guard !(try r.readTraffic(key, into: &traffic)) else { return }
            switch key {
            case "start": fields.start = try r.readDouble()
            case "end": fields.end = try r.readDouble()
            case "continuity": fields.continuity = try Continuity(reading: &r)
            case "labels": fields.labels = try r.readStrings()
            default: try r.skipValue()
            }
        }
        return fields
    }
}

extension ProjectionResult: JSONWritable, JSONReadable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("elapsed_fraction"); w.number(elapsedFraction)
        w.key("end"); w.number(end)
        w.key("labels"); w.strings(labels)
        w.key("rx_bytes"); w.number(rxBytes)
        w.key("start"); w.number(start)
        w.key("tx_bytes"); w.number(txBytes)
        w.endObject()
    }

    public init(reading r: inout JSONReader) throws {
        self.init(start: 0, end: 0, elapsedFraction: 0, rxBytes: 0, txBytes: 0, labels: [])
        try r.readObject { r, key in
            switch key {
            case "start": start = try r.readDouble()
            case "end": end = try r.readDouble()
            case "elapsed_fraction": elapsedFraction = try r.readDouble()
            case "rx_bytes": rxBytes = try r.readUInt64()
            case "tx_bytes": txBytes = try r.readUInt64()
            case "labels": labels = try r.readStrings()
            default: try r.skipValue()
            }
        }
    }
}

extension UsageResult: JSONWritable, JSONReadable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        if let interfaceClass = self.class { w.key("class"); w.string(interfaceClass) }
        w.key("footnote"); w.string(footnote)
        if let interface { w.key("interface"); w.string(interface) }
        w.key("period"); w.string(period)
        if let projection { w.key("projection"); projection.write(to: &w) }
        w.key("rows")
        w.beginArray()
        for row in rows { row.write(to: &w) }
        w.endArray()
        w.endObject()
    }

    public init(reading r: inout JSONReader) throws {
        self.init(interface: nil, class: nil, period: "", rows: [], projection: nil, footnote: "")
        var hasPeriod = false
        try r.readObject { r, key in
            switch key {
            case "interface": interface = try r.readNull() ? nil : try r.readString()
            case "class": self.class = try r.readNull() ? nil : try r.readString()
            case "period": period = try r.readString(); hasPeriod = true
            case "rows": try r.readArray { rows.append(try UsageRowResult(reading: &$0)) }
            case "projection": projection = try r.readNull() ? nil : try ProjectionResult(reading: &r)
            case "footnote": footnote = try r.readString()
            default: try r.skipValue()
            }
        }
        guard hasPeriod else { throw missing("period", in: "a usage table", r) }
    }
}

extension InterfacesResult: JSONWritable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("footnote"); w.string(footnote)
        w.key("interfaces")
        w.beginArray()
        for interface in interfaces { interface.write(to: &w) }
        w.endArray()
        w.endObject()
    }
}

extension StoreHealth: JSONWritable, JSONReadable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        if let error { w.key("error"); w.string(error) }
        w.key("healthy"); w.bool(healthy)
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
            case "error": error = try r.readNull() ? nil : try r.readString()
            default: try r.skipValue()
            }
        }
    }
}

extension LinkEventsHealth: JSONWritable, JSONReadable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("origin"); w.string(origin)
        w.key("receive_buffer"); w.number(receiveBuffer)
        w.endObject()
    }

    public init(reading r: inout JSONReader) throws {
        self.init(origin: "", receiveBuffer: 0)
        try r.readObject { r, key in
            switch key {
            case "origin": origin = try r.readString()
            case "receive_buffer": receiveBuffer = try r.readInt()
            default: try r.skipValue()
            }
        }
    }
}

extension StatusResult: JSONWritable, JSONReadable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        if let interfaces { w.key("interfaces"); w.number(interfaces) }
        w.key("interval"); w.number(interval)
        if let lastSampleAt { w.key("last_sample_at"); w.number(lastSampleAt) }
        if let linkEvents { w.key("link_events"); linkEvents.write(to: &w) }
        if let metrics { w.key("metrics"); w.string(metrics) }
        w.key("pid"); w.number(pid)
        w.key("ready"); w.bool(ready)
        w.key("save_interval"); w.number(saveInterval)
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
            default: try r.skipValue()
            }
        }
        guard hasReady else { throw missing("ready", in: "a status", r) }
    }
}

extension RequestID: JSONWritable, JSONReadable {
    public func write(to w: inout JSONWriter) {
        switch self {
        case .number(let number): w.number(number)
        case .string(let string): w.string(string)
        }
    }

    public init(reading r: inout JSONReader) throws {
        self = try r.peek() == UInt8(ascii: "\"") ? .string(try r.readString()) : .number(try r.readInt64())
    }
}

extension WireError: JSONReadable {
    public init(reading r: inout JSONReader) throws {
        var code: ErrorCode?
        var message = ""
        try r.readObject { r, key in
            switch key {
            case "code": code = ErrorCode(rawValue: try r.readString())
            case "message": message = try r.readString()
            default: try r.skipValue()
            }
        }
        // A code this client does not know is still an error, with the daemon's message.
        self.init(code ?? .storeError, message)
    }
}

extension UsageSpec: JSONWritable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        if let from { w.key("from"); w.number(from.seconds) }
        if let last { w.key("last"); w.number(last) }
        if let period { w.key("period"); w.string(period) }
        if let projection { w.key("projection"); w.bool(projection) }
        if let to { w.key("to"); w.number(to.seconds) }
        if let top { w.key("top"); w.number(top) }
        w.endObject()
    }
}

/// A request line as a client writes it: every client request, without `Codable`.
extension Request: JSONWritable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        if let interfaceClass = self.class { w.key("class"); w.string(interfaceClass) }
        if let cmd { w.key("cmd"); w.string(cmd) }
        if let dryRun { w.key("dry_run"); w.bool(dryRun) }
        if let format { w.key("format"); w.string(format) }
        if let from { w.key("from"); w.number(from.seconds) }
        if let id { w.key("id"); id.write(to: &w) }
        if let include { w.key("include"); w.strings(include) }
        if let interface { w.key("interface"); w.string(interface) }
        if let interfaces { w.key("interfaces"); w.strings(interfaces) }
        if let kind { w.key("kind"); w.string(kind) }
        if let limit { w.key("limit"); w.number(limit) }
        if let path { w.key("path"); w.string(path) }
        if let period { w.key("period"); w.string(period) }
        if let process { w.key("process"); w.bool(process) }
        if let projection { w.key("projection"); w.bool(projection) }
        if let select { w.key("select"); w.string(select) }
        if let source { w.key("source"); w.string(source) }
        if let sum { w.key("sum"); w.bool(sum) }
        if let to { w.key("to"); w.number(to.seconds) }
        if let usage {
            w.key("usage")
            w.beginArray()
            for spec in usage { spec.write(to: &w) }
            w.endArray()
        }
        if let utc { w.key("utc"); w.bool(utc) }
        if let v { w.key("v"); w.number(v) }
        w.endObject()
    }
}
