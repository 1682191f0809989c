import IfMeterCore
import IfMeterWire

/// `chart`: an SVG bar chart of one usage table, rx and tx stacked per period, with a title,
/// a y axis in byte units, period labels and the estimate label. Plain SVG 1.1, no scripts or
/// fonts to fetch: any browser or `rsvg-convert` draws it.
public enum SVGChart {
    public static let width = 800.0
    public static let height = 410.0
    public static let plot = (left: 90.0, top: 50.0, width: 690.0, height: 250.0)
    public static let rxColour = "#3b75af"
    public static let txColour = "#ef8636"

    /// The chart of `usage`. `inline` leaves out the XML declaration, for a chart inside an HTML
    /// page (whose style sheet may colour it by its classes). Each bar whose period holds one of
    /// `events` carries a mark above it naming them.
    public static func render(_ usage: UsageResult, subject: String, time: TimeText, units: Units, inline: Bool = false,
                              events: [CounterEvent] = []) -> String {
        let rows = usage.rows
        let peak = rows.map { $0.rxBytes &+ $0.txBytes }.max() ?? 0
        let (axisMax, step) = axis(peak: peak, units: units)
        let what = usage.period
        let range = rows.isEmpty ? "no traffic recorded"
            : "\(PeriodLabel.long(rows[0].start, period: usage.period, time: time)) to \(PeriodLabel.long(rows[rows.count - 1].start, period: usage.period, time: time))"
        var svg = inline ? "" : "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        svg += """
            <svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
            <title>\(escape("\(subject): traffic by \(what), \(range)"))</title>
            <rect\(inline ? " class=\"background\"" : "") x="0" y="0" width="\(Int(width))" height="\(Int(height))" fill="#ffffff"/>
            <text x="\(Int(width / 2))" y="28" text-anchor="middle" font-size="16" font-weight="bold">\(escape("\(subject): traffic by \(what)"))</text>
            <text x="\(Int(width / 2))" y="44" text-anchor="middle" fill="#555555">\(escape(range))</text>

            """
        // Horizontal grid lines and y labels, in the chart's byte units.
        var tick = 0.0
        while tick <= axisMax + 0.5 {
            let y = plot.top + plot.height - tick / axisMax * plot.height
            svg += "<line x1=\"\(n(plot.left))\" y1=\"\(n(y))\" x2=\"\(n(plot.left + plot.width))\" y2=\"\(n(y))\" stroke=\"#dddddd\"/>\n"
            svg += "<text x=\"\(n(plot.left - 6))\" y=\"\(n(y + 4))\" text-anchor=\"end\">\(escape(units.bytes(UInt64(tick))))</text>\n"
            tick += step
        }
        let slot = rows.isEmpty ? plot.width : plot.width / Double(rows.count)
        let barWidth = max(1, slot * 0.8)
        let labelEvery = max(1, Int((40 / slot).rounded(.up)))
        for (index, row) in rows.enumerated() {
            let x = plot.left + Double(index) * slot + (slot - barWidth) / 2
            let rxHeight = Double(row.rxBytes) / axisMax * plot.height
            let txHeight = Double(row.txBytes) / axisMax * plot.height
            let base = plot.top + plot.height
            let label = PeriodLabel.long(row.start, period: usage.period, time: time)
            svg += "<g class=\"bar\" data-start=\"\(Int64(row.start))\" data-rx-bytes=\"\(row.rxBytes)\" data-tx-bytes=\"\(row.txBytes)\">"
            svg += "<title>\(escape("\(label): rx \(units.bytes(row.rxBytes)), tx \(units.bytes(row.txBytes))"))</title>"
            svg += "<rect class=\"rx\" x=\"\(n(x))\" y=\"\(n(base - rxHeight))\" width=\"\(n(barWidth))\" height=\"\(n(rxHeight))\" fill=\"\(rxColour)\"/>"
            svg += "<rect class=\"tx\" x=\"\(n(x))\" y=\"\(n(base - rxHeight - txHeight))\" width=\"\(n(barWidth))\" height=\"\(n(txHeight))\" fill=\"\(txColour)\"/>"
            svg += "</g>\n"
            let touching = events.filter { $0.at >= row.start && $0.at < row.end }
            if !touching.isEmpty {
                let top = base - rxHeight - txHeight - 10
                let what = touching.prefix(5).map { "\(time.second($0.at)) \($0.kind.rawValue): \($0.detail)" }.joined(separator: "\n")
                    + (touching.count > 5 ? "\n… \(touching.count - 5) more" : "")
                svg += "<g class=\"event-mark\" data-start=\"\(Int64(row.start))\" data-events=\"\(touching.count)\">"
                svg += "<title>\(escape(what))</title>"
                svg += "<circle cx=\"\(n(x + barWidth / 2))\" cy=\"\(n(top))\" r=\"4\" fill=\"#c62828\"/></g>\n"
            }
            if index % labelEvery == 0 {
                svg += "<text x=\"\(n(x + barWidth / 2))\" y=\"\(n(base + 16))\" text-anchor=\"middle\">\(escape(shortLabel(row.start, period: usage.period, time: time)))</text>\n"
            }
        }
        let axisY = plot.top + plot.height
        svg += """
            <line x1="\(n(plot.left))" y1="\(n(axisY))" x2="\(n(plot.left + plot.width))" y2="\(n(axisY))" stroke="#333333"/>
            <line x1="\(n(plot.left))" y1="\(n(plot.top))" x2="\(n(plot.left))" y2="\(n(axisY))" stroke="#333333"/>
            <text x="\(n(plot.left + plot.width / 2))" y="\(n(axisY + 34))" text-anchor="middle" fill="#555555">\(escape(axisTitle(usage.period, time: time)))</text>
            <rect x="\(n(plot.left))" y="\(n(axisY + 46))" width="12" height="12" fill="\(rxColour)"/>
            <text x="\(n(plot.left + 18))" y="\(n(axisY + 56))">rx (received)</text>
            <rect x="\(n(plot.left + 120))" y="\(n(axisY + 46))" width="12" height="12" fill="\(txColour)"/>
            <text x="\(n(plot.left + 138))" y="\(n(axisY + 56))">tx (sent)</text>

            """
        let label = "Estimate (\(EstimateLabel.always.map(\.rawValue).joined(separator: ", "))). \(EstimateLabel.footnote)"
        for (index, line) in wrap(label, width: 125).enumerated() {
            svg += "<text class=\"estimate-label\" x=\"\(n(plot.left))\" y=\"\(n(axisY + 78 + Double(index) * 13))\" font-size=\"10\" fill=\"#555555\">\(escape(line))</text>\n"
        }
        svg += "</svg>\n"
        return svg
    }

    /// The axis top and tick step: a round number of the largest unit at or under the peak,
    /// 1, 2 or 5 times a power of ten of it, about four steps high.
    public static func axis(peak: UInt64, units: Units) -> (Double, Double) {
        guard peak > 0 else { return (1024, 256) }
        let base = units.base == .iec ? 1024.0 : 1000.0
        var unit = 1.0
        while Double(peak) / unit >= base { unit *= base }
        let raw = Double(peak) / unit / 4
        var magnitude = 1.0
        while magnitude * 10 <= raw { magnitude *= 10 }
        while magnitude > raw && magnitude > 0.001 { magnitude /= 10 }
        let nice = [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? magnitude * 10
        let step = nice * unit
        let top = (Double(peak) / step).rounded(.up) * step
        return (top, step)
    }

    public static func shortLabel(_ start: Double, period: String, time: TimeText) -> String {
        switch UsagePeriod(rawValue: period) {
        case .hour: time.format(start, "%H")
        case .day: time.format(start, "%d")
        default: time.format(start, "%b %Y")
        }
    }

    public static func axisTitle(_ period: String, time: TimeText) -> String {
        let zone = time.utc ? "UTC" : "local time"
        switch UsagePeriod(rawValue: period) {
        case .hour: return "hour of day (\(zone))"
        case .day: return "day of month (\(zone))"
        default: return "month (\(zone))"
        }
    }

    /// `text` in lines of at most `width` characters, broken between words.
    public static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        return line.isEmpty ? lines : lines + [line]
    }

    /// Coordinates with at most two decimals.
    public static func n(_ value: Double) -> String {
        let text = fixed(value, decimals: 2)
        var trimmed = Substring(text)
        while trimmed.hasSuffix("0") { trimmed = trimmed.dropLast() }
        if trimmed.hasSuffix(".") { trimmed = trimmed.dropLast() }
        return String(trimmed)
    }

    /// Text made safe for SVG's element text and double-quoted attributes. By Unicode scalar,
    /// never by `Character`: a grapheme cluster such as U+0600 followed by `<` is one
    /// `Character` that equals no `"<"`, and went through raw. Control characters XML forbids
    /// (an interface name may hold any byte but `/` and NUL) become U+FFFD, or the chart would
    /// not be well-formed.
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            case "\u{0}"..."\u{1F}", "\u{FFFE}", "\u{FFFF}": out.unicodeScalars.append("\u{FFFD}")
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
