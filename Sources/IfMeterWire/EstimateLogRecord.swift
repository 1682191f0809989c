import IfMeterCore
import IfMeterJSON

/// One line of the estimate log (docs/LOG.md, file name ``Paths/estimateLogName``): written by
/// ifmeterd at each save, read by `ifmeter log`. The `type` field tells the two apart.
public enum EstimateLogRecord: Hashable, Sendable {
    /// One name's traffic in a save window.
    case estimate(WindowRecord)
    /// A counter event, with the fields the socket's events have.
    case event(CounterEvent)

    /// One name's traffic in a save window, labelled.
    public typealias WindowRecord = WithTraffic<WindowFields>

    public struct WindowFields: Hashable, Sendable {
        public var interface: String
        public var `class`: String?
        public var start: Double
        public var end: Double
        public var continuity: Continuity
        public var epoch: Epoch
        public var labels: [String]
    }

    /// The `type` field's value.
    public var type: String {
        switch self {
        case .estimate: "estimate"
        case .event: "event"
        }
    }

    /// The interface it is about; nil for an event about the host (a reboot, a clock jump).
    public var interface: String? {
        switch self {
        case .estimate(let window): window.interface
        case .event(let event): event.interface
        }
    }

    /// When it happened: an estimate's window start, an event's time.
    public var time: Double {
        switch self {
        case .estimate(let window): window.start
        case .event(let event): event.at
        }
    }
}

extension EstimateLogRecord.WindowRecord where Fields == EstimateLogRecord.WindowFields {
    public init(interface: String, class: String?, start: Double, end: Double, tally: BucketTally, epoch: Epoch,
                labels: [EstimateLabel], eventsLost: Int) {
        self.init(EstimateLogRecord.WindowFields(
            interface: interface, class: `class`, start: start, end: end,
            continuity: tally.continuity(eventsLost: eventsLost), epoch: epoch, labels: labels.map(\.rawValue)),
                  traffic: tally.traffic)
    }
}

extension EstimateLogRecord.WindowFields: TrafficFields {
    public func write(traffic: Traffic, to w: inout JSONWriter) {
        w.beginObject()
        writeMembers(traffic: traffic, to: &w)
        w.endObject()
    }

    func writeMembers(traffic: Traffic, to w: inout JSONWriter) {
        if let interfaceClass = self.class { w.key("class"); w.string(interfaceClass) }
        w.key("continuity"); continuity.write(to: &w)
        w.key("end"); w.number(end)
        w.key("epoch"); epoch.write(to: &w)
        w.key("interface"); w.string(interface)
        w.key("labels"); w.strings(labels)
        w.rx(traffic)
        w.key("start"); w.number(start)
        w.tx(traffic)
    }

    public static func read(_ r: inout JSONReader, traffic: inout Traffic) throws -> Self {
        var members = Members()
        try r.readObject { r, key in
            guard try !members.read(key, from: &r, traffic: &traffic) else { return }
            try r.skipValue()
        }
        return try members.fields(r)
    }

    /// A window's members as they are read, in any order, among others a record may have.
    struct Members {
        var interface: String?
        var interfaceClass: String?
        var start: Double?
        var end: Double?
        var continuity: Continuity?
        var epoch: Epoch?
        var labels: [String] = []

        /// Reads `key` if it is a window's or its traffic's; false (nothing read) otherwise.
        mutating func read(_ key: String, from r: inout JSONReader, traffic: inout Traffic) throws -> Bool {
            guard !(try r.readTraffic(key, into: &traffic)) else { return true }
            switch key {
            case "interface": interface = try r.readString()
            case "class": interfaceClass = try r.readNull() ? nil : try r.readString()
            case "start": start = try r.readDouble()
            case "end": end = try r.readDouble()
            case "continuity": continuity = try Continuity(reading: &r)
            case "epoch": epoch = try Epoch(reading: &r)
            case "labels": labels = try r.readStrings()
            default: return false
            }
            return true
        }

        func fields(_ r: JSONReader) throws -> EstimateLogRecord.WindowFields {
            guard let interface, let start, let end, let continuity, let epoch else {
                throw missing(interface == nil ? "interface" : start == nil ? "start" : end == nil ? "end"
                                : continuity == nil ? "continuity" : "epoch", in: "an estimate", r)
            }
            return EstimateLogRecord.WindowFields(interface: interface, class: interfaceClass, start: start, end: end,
                                                  continuity: continuity, epoch: epoch, labels: labels)
        }
    }
}

extension EstimateLogRecord: JSONWritable, JSONReadable {
    /// The record's members and `type` (`estimate` or `event`), which sorts after them all.
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        switch self {
        case .estimate(let window): window.fields.writeMembers(traffic: window.traffic, to: &w)
        case .event(let event): event.writeMembers(to: &w)
        }
        w.key("type"); w.string(type)
        w.endObject()
    }

    /// Reads a record whatever the order of its members: `type` says which it is, and may come
    /// anywhere.
    public init(reading r: inout JSONReader) throws {
        var type: String?
        var window = WindowFields.Members()
        var traffic = Traffic.zero
        var event = CounterEvent.Members()
        try r.readObject { r, key in
            if key == "type" { return type = try r.readString() }
            // `interface` is both an estimate's and an event's.
            if key == "interface" {
                let name = try r.readNull() ? nil : try r.readString()
                (window.interface, event.interface) = (name, name)
                return
            }
            guard try !window.read(key, from: &r, traffic: &traffic) else { return }
            try event.read(key, from: &r)
        }
        switch type {
        case "estimate": self = .estimate(WindowRecord(try window.fields(r), traffic: traffic))
        case "event": self = .event(try event.event(r))
        case let other:
            throw JSONReadError("a record of unknown type \(other.map { "\"\($0)\"" } ?? "(none)")", offset: r.offset)
        }
    }
}
