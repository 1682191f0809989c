import IfMeterCore
import IfMeterJSON

public struct EventsResult: Hashable, Sendable {
    public var events: [CounterEvent]
    public init(events: [CounterEvent]) {
        self.events = events
    }
}

/// One `watch` stream line after each sample.
public struct RatesResult: Hashable, Sendable {
    public struct Entry: Hashable, Sendable {
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

public struct SampleResult: Hashable, Sendable {
    public var sampledAt: Double
    public var interfaces: Int
    public init(sampledAt: Double, interfaces: Int) {
        self.sampledAt = sampledAt
        self.interfaces = interfaces
    }
}

extension EventsResult: JSONWritable, JSONReadable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("events")
        w.beginArray()
        for event in events { event.write(to: &w) }
        w.endArray()
        w.endObject()
    }

    public init(reading r: inout JSONReader) throws {
        self.init(events: [])
        try r.readObject { r, key in
            switch key {
            case "events": try r.readArray { events.append(try CounterEvent(reading: &$0)) }
            default: try r.skipValue()
            }
        }
    }
}

extension RatesResult.Entry: JSONWritable, JSONReadable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("name"); w.string(name)
        w.key("rate"); rate.write(to: &w)
        w.endObject()
    }

    public init(reading r: inout JSONReader) throws {
        var (name, rate): (String?, RateResult?) = (nil, nil)
        try r.readObject { r, key in
            switch key {
            case "name": name = try r.readString()
            case "rate": rate = try RateResult(reading: &r)
            default: try r.skipValue()
            }
        }
        guard let name, let rate else { throw missing(name == nil ? "name" : "rate", in: "a rate", r) }
        self.init(name: name, rate: rate)
    }
}

extension RatesResult: JSONWritable, JSONReadable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("at"); w.number(at)
        w.key("interfaces")
        w.beginArray()
        for entry in interfaces { entry.write(to: &w) }
        w.endArray()
        w.endObject()
    }

    public init(reading r: inout JSONReader) throws {
        self.init(at: 0, interfaces: [])
        try r.readObject { r, key in
            switch key {
            case "at": at = try r.readDouble()
            case "interfaces": try r.readArray { interfaces.append(try Entry(reading: &$0)) }
            default: try r.skipValue()
            }
        }
    }
}

extension SampleResult: JSONWritable, JSONReadable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("interfaces"); w.number(interfaces)
        w.key("sampled_at"); w.number(sampledAt)
        w.endObject()
    }

    public init(reading r: inout JSONReader) throws {
        self.init(sampledAt: 0, interfaces: 0)
        try r.readObject { r, key in
            switch key {
            case "interfaces": interfaces = try r.readInt()
            case "sampled_at": sampledAt = try r.readDouble()
            default: try r.skipValue()
            }
        }
    }
}
