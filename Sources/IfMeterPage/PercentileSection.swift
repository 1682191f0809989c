import IfMeterCore
import IfMeterPresentation
import IfMeterWire

extension OverviewPage {
    /// This billing month's 95th percentile of 5-minute rates of the Ethernet, Wi-Fi and cellular
    /// interfaces (docs/CLI.md, "95th"), as the daemon last worked it out, in SI bits per
    /// second as transit sells them; `ifmeter 95th` answers for any interface or range.
    static func percentileSection(_ result: PercentileResult, time: TimeText) -> String {
        let rates = Units(base: .si, bits: true)
        func rate(_ bytes: UInt64) -> String { rates.rate(Double(bytes) / Double(BurstablePercentile.slotSeconds)) }
        var page = "<section id=\"percentile\"><h2>95th percentile this month</h2>\n<p class=\"facts\">"
            + "Of every ended 5-minute slot, one without traffic as zero, as burstable transit bills it; max is the larger "
            + "of rx and tx. ifmeter 95th answers for any interface or range.</p>\n"
        page += "<div class=\"scroll\"><table class=\"usage percentile\"><thead><tr><th>interface</th><th>rx</th><th>tx</th>"
        page += "<th>max</th><th class=\"hide-narrow\">slots with traffic</th><th class=\"hide-narrow\">until</th></tr></thead><tbody>\n"
        for entry in result.subjects {
            let name = entry.name ?? entry.class
            let figure = entry.figure
            page += "<tr class=\"subject\" data-name=\"\(HTML.escape(name))\">"
            page += "<td class=\"name\"><a href=\"/subject?name=\(HTML.queryValue(name))\">\(HTML.escape(name))</a></td>"
            page += "<td>\(rate(figure.rxBytes))</td><td>\(rate(figure.txBytes))</td><td>\(rate(figure.maxBytes))</td>"
            page += "<td class=\"hide-narrow\">\(figure.slotsWithTraffic) of \(figure.slots)"
                + (entry.outlivedRetention ? " (retention_5min is shorter than the month)" : "") + "</td>"
            page += "<td class=\"hide-narrow\">\(HTML.escape(time.minute(Double(entry.end))))</td></tr>\n"
        }
        return page + "</tbody></table></div></section>\n"
    }
}
