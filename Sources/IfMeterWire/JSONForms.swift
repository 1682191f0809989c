import IfMeterCore
import IfMeterJSON

/// Every result and request writes and reads itself through these: its `write(to:)` and
/// `init(reading:)` are its one schema, keys in sorted order and absent optionals left out
/// (Tests/IfMeterWireTests/Golden pins the bytes). The daemon's answers, the client's
/// `--json` and the estimate log are written by them, the client reads answers as they arrive
/// by them, and nothing else writes or reads the wire.

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

/// A figure's fields that write and read themselves with a ``Traffic`` flattened among them
/// (``WithTraffic``'s form).
public protocol TrafficFields: Hashable, Sendable {
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
