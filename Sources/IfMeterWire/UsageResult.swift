import IfMeterCore
import IfMeterJSON

/// One period's traffic for an interface or a class.
public typealias UsageRowResult = WithTraffic<UsageRowFields>

public struct UsageRowFields: Hashable, Sendable {
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

public struct ProjectionResult: Hashable, Sendable {
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

public struct UsageResult: Hashable, Sendable {
    public var interface: String?
    public var `class`: String?
    public var period: String
    public var rows: [UsageRowResult]
    public var projection: ProjectionResult?
    /// A `usage` answer's; none on a `query` answer's tables, whose answer has one for all.
    public var footnote: String?

    public init(interface: String?, class: String?, period: String, rows: [UsageRowResult],
                projection: ProjectionResult?, footnote: String?) {
        self.interface = interface
        self.class = `class`
        self.period = period
        self.rows = rows
        self.projection = projection
        self.footnote = footnote
    }
}

extension UsageResult: JSONWritable, JSONReadable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        if let interfaceClass = self.class { w.key("class"); w.string(interfaceClass) }
        if let footnote { w.key("footnote"); w.string(footnote) }
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
        self.init(interface: nil, class: nil, period: "", rows: [], projection: nil, footnote: nil)
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
