/// The page's style sheet and script, served from the binary (`/static/…`): nothing is fetched
/// from anywhere else, so the page works offline and its Content-Security-Policy can allow only
/// the daemon itself.
public enum PageAssets {
    /// Headers on every page and asset: no script but the daemon's own file, nothing framed,
    /// no referrer, nothing sniffed, nothing cached past a sample.
    public static let securityHeaders: [(name: String, value: String)] = [
        ("Content-Security-Policy",
         "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
            + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Frame-Options", "DENY"),
        ("Cache-Control", "no-store"),
    ]

    /// An asset by its path under `/static/`: its type and bytes; nil for any other path.
    public static func asset(_ name: String) -> (contentType: String, body: [UInt8])? {
        switch name {
        case "ifmeter.css": ("text/css; charset=utf-8", Array(style.utf8))
        case "ifmeter.js": ("text/javascript; charset=utf-8", Array(script.utf8))
        case "icon.svg": ("image/svg+xml", Array(icon.utf8))
        default: nil
        }
    }

    /// Two bars, rx and tx.
    static let icon = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect x="2" y="5" width="5" height="10" fill="#3b75af"/>\
        <rect x="9" y="1" width="5" height="14" fill="#ef8636"/></svg>
        """

    static let style = """
        :root { color-scheme: light dark; --bg: #ffffff; --fg: #1d1f21; --muted: #5f6368; --line: #dadce0;
          --card: #f8f9fa; --rx: #3b75af; --tx: #ef8636; --ok: #2e7d32; --warn: #c77700; --over: #c62828; }
        @media (prefers-color-scheme: dark) {
          :root { --bg: #16181a; --fg: #e8eaed; --muted: #9aa0a6; --line: #3c4043; --card: #202124;
            --rx: #6ea8df; --tx: #f3a15c; --ok: #81c995; --warn: #fdd663; --over: #f28b82; }
        }
        * { box-sizing: border-box; }
        body { margin: 0; background: var(--bg); color: var(--fg);
          font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
        header, main, footer { max-width: 1100px; margin: 0 auto; padding: 0 16px; }
        header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 16px; padding-top: 16px; }
        header h1 { font-size: 20px; margin: 0; }
        header .meta { color: var(--muted); font-size: 13px; }
        a { color: var(--rx); }
        h2 { font-size: 17px; margin: 24px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
        h3 { font-size: 15px; margin: 16px 0 6px; }
        .scroll { overflow-x: auto; }
        table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
        th, td { text-align: right; padding: 4px 8px; border-bottom: 1px solid var(--line); white-space: nowrap; }
        th:first-child, td:first-child { text-align: left; }
        th { color: var(--muted); font-weight: 600; font-size: 13px; }
        td.name { max-width: 22em; overflow: hidden; text-overflow: ellipsis; }
        .absent td { color: var(--muted); }
        .labels { display: inline-flex; flex-wrap: wrap; gap: 4px; }
        .label { font-size: 11px; border: 1px solid var(--line); border-radius: 8px; padding: 0 6px; color: var(--muted); white-space: nowrap; }
        .label.mark { border-color: var(--warn); color: var(--warn); }
        .plan { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; margin: 8px 0; }
        .plan .title { display: flex; flex-wrap: wrap; justify-content: space-between; gap: 4px 12px; }
        .plan .title strong { font-size: 16px; }
        .bar { display: block; width: 100%; height: 18px; margin: 8px 0 4px; border-radius: 9px; }
        .bar .track { fill: var(--line); }
        .bar .used { fill: var(--ok); }
        .bar .used.warn { fill: var(--warn); }
        .bar .used.over { fill: var(--over); }
        .bar .projected { stroke: var(--fg); stroke-width: 3; stroke-dasharray: 3 2; }
        .bar .threshold { stroke: var(--bg); stroke-width: 2; }
        .facts { display: flex; flex-wrap: wrap; gap: 2px 16px; color: var(--muted); font-size: 13px; }
        .live { color: var(--muted); font-size: 12px; }
        .chart svg { width: 100%; height: auto; max-width: 800px; display: block; }
        .chart svg .background { fill: var(--bg); }
        .chart svg text { fill: var(--fg); }
        .chart svg .rx { fill: var(--rx); }
        .chart svg .tx { fill: var(--tx); }
        .events td:last-child { white-space: normal; text-align: left; }
        footer { color: var(--muted); font-size: 12px; margin-top: 24px; padding-bottom: 24px; }
        @media (max-width: 600px) {
          body { font-size: 14px; }
          th, td { padding: 3px 5px; }
          .hide-narrow { display: none; }
        }
        """

    static let script = """
        "use strict";
        // Live rates: after each sample the daemon takes, its rates (the watch stream's "rates"
        // line, from /api/v1/rates) replace the rate cells' text. Nothing else on the page changes.
        (function () {
          const cells = Array.from(document.querySelectorAll("[data-rate]"));
          const stamp = document.getElementById("live-at");
          const interval = Number(document.body.dataset.interval) || 30;
          const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
          // Units.rate's rules, to the digit (PageScriptUnitsTests), so a live rate reads as the
          // page the daemon wrote: two decimals are the value times 100, rounded half up, not
          // toFixed, which rounds the binary value's exact decimals (2.675 KiB: "2.67" there,
          // "2.68" in Swift). Rates are never negative, where Math.round and Swift's rounding part.
          function bytes(value) {
            let index = 0;
            while (value >= 1024 && index < units.length - 1) { value /= 1024; index += 1; }
            if (index === 0) { return Math.round(value) + " B"; }
            const hundredths = Math.round(value * 100);
            const fraction = hundredths % 100;
            return (hundredths - fraction) / 100 + "." + (fraction < 10 ? "0" : "") + fraction + " " + units[index];
          }
          async function poll() {
            let next = interval * 1000;
            try {
              const response = await fetch("/api/v1/rates", { cache: "no-store" });
              if (response.ok) {
                const line = await response.json();
                const result = line.result;
                const rates = new Map(result.interfaces.map(function (entry) { return [entry.name, entry.rate]; }));
                for (const cell of cells) {
                  const rate = rates.get(cell.dataset.rate);
                  cell.textContent = rate
                    ? "\\u2193 " + bytes(rate.rx_bytes_per_second) + "/s \\u2191 " + bytes(rate.tx_bytes_per_second) + "/s"
                    : "\\u2014";
                  cell.dataset.liveAt = String(result.at);
                }
                if (stamp) { stamp.textContent = new Date(result.at * 1000).toLocaleTimeString(); stamp.dataset.at = String(result.at); }
                // The next sample is due an interval after this one; ask just after it.
                next = Math.max(1000, Math.min(interval * 1000, (result.at + interval) * 1000 - Date.now() + 500));
              }
            } catch (error) {
              // The daemon restarting: asked again an interval later.
            }
            window.setTimeout(poll, next);
          }
          if (cells.length > 0) { poll(); }
        })();
        """
}
