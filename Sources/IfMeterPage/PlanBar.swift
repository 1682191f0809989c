import IfMeterCore
import IfMeterPresentation
import IfMeterWire

/// One data plan as a bar: used of the limit, the projection at the period's pace, its
/// thresholds, days left and the budget per day, with the plan's labels — the figures
/// `ifmeter plans` prints.
enum PlanBar {
    static func render(_ plan: PlanResult, time: TimeText, units: Units) -> String {
        let share = min(plan.share, 1)
        let projected = plan.limit == 0 ? 0 : min(Double(plan.projected) / Double(plan.limit), 1)
        let state = plan.used >= plan.limit ? " over" : plan.thresholds.contains(where: { $0 < 1 && plan.share >= $0 }) ? " warn" : ""
        var out = "<div class=\"plan\" data-plan=\"\(HTML.escape(plan.name))\" data-used-bytes=\"\(plan.used)\" "
        out += "data-limit-bytes=\"\(plan.limit)\" data-projected-bytes=\"\(plan.projected)\" data-days-left=\"\(plan.daysLeft)\" "
        out += "data-daily-budget-bytes=\"\(plan.dailyBudget)\">\n"
        out += "<div class=\"title\"><strong>\(HTML.escape(plan.name))</strong><span>"
        out += HTML.escape("\(units.bytes(plan.used)) of \(units.bytes(plan.limit)) (\(ValueGrammar.percentText(plan.share)))")
        out += "</span></div>\n"
        // SVG, whose sizes are attributes: the Content-Security-Policy allows no inline style.
        out += "<svg class=\"bar\" viewBox=\"0 0 1000 18\" preserveAspectRatio=\"none\" role=\"img\" aria-label=\""
        out += HTML.escape("\(ValueGrammar.percentText(plan.share)) used, projected \(ValueGrammar.percentText(Double(plan.projected) / Double(max(plan.limit, 1))))")
        out += "\"><rect class=\"track\" width=\"1000\" height=\"18\"/>"
        out += "<rect class=\"used\(state)\" width=\"\(units1000(share))\" height=\"18\"/>"
        for threshold in plan.thresholds where threshold < 1 {
            out += "<line class=\"threshold\" x1=\"\(units1000(threshold))\" x2=\"\(units1000(threshold))\" y1=\"0\" y2=\"18\"/>"
        }
        // Kept inside the bar at its ends, where half its width would be cut off.
        let mark = fixed(min(max(projected * 1000, 1.5), 998.5), decimals: 1)
        out += "<line class=\"projected\" x1=\"\(mark)\" x2=\"\(mark)\" y1=\"0\" y2=\"18\"/></svg>\n"
        out += "<div class=\"facts\">"
        out += "<span>\(HTML.escape("\(plan.direction), \(plan.period): \(time.day(Double(plan.periodStart))) – \(time.day(Double(plan.periodEnd)))"))</span>"
        out += "<span>\(HTML.escape("\(units.bytes(plan.left)) left"))</span>"
        out += "<span>\(HTML.escape("\(plan.daysLeft) day\(plan.daysLeft == 1 ? "" : "s") left, \(units.bytes(plan.dailyBudget))/day"))</span>"
        out += "<span>\(HTML.escape("projected \(units.bytes(plan.projected))" + (plan.projected > plan.limit ? ", over the limit" : "")))</span>"
        let members = plan.networks ?? plan.interfaces
        let none = plan.networks == nil ? "no interface yet" : "no network yet"
        out += "<span>\(HTML.escape("on " + (members.isEmpty ? "\(none) (\(plan.selectors.joined(separator: ", ")))" : members.joined(separator: ", "))))</span>"
        out += "</div>\(OverviewPage.labels(plan.labels + (plan.tunnelCountedTwice ? [EstimateLabel.tunnelDoubleCounted.rawValue] : [])))</div>\n"
        return out
    }

    /// A share as a length along the bar's 1000 units.
    static func units1000(_ fraction: Double) -> String {
        fixed(max(0, min(fraction, 1)) * 1000, decimals: 1)
    }
}
