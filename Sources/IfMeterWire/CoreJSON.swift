import IfMeterCore
import IfMeterJSON

// The wire forms of IfMeterCore's values, which know nothing of JSON.

extension Traffic: JSONWritable, JSONReadable {
    /// `{"rx_bytes", "rx_packets", "tx_bytes", "tx_packets"}`: an event's raw counters.
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.rx(self)
        w.tx(self)
        w.endObject()
    }

    public init(reading r: inout JSONReader) throws {
        self = .zero
        try r.readObject { r, key in
            guard try r.readTraffic(key, into: &self) else { return try r.skipValue() }
        }
    }
}

extension Epoch: JSONWritable, JSONReadable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("boot_id"); w.string(bootID)
        w.key("generation"); w.number(generation)
        w.key("ifindex"); w.number(ifindex)
        w.key("since"); w.number(since)
        w.endObject()
    }

    public init(reading r: inout JSONReader) throws {
        self.init(bootID: "", ifindex: 0, since: 0)
        try r.readObject { r, key in
            switch key {
            case "boot_id": bootID = try r.readString()
            case "generation": generation = try r.readInt()
            case "ifindex": ifindex = try r.readInt32()
            case "since": since = try r.readDouble()
            default: try r.skipValue()
            }
        }
    }
}

extension CounterEvent: JSONWritable, JSONReadable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        writeMembers(to: &w)
        w.endObject()
    }

    /// The members alone, for a record that adds its own (the estimate log's `type`).
    func writeMembers(to w: inout JSONWriter) {
        w.key("at"); w.number(at)
        if let current { w.key("current"); current.write(to: &w) }
        if let delta { w.key("delta"); delta.write(to: &w) }
        w.key("detail"); w.string(detail)
        if let ifindex { w.key("ifindex"); w.number(ifindex) }
        if let interface { w.key("interface"); w.string(interface) }
        w.key("kind"); w.string(kind.rawValue)
        if let plan { w.key("plan"); plan.write(to: &w) }
        if let previous { w.key("previous"); previous.write(to: &w) }
    }

    public init(reading r: inout JSONReader) throws {
        var member = Members()
        try r.readObject { r, key in try member.read(key, from: &r) }
        self = try member.event(r)
    }

    /// An event's members as they are read, in any order, among others a record may have.
    struct Members {
        var kind: String?
        var at: Double?
        var interface: String?
        var ifindex: Int32?
        var previous: Traffic?
        var current: Traffic?
        var delta: Traffic?
        var detail = ""
        var plan: PlanEventFacts?

        /// Reads `key` if it is an event's; false (nothing read) otherwise.
        @discardableResult
        mutating func read(_ key: String, from r: inout JSONReader, skippingOthers: Bool = true) throws -> Bool {
            switch key {
            case "kind": kind = try r.readString()
            case "at": at = try r.readDouble()
            case "interface": interface = try r.readNull() ? nil : try r.readString()
            case "ifindex": ifindex = try r.readNull() ? nil : try r.readInt32()
            case "previous": previous = try r.readNull() ? nil : try Traffic(reading: &r)
            case "current": current = try r.readNull() ? nil : try Traffic(reading: &r)
            case "delta": delta = try r.readNull() ? nil : try Traffic(reading: &r)
            case "detail": detail = try r.readString()
            case "plan": plan = try r.readNull() ? nil : try PlanEventFacts(reading: &r)
            default:
                if skippingOthers { try r.skipValue() }
                return false
            }
            return true
        }

        func event(_ r: JSONReader) throws -> CounterEvent {
            guard let text = kind else { throw missing("kind", in: "an event", r) }
            guard let kind = CounterEvent.Kind(rawValue: text) else {
                throw JSONReadError("an event of unknown kind \"\(text)\"", offset: r.offset)
            }
            guard let at else { throw missing("at", in: "an event", r) }
            return CounterEvent(kind: kind, at: at, interface: interface, ifindex: ifindex, previous: previous,
                                current: current, delta: delta, detail: detail, plan: plan)
        }
    }
}

extension PlanEventFacts {
    /// `{"direction", "limit", "period_end", "period_start", "plan", "threshold", "used", "while_down"}`
    /// (docs/PROTOCOL.md); `threshold` only for `plan-threshold`.
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("direction"); w.string(direction)
        w.key("limit"); w.number(limit)
        w.key("period_end"); w.number(periodEnd)
        w.key("period_start"); w.number(periodStart)
        w.key("plan"); w.string(plan)
        if let threshold { w.key("threshold"); w.number(threshold) }
        w.key("used"); w.number(used)
        w.key("while_down"); w.bool(whileDown)
        w.endObject()
    }

    public convenience init(reading r: inout JSONReader) throws {
        var plan: String?, direction: String?, threshold: Double?, used: UInt64?, limit: UInt64?
        var start: Int64?, end: Int64?, whileDown = false
        try r.readObject { r, key in
            switch key {
            case "direction": direction = try r.readString()
            case "limit": limit = try r.readUInt64()
            case "period_end": end = try r.readInt64()
            case "period_start": start = try r.readInt64()
            case "plan": plan = try r.readString()
            case "threshold": threshold = try r.readNull() ? nil : try r.readDouble()
            case "used": used = try r.readUInt64()
            case "while_down": whileDown = try r.readBool()
            default: try r.skipValue()
            }
        }
        guard let plan, let direction, let used, let limit, let start, let end else {
            throw JSONReadError("a plan event without plan, direction, used, limit, period_start or period_end", offset: r.offset)
        }
        self.init(plan: plan, direction: direction, threshold: threshold, used: used, limit: limit,
                  periodStart: start, periodEnd: end, whileDown: whileDown)
    }
}
