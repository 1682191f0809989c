import IfMeterPresentation
import IfMeterCore
import IfMeterWire
import IfMeterTestSupport
import Testing

@Suite("ifmeter chart", .ownThread, .timeLimit(.minutes(3)))
struct SVGChartTests {
    @Test("bars are proportional to the data on a round axis")
    func bars() throws {
        let rows = [(3, 1), (6, 2), (0, 0)].enumerated().map { (index: Int, pair: (Int, Int)) -> UsageRowResult in
            let fields = UsageRowFields(start: Double(index) * 86400, end: Double(index + 1) * 86400,
                                        continuity: Continuity(), labels: [])
            return UsageRowResult(fields, traffic: Traffic(rxBytes: UInt64(pair.0) << 20, txBytes: UInt64(pair.1) << 20))
        }
        let usage = UsageResult(interface: "eth0", class: nil, period: "day", rows: rows, projection: nil, footnote: "")
        let svg = SVGChart.render(usage, subject: "eth0", time: TimeText(utc: true), units: Units())
        #expect(SVGChart.axis(peak: 8 << 20, units: Units()) == (Double(8 << 20), Double(2 << 20)))
        // 8 MiB is the axis top: 250 px. 6 MiB rx is 187.5 px, 2 MiB tx 62.5 px.
        #expect(svg.contains(#"<rect class="rx" x="#) && svg.contains(##"height="187.5" fill="#3b75af""##))
        #expect(svg.contains(##"height="62.5" fill="#ef8636""##))
        #expect(svg.contains("data-rx-bytes=\"\(6 << 20)\""))
        #expect(svg.contains("Estimate (estimate, interface-counters, not-per-app, includes-overhead)"))
        #expect(SVGChart.escape("a<b & \"c\"") == "a&lt;b &amp; &quot;c&quot;")
    }

    /// U+0600 (a prepended concatenation mark) and `<` form one grapheme cluster: compared as
    /// `Character`s, the `<` went through raw and a name put tags into the chart.
    @Test("markup is escaped by Unicode scalar: a mark that joins the next character hides no < & \" from the escaper",
          arguments: ["\u{0600}<plaintext>", "\u{0600}<!--", "\u{0600}&x", "\u{0600}\"q", "a\u{0301}<b", "\r\n<", "\u{0600}>", "a\u{1}b\u{1B}"])
    func escapedByScalar(_ name: String) {
        let escaped = Array(SVGChart.escape(name).utf8)
        #expect(!escaped.contains(UInt8(ascii: "<")) && !escaped.contains(UInt8(ascii: ">")) && !escaped.contains(UInt8(ascii: "\"")), "\(escaped)")
        #expect(escaped.count(where: { $0 == UInt8(ascii: "&") }) == name.unicodeScalars.count(where: { "<>&\"".unicodeScalars.contains($0) }))
        let rows = [UsageRowResult(UsageRowFields(start: 1_790_000_000, end: 1_790_086_400, continuity: Continuity(), labels: []),
                                   traffic: Traffic(rxBytes: 5, txBytes: 7))]
        let svg = Array(SVGChart.render(UsageResult(interface: name, class: nil, period: "day", rows: rows, projection: nil, footnote: ""),
                                        subject: name, time: TimeText(utc: true), units: Units()).utf8)
        #expect(svg.firstRange(of: Array("<plaintext".utf8)) == nil && svg.firstRange(of: Array("<!--".utf8)) == nil)
        #expect(!svg.contains(1) && !svg.contains(0x1B), "XML forbids them")
    }
}
