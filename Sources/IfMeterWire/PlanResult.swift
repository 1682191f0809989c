import IfMeterCore
import IfMeterJSON

/// One data plan's figures now (docs/PLANS.md): `plans`, and `query` with `"include":["plans"]`.
public struct PlanResult: Hashable, Sendable, JSONWritable, JSONReadable {
    public var name: String
    /// What the config names: interfaces, globs, `class:CLASS`.
    public var selectors: [String]
    /// The names it sums now: interfaces, or networks' subjects (`network:UUID`).
    public var interfaces: [String]
    /// A plan by network (docs/NETWORKS.md): the names of the networks it sums now, as
    /// `interfaces` lists their subjects; nil for a plan by interface.
    public var networks: [String]?
    public var direction: String
    /// `traffic` in JSON: `all`, or `internet` for a plan that counts only the internet's
    /// (docs/PLANS.md); its `interfaces` are then the subjects' `scope:internet/…`.
    public var counting = "all"
    /// As the config says it: `month 15`, `week monday`, `7 days from 2026-12-01`.
    public var period: String
    public var periodStart: Int64
    public var periodEnd: Int64
    public var limit: UInt64
    public var used: UInt64
    public var left: UInt64
    /// Used over limit (1 is all of it).
    public var share: Double
    /// At the end of the period at its pace so far (labelled `projection` in `labels`).
    public var projected: UInt64
    /// Calendar days left in the period, today included.
    public var daysLeft: Int
    /// Left over days left.
    public var dailyBudget: UInt64
    public var thresholds: [Double]
    /// Thresholds already crossed this period.
    public var fired: [Double]
    /// A tunnel and other links summed: the tunnel's traffic is counted again beneath it.
    public var tunnelCountedTwice: Bool
    /// The period's traffic, both ways.
    public var traffic: Traffic
    public var continuity: Continuity
    public var labels: [String]
    /// The start of the later period the plan's watch is on, when it is not this one: its
    /// thresholds wait (docs/PLANS.md).
    public var watchingPeriodStart: Int64?
    /// A plan on the internet: what its subjects carried in the period that could not be told
    /// local or internet, in its direction (`unknown_bytes`; docs/SCOPES.md). Not in `used`.
    public var unknownBytes: UInt64?

    public init(name: String, selectors: [String], interfaces: [String], direction: String, period: String,
                periodStart: Int64, periodEnd: Int64, limit: UInt64, used: UInt64, left: UInt64, share: Double,
                projected: UInt64, daysLeft: Int, dailyBudget: UInt64, thresholds: [Double], fired: [Double],
                tunnelCountedTwice: Bool, traffic: Traffic, continuity: Continuity, labels: [String]) {
        (self.name, self.selectors, self.interfaces, self.direction, self.period) = (name, selectors, interfaces, direction, period)
        (self.periodStart, self.periodEnd, self.limit, self.used, self.left) = (periodStart, periodEnd, limit, used, left)
        (self.share, self.projected, self.daysLeft, self.dailyBudget) = (share, projected, daysLeft, dailyBudget)
        (self.thresholds, self.fired, self.tunnelCountedTwice) = (thresholds, fired, tunnelCountedTwice)
        (self.traffic, self.continuity, self.labels) = (traffic, continuity, labels)
    }

    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("continuity"); continuity.write(to: &w)
        w.key("daily_budget_bytes"); w.number(dailyBudget)
        w.key("days_left"); w.number(daysLeft)
        w.key("direction"); w.string(direction)
        w.key("fired"); numbers(fired, to: &w)
        w.key("interfaces"); w.strings(interfaces)
        w.key("labels"); w.strings(labels)
        w.key("left_bytes"); w.number(left)
        w.key("limit_bytes"); w.number(limit)
        w.key("name"); w.string(name)
        if let networks { w.key("networks"); w.strings(networks) }
        w.key("period"); w.string(period)
        w.key("period_end"); w.number(periodEnd)
        w.key("period_start"); w.number(periodStart)
        w.key("projected_bytes"); w.number(projected)
        w.rx(traffic)
        w.key("selectors"); w.strings(selectors)
        w.key("share"); w.number(share)
        w.key("thresholds"); numbers(thresholds, to: &w)
        w.key("traffic"); w.string(counting)
        w.key("tunnel_counted_twice"); w.bool(tunnelCountedTwice)
        w.tx(traffic)
        if let unknownBytes { w.key("unknown_bytes"); w.number(unknownBytes) }
        w.key("used_bytes"); w.number(used)
        if let watchingPeriodStart { w.key("watching_period_start"); w.number(watchingPeriodStart) }
        w.endObject()
    }

    private func numbers(_ values: [Double], to w: inout JSONWriter) {
        w.beginArray()
        for value in values { w.number(value) }
        w.endArray()
    }

    public init(reading r: inout JSONReader) throws {
        self.init(name: "", selectors: [], interfaces: [], direction: "", period: "", periodStart: 0, periodEnd: 0,
                  limit: 0, used: 0, left: 0, share: 0, projected: 0, daysLeft: 0, dailyBudget: 0, thresholds: [],
                  fired: [], tunnelCountedTwice: false, traffic: .zero, continuity: Continuity(), labels: [])
        var named = false
        func doubles(_ r: inout JSONReader) throws -> [Double] {
            var values: [Double] = []
            try r.readArray { values.append(try $0.readDouble()) }
            return values
        }
        try r.readObject { r, key in
            guard !(try r.readTraffic(key, into: &traffic)) else { return }
            switch key {
            case "name": name = try r.readString(); named = true
            case "continuity": continuity = try Continuity(reading: &r)
            case "daily_budget_bytes": dailyBudget = try r.readUInt64()
            case "days_left": daysLeft = try r.readInt()
            case "direction": direction = try r.readString()
            case "traffic": counting = try r.readString()
            case "fired": fired = try doubles(&r)
            case "interfaces": interfaces = try r.readStrings()
            case "networks": networks = try r.readNull() ? nil : try r.readStrings()
            case "labels": labels = try r.readStrings()
            case "left_bytes": left = try r.readUInt64()
            case "limit_bytes": limit = try r.readUInt64()
            case "period": period = try r.readString()
            case "period_end": periodEnd = try r.readInt64()
            case "period_start": periodStart = try r.readInt64()
            case "projected_bytes": projected = try r.readUInt64()
            case "selectors": selectors = try r.readStrings()
            case "share": share = try r.readDouble()
            case "thresholds": thresholds = try doubles(&r)
            case "tunnel_counted_twice": tunnelCountedTwice = try r.readBool()
            case "used_bytes": used = try r.readUInt64()
            case "watching_period_start": watchingPeriodStart = try r.readNull() ? nil : try r.readInt64()
            case "unknown_bytes": unknownBytes = try r.readNull() ? nil : try r.readUInt64()
            default: try r.skipValue()
            }
        }
        guard named else { throw missing("name", in: "a plan", r) }
    }
}

/// The `plans` answer: every configured plan whose figures are known, in config order.
public struct PlansResult: Hashable, Sendable, JSONWritable, JSONReadable {
    public var plans: [PlanResult]
    public var footnote: String

    public init(plans: [PlanResult], footnote: String) {
        self.plans = plans
        self.footnote = footnote
    }

    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("footnote"); w.string(footnote)
        w.key("plans")
        w.beginArray()
        for plan in plans { plan.write(to: &w) }
        w.endArray()
        w.endObject()
    }

    public init(reading r: inout JSONReader) throws {
        self.init(plans: [], footnote: "")
        try r.readObject { r, key in
            switch key {
            case "plans": try r.readArray { plans.append(try PlanResult(reading: &$0)) }
            case "footnote": footnote = try r.readString()
            default: try r.skipValue()
            }
        }
    }
}
