import IfMeterCore
import IfMeterJSON

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
        if let offset { w.key("offset"); w.number(offset) }
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
