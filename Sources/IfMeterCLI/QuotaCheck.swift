import IfMeterPresentation
import IfMeterCore
import IfMeterJSON
import IfMeterWire

/// `check`'s exit statuses, as Nagios plugins use them (docs/CLI.md).
public enum CheckStatus: Int32, Sendable {
    case ok = 0, warning = 1, critical = 2, unknown = 3

    var word: String {
        switch self {
        case .ok: "OK"
        case .warning: "WARNING"
        case .critical: "CRITICAL"
        case .unknown: "UNKNOWN"
        }
    }
}

/// A quota check of one interface's current day or month: used (or projected) bytes against a
/// limit, with a warning threshold.
struct QuotaCheck: JSONWritable {
    var status: CheckStatus
    var interface: String
    var period: String
    var start: Double
    var end: Double
    var direction: String
    var usedBytes: UInt64
    var projectedBytes: UInt64?
    var limitBytes: UInt64
    var warnBytes: UInt64
    /// What was compared with the limit: `used` or `projected`.
    var compared: String
    var labels: [String]
    var message: String

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("compared"); w.string(compared)
        w.key("direction"); w.string(direction)
        w.key("end"); w.number(end)
        w.key("interface"); w.string(interface)
        w.key("labels"); w.strings(labels)
        w.key("limit_bytes"); w.number(limitBytes)
        w.key("message"); w.string(message)
        w.key("period"); w.string(period)
        if let projectedBytes { w.key("projected_bytes"); w.number(projectedBytes) }
        w.key("start"); w.number(start)
        w.key("status"); w.number(status.rawValue)
        w.key("used_bytes"); w.number(usedBytes)
        w.key("warn_bytes"); w.number(warnBytes)
        w.endObject()
    }

    /// Decides the status. `warnFraction` of the limit warns (default 0.8); reaching the limit is critical.
    static func evaluate(interface: String, period: String, usage: UsageResult, limit: UInt64,
                         warnFraction: Double, projected: Bool, direction: String, units: Units,
                         time: TimeText) -> QuotaCheck {
        func pick(_ rx: UInt64, _ tx: UInt64) -> UInt64 {
            switch direction {
            case "rx": rx
            case "tx": tx
            default: rx &+ tx
            }
        }
        let projection = usage.projection
        let start = projection?.start ?? usage.rows.last?.start ?? 0
        let row = usage.rows.first { $0.start == start }
        let used = row.map { pick($0.rxBytes, $0.txBytes) } ?? 0
        let projectedBytes = projection.map { pick($0.rxBytes, $0.txBytes) }
        let compared = projected ? (projectedBytes ?? used) : used
        let warnBytes = UInt64((Double(limit) * warnFraction).rounded())
        let status: CheckStatus = compared >= limit ? .critical : compared >= warnBytes ? .warning : .ok
        let share = ValueGrammar.percentText(limit > 0 ? Double(compared) / Double(limit) : 1)
        let what = projected ? "projected to use \(units.bytes(compared)) by \(time.minute(projection?.end ?? start))"
                             : "used \(units.bytes(compared))"
        let scope = direction == "both" ? "" : " (\(direction) only)"
        var labels = row?.labels ?? EstimateLabel.always.map(\.rawValue)
        if projected { labels.append(EstimateLabel.projection.rawValue) }
        let message = "\(status.word): \(interface) \(what) of \(units.bytes(limit)) this \(period)\(scope) (\(share)), "
            + "an estimate from interface counters"
            + (row.map { $0.continuity.resets + $0.continuity.gaps > 0 ? "; the period had a reset or gap" : "" } ?? "")
            + " | used=\(used)B;\(warnBytes);\(limit);0"
            + (projectedBytes.map { " projected=\($0)B;\(warnBytes);\(limit);0" } ?? "")
        return QuotaCheck(
            status: status, interface: interface, period: period, start: start,
            end: projection?.end ?? row?.end ?? start, direction: direction, usedBytes: used,
            projectedBytes: projectedBytes, limitBytes: limit, warnBytes: warnBytes,
            compared: projected ? "projected" : "used", labels: labels, message: message)
    }
}
