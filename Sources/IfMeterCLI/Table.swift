import IfMeterCore

/// Columns of text, padded to line up: numbers to the right, words to the left.
struct Table {
    enum Alignment { case left, right }

    var alignments: [Alignment]
    var rows: [[String]] = []
    var indent = ""

    init(_ alignments: [Alignment], indent: String = "") {
        self.alignments = alignments
        self.indent = indent
    }

    mutating func add(_ cells: [String]) { rows.append(cells) }

    func render() -> String {
        var widths = [Int](repeating: 0, count: alignments.count)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], cell.count)
            }
        }
        return rows.map { row in
            var line = indent
            for (index, cell) in row.enumerated() {
                let pad = String(repeating: " ", count: max(0, widths[index] - cell.count))
                if index > 0 { line += "  " }
                line += alignments[index] == .right ? pad + cell : (index == row.count - 1 ? cell : cell + pad)
            }
            return String(line.reversed().drop { $0 == " " }.reversed())
        }.joined(separator: "\n") + "\n"
    }
}

/// The marks a figure gets when its period had a reset, a gap or a dropped implausible delta,
/// and the legend that explains the ones used.
struct Marks {
    private(set) var used = Set<Character>()

    static let legend: [(Character, String)] = [
        ("*", "a counter reset in this period (counting went on from zero)"),
        ("!", "a gap in this period (not sampled for a while: traffic then is attributed to when counting resumed)"),
        ("~", "an implausible jump in this period was left out"),
        ("?", "link events were lost in this period (links that came and went then may be missing)"),
        ("v", "includes traffic imported from vnStat (its own counting, with its losses at resets)"),
    ]

    mutating func mark(_ continuity: Continuity) -> String {
        var text = ""
        if continuity.resets > 0 { text.append("*") }
        if continuity.gaps > 0 { text.append("!") }
        if continuity.implausibleDropped > 0 { text.append("~") }
        if continuity.eventsLost > 0 { text.append("?") }
        if continuity.imported { text.append("v") }
        used.formUnion(text)
        return text
    }

    /// The legend lines for the marks used, then the estimate footnote.
    func footer(_ footnote: String = EstimateLabel.footnote) -> String {
        var text = ""
        for (mark, meaning) in Self.legend where used.contains(mark) {
            text += "\(mark) \(meaning)\n"
        }
        return text + footnote + "\n"
    }
}
