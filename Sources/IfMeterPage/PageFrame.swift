import IfMeterCore
import IfMeterPresentation
import IfMeterWire

/// What every page begins and ends with: its head (the daemon's own style sheet and script
/// only), the header with the last sample and the live stamp, and the footnote.
enum PageFrame {
    static func begin(title: String, host: String, status: StatusResult?, time: TimeText) -> String {
        var page = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(HTML.escape(title))</title>
            <link rel="icon" href="/static/icon.svg" type="image/svg+xml">
            <link rel="stylesheet" href="/static/ifmeter.css">
            <script src="/static/ifmeter.js" defer></script>
            </head>
            <body data-interval="\(status?.interval ?? 30)">
            <header><h1><a href="/">ifmeter</a> · \(HTML.escape(host))</h1><span class="meta">
            """
        if let status {
            page += HTML.escape("ifmeterd \(status.version), sampling every \(status.interval) s")
            if let last = status.lastSampleAt { page += HTML.escape(", last sample \(time.second(last))") }
            page += HTML.escape(time.utc ? " (UTC)" : "")
        }
        page += " · <span class=\"live\">live <span id=\"live-at\">waiting for the next sample</span></span></span></header>\n<main>\n"
        return page
    }

    static func end(footnote: String) -> String {
        "</main>\n<footer><p class=\"estimate-label\">\(HTML.escape("Every figure: " + EstimateLabel.always.map(\.rawValue).joined(separator: ", ") + "."))</p>"
            + "<p>\(HTML.escape(footnote))</p><p>Read-only. The same figures as JSON: "
            + "<a href=\"/api/v1/query?include=status,plans&amp;period=month&amp;last=1\">/api/v1/query</a> "
            + "(docs/PROTOCOL.md, \"Over HTTP\").</p></footer>\n</body></html>\n"
    }
}
