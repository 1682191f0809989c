import IfMeterCore
import IfMeterJSON

public struct AdminResult: Hashable, Sendable {
    public var done: String
    public init(done: String) { self.done = done }
}

/// The `metrics` answer: the exposition, exactly as `/metrics` would serve it.
public struct MetricsResult: Hashable, Sendable {
    public var contentType: String
    public var text: String

    public init(contentType: String, text: String) {
        self.contentType = contentType
        self.text = text
    }
}

/// The `import` answer: what came in (or, with `dry_run`, would), per interface.
public struct ImportResult: Hashable, Sendable {
    public struct Interface: Hashable, Sendable {
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
}

extension AdminResult: JSONWritable, JSONReadable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("done"); w.string(done)
        w.endObject()
    }

    public init(reading r: inout JSONReader) throws {
        self.init(done: "")
        try r.readObject { r, key in
            if key == "done" { done = try r.readString() } else { try r.skipValue() }
        }
    }
}

extension MetricsResult: JSONWritable, JSONReadable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("content_type"); w.string(contentType)
        w.key("text"); w.string(text)
        w.endObject()
    }

    public init(reading r: inout JSONReader) throws {
        self.init(contentType: "", text: "")
        try r.readObject { r, key in
            switch key {
            case "content_type": contentType = try r.readString()
            case "text": text = try r.readString()
            default: try r.skipValue()
            }
        }
    }
}

extension ImportResult.Interface: JSONWritable, JSONReadable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("already_imported"); w.number(alreadyImported)
        w.key("buckets")
        w.beginObject()
        for (period, count) in buckets.sorted(by: { $0.key < $1.key }) {
            w.key(text: period); w.number(count)
        }
        w.endObject()
        w.key("name"); w.string(name)
        if let overlapFrom { w.key("overlap_from"); w.number(overlapFrom) }
        w.key("overlap_skipped"); w.number(overlapSkipped)
        if let overlapTo { w.key("overlap_to"); w.number(overlapTo) }
        w.key("total_rx_bytes"); w.number(totalRxBytes)
        w.key("total_tx_bytes"); w.number(totalTxBytes)
        w.endObject()
    }

    public init(reading r: inout JSONReader) throws {
        self.init(name: "", buckets: [:], alreadyImported: 0, overlapSkipped: 0, totalRxBytes: 0, totalTxBytes: 0,
                  overlapFrom: nil, overlapTo: nil)
        try r.readObject { r, key in
            switch key {
            case "already_imported": alreadyImported = try r.readInt()
            case "buckets": try r.readObject { r, period in buckets[period] = try r.readInt() }
            case "name": name = try r.readString()
            case "overlap_from": overlapFrom = try r.readOptionalDouble()
            case "overlap_skipped": overlapSkipped = try r.readInt()
            case "overlap_to": overlapTo = try r.readOptionalDouble()
            case "total_rx_bytes": totalRxBytes = try r.readUInt64()
            case "total_tx_bytes": totalTxBytes = try r.readUInt64()
            default: try r.skipValue()
            }
        }
    }
}

extension ImportResult: JSONWritable, JSONReadable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("dry_run"); w.bool(dryRun)
        w.key("interfaces")
        w.beginArray()
        for interface in interfaces { interface.write(to: &w) }
        w.endArray()
        w.key("path"); w.string(path)
        w.key("source"); w.string(source)
        w.endObject()
    }

    public init(reading r: inout JSONReader) throws {
        self.init(source: "", path: "", dryRun: false, interfaces: [])
        try r.readObject { r, key in
            switch key {
            case "dry_run": dryRun = try r.readBool()
            case "interfaces": try r.readArray { interfaces.append(try Interface(reading: &$0)) }
            case "path": path = try r.readString()
            case "source": source = try r.readString()
            default: try r.skipValue()
            }
        }
    }
}
