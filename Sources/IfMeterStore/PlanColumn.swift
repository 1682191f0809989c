import IfMeterCore
import IfMeterJSON

/// The events table's `plan` column: a plan event's figures as
/// `{"direction":…,"limit":…,"period_end":…,"period_start":…,"plan":…,"threshold":…,"used":…,"while_down":…}`.
/// The database's own format, like ``TrafficColumn``; a value that does not read is left out of
/// the event, not trusted.
package enum PlanColumn {
    package static func text(_ facts: PlanEventFacts) -> String {
        var w = JSONWriter(capacity: 160)
        w.beginObject()
        w.key("direction"); w.string(facts.direction)
        w.key("limit"); w.number(facts.limit)
        w.key("period_end"); w.number(facts.periodEnd)
        w.key("period_start"); w.number(facts.periodStart)
        w.key("plan"); w.string(facts.plan)
        if let threshold = facts.threshold { w.key("threshold"); w.number(threshold) }
        w.key("used"); w.number(facts.used)
        w.key("while_down"); w.bool(facts.whileDown)
        w.endObject()
        return String(decoding: w.bytes, as: UTF8.self)
    }

    package static func facts(_ text: String) -> PlanEventFacts? {
        var reader = JSONReader(Array(text.utf8))
        var plan: String?, direction: String?, threshold: Double?, used: UInt64?, limit: UInt64?
        var start: Int64?, end: Int64?, whileDown = false
        do {
            try reader.readObject { r, key in
                switch key {
                case "direction": direction = try r.readString()
                case "limit": limit = try r.readUInt64()
                case "period_end": end = try r.readInt64()
                case "period_start": start = try r.readInt64()
                case "plan": plan = try r.readString()
                case "threshold": threshold = try r.readDouble()
                case "used": used = try r.readUInt64()
                case "while_down": whileDown = try r.readBool()
                default: try r.skipValue()
                }
            }
            guard try reader.isAtEnd() else { return nil }
        } catch {
            return nil
        }
        guard let plan, let direction, let used, let limit, let start, let end else { return nil }
        return PlanEventFacts(plan: plan, direction: direction, threshold: threshold, used: used, limit: limit,
                              periodStart: start, periodEnd: end, whileDown: whileDown)
    }
}
