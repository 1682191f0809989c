import IfMeterCore
import IfMeterJSON

/// A network as answered (docs/NETWORKS.md): what NetworkManager said of it last, where it is
/// now, and its all-time traffic, saved or not. Its day and month tables are the `query`
/// answer's `usage`, under its `subject`.
public struct NetworkResult: Hashable, Sendable {
    /// `network:UUID`, or `network:unknown` (with no `uuid`).
    public var subject: String
    public var uuid: String?
    /// The connection's id (its name).
    public var name: String
    /// A Wi-Fi network's SSID as text (bytes that are not UTF-8 as U+FFFD); `ssid_hex` is exact.
    public var ssidHex: String?
    public var type: String
    public var metered: String
    public var apn: String?
    public var operatorName: String?
    /// The interface it is active on now; nil when it is not.
    public var interface: String?
    public var firstSeen: Double?
    public var lastSeen: Double?
    public var rxBytes: UInt64
    public var txBytes: UInt64
    public var labels: [String]

    public init(subject: String, uuid: String?, name: String, ssidHex: String?, type: String, metered: String,
                apn: String?, operatorName: String?, interface: String?, firstSeen: Double?, lastSeen: Double?,
                rxBytes: UInt64, txBytes: UInt64, labels: [String]) {
        self.subject = subject
        self.uuid = uuid
        self.name = name
        self.ssidHex = ssidHex
        self.type = type
        self.metered = metered
        self.apn = apn
        self.operatorName = operatorName
        self.interface = interface
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.rxBytes = rxBytes
        self.txBytes = txBytes
        self.labels = labels
    }

    /// The SSID's bytes, when it has one that reads as hex.
    public var ssid: [UInt8]? { ssidHex.flatMap(Hex.decode) }
}

extension NetworkResult: JSONWritable, JSONReadable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        if let apn { w.key("apn"); w.string(apn) }
        if let firstSeen { w.key("first_seen"); w.number(firstSeen) }
        if let interface { w.key("interface"); w.string(interface) }
        w.key("labels"); w.strings(labels)
        if let lastSeen { w.key("last_seen"); w.number(lastSeen) }
        w.key("metered"); w.string(metered)
        w.key("name"); w.string(name)
        if let operatorName { w.key("operator"); w.string(operatorName) }
        w.key("rx_bytes"); w.number(rxBytes)
        if let ssid { w.key("ssid"); w.string(String(decoding: ssid, as: UTF8.self)) }
        if let ssidHex { w.key("ssid_hex"); w.string(ssidHex) }
        w.key("subject"); w.string(subject)
        w.key("tx_bytes"); w.number(txBytes)
        w.key("type"); w.string(type)
        if let uuid { w.key("uuid"); w.string(uuid) }
        w.endObject()
    }

    public init(reading r: inout JSONReader) throws {
        self.init(subject: "", uuid: nil, name: "", ssidHex: nil, type: "", metered: "", apn: nil, operatorName: nil,
                  interface: nil, firstSeen: nil, lastSeen: nil, rxBytes: 0, txBytes: 0, labels: [])
        try r.readObject { r, key in
            switch key {
            case "apn": apn = try r.readNull() ? nil : try r.readString()
            case "first_seen": firstSeen = try r.readNull() ? nil : try r.readDouble()
            case "interface": interface = try r.readNull() ? nil : try r.readString()
            case "labels": labels = try r.readStrings()
            case "last_seen": lastSeen = try r.readNull() ? nil : try r.readDouble()
            case "metered": metered = try r.readString()
            case "name": name = try r.readString()
            case "operator": operatorName = try r.readNull() ? nil : try r.readString()
            case "rx_bytes": rxBytes = try r.readUInt64()
            case "ssid_hex": ssidHex = try r.readNull() ? nil : try r.readString()
            case "subject": subject = try r.readString()
            case "tx_bytes": txBytes = try r.readUInt64()
            case "type": type = try r.readString()
            case "uuid": uuid = try r.readNull() ? nil : try r.readString()
            default: try r.skipValue()
            }
        }
    }
}
