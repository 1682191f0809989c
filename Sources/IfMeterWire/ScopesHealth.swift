import IfMeterJSON

/// `status`'s `scopes` (docs/SCOPES.md): whether interfaces' traffic is split by scope, which
/// links are covered, and what the local prefixes' last write said.
public struct ScopesHealth: Hashable, Sendable {
    /// Whether the interfaces' scope counters are read.
    public var counting: Bool
    /// `map 41 pinned in /sys/fs/bpf/ifmeter`, or why they are not read.
    public var detail: String
    /// The links the tc programs count on, by name, sorted.
    public var covered: [String]
    /// Links of class ethernet, wifi or cellular that are not covered, by name, sorted.
    public var uncovered: [String]
    /// Prefixes in `local_prefixes` after the last write; absent before one succeeded.
    public var prefixes: Int?
    /// Why the last write of the prefixes failed; absent after one that did not.
    public var prefixError: String?
    /// The last failed request on the attach socket; absent after one that succeeded.
    public var attachError: String?

    public init(counting: Bool, detail: String, covered: [String] = [], uncovered: [String] = [], prefixes: Int? = nil,
                prefixError: String? = nil, attachError: String? = nil) {
        (self.counting, self.detail, self.covered, self.uncovered) = (counting, detail, covered, uncovered)
        (self.prefixes, self.prefixError, self.attachError) = (prefixes, prefixError, attachError)
    }
}

extension ScopesHealth: JSONWritable, JSONReadable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        if let attachError { w.key("attach_error"); w.string(attachError) }
        w.key("counting"); w.bool(counting)
        w.key("covered"); w.beginArray(); for name in covered { w.string(name) }; w.endArray()
        w.key("detail"); w.string(detail)
        if let prefixError { w.key("prefix_error"); w.string(prefixError) }
        if let prefixes { w.key("prefixes"); w.number(prefixes) }
        w.key("uncovered"); w.beginArray(); for name in uncovered { w.string(name) }; w.endArray()
        w.endObject()
    }

    public init(reading r: inout JSONReader) throws {
        self.init(counting: false, detail: "")
        try r.readObject { r, key in
            switch key {
            case "counting": counting = try r.readBool()
            case "detail": detail = try r.readString()
            case "covered": try r.readArray { r in covered.append(try r.readString()) }
            case "uncovered": try r.readArray { r in uncovered.append(try r.readString()) }
            case "prefixes": prefixes = try r.readNull() ? nil : try r.readInt()
            case "prefix_error": prefixError = try r.readNull() ? nil : try r.readString()
            case "attach_error": attachError = try r.readNull() ? nil : try r.readString()
            default: try r.skipValue()
            }
        }
    }
}
