import IfMeterCore
import IfMeterJSON

public struct RateResult: Hashable, Sendable {
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

/// The kernel counter epoch an interface is in now, with the raw kernel counters last read
/// in it.
public typealias EpochResult = WithTraffic<EpochFields>

public struct EpochFields: Hashable, Sendable {
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

/// An interface present now, or (`operstate` `absent`, no `ifindex`) a name with history that
/// is not present; its traffic is since the name's history began, across all its epochs.
public typealias InterfaceResult = WithTraffic<InterfaceFields>

public struct InterfaceFields: Hashable, Sendable {
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
    /// Set for a present interface counted as its namespace's owner's.
    public var owner: OwnerResult?
    /// Its alias (`alias[NAME]`, `ifmeter alias`), if it has one.
    public var alias: String?

    public init(name: String, ifindex: Int32?, class: String, classReason: String, kind: String,
                operstate: String, epoch: EpochResult?, rate: RateResult?, continuity: Continuity, labels: [String],
                lastSeen: Double? = nil, owner: OwnerResult? = nil) {
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
        self.owner = owner
    }
}

extension InterfaceFields: TrafficFields {
    public func write(traffic: Traffic, to w: inout JSONWriter) {
        let f = self
        w.beginObject()
        if let alias = f.alias { w.key("alias"); w.string(alias) }
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
        if let owner = f.owner { w.key("owner"); owner.write(to: &w) }
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
            case "alias": f.alias = try r.readNull() ? nil : try r.readString()
            case "class": f.class = try r.readString()
            case "class_reason": f.classReason = try r.readString()
            case "continuity": f.continuity = try Continuity(reading: &r)
            case "epoch": f.epoch = try r.readNull() ? nil : try EpochResult(reading: &r)
            case "ifindex": f.ifindex = try r.readNull() ? nil : try r.readInt32()
            case "kind": f.kind = try r.readString()
            case "labels": f.labels = try r.readStrings()
            case "last_seen": f.lastSeen = try r.readOptionalDouble()
            case "operstate": f.operstate = try r.readString()
            case "owner": f.owner = try r.readNull() ? nil : try OwnerResult(reading: &r)
            case "rate": f.rate = try r.readNull() ? nil : try RateResult(reading: &r)
            default: try r.skipValue()
            }
        }
        guard named else { throw missing("name", in: "an interface", r) }
        return f
    }
}

public struct InterfacesResult: Hashable, Sendable {
    public var interfaces: [InterfaceResult]
    public var footnote: String
    public init(interfaces: [InterfaceResult], footnote: String) {
        self.interfaces = interfaces
        self.footnote = footnote
    }
}

extension InterfacesResult: JSONWritable, JSONReadable {
    public init(reading r: inout JSONReader) throws {
        self.init(interfaces: [], footnote: "")
        try r.readObject { r, key in
            switch key {
            case "interfaces": try r.readArray { interfaces.append(try InterfaceResult(reading: &$0)) }
            case "footnote": footnote = try r.readString()
            default: try r.skipValue()
            }
        }
    }

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
