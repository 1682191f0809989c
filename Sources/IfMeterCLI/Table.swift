import IfMeterCore

/// Columns of text, padded to line up: numbers to the right, words to the left. Rendered as
/// bytes: a view of thousands of interfaces is tens of thousands of lines, and generic
/// `String` work per cell cost more than the daemon's whole answer (docs/BENCHMARKS.md).
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

    /// The rows, each ending in a newline, trailing spaces dropped.
    func render() -> String {
        var bytes: [UInt8] = []
        render(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// ``render()`` appended to `output`.
    func render(into output: inout [UInt8]) {
        guard !rows.isEmpty else { return output.append(0x0a) }
        // Widths in characters, measured once per cell: an ASCII cell's is its byte count.
        let widths = rows.map { $0.map(Self.width) }
        var columns = [Int](repeating: 0, count: alignments.count)
        for row in widths {
            for (index, width) in row.enumerated() where index < columns.count { columns[index] = max(columns[index], width) }
        }
        let space = UInt8(ascii: " ")
        for (row, cellWidths) in zip(rows, widths) {
            let start = output.count
            output.append(contentsOf: indent.utf8)
            for (index, cell) in row.enumerated() {
                let pad = max(0, columns[index] - cellWidths[index])
                if index > 0 { output.append(space); output.append(space) }
                if alignments[index] == .right {
                    output.append(contentsOf: repeatElement(space, count: pad))
                    output.append(contentsOf: cell.utf8)
                } else {
                    output.append(contentsOf: cell.utf8)
                    if index != row.count - 1 { output.append(contentsOf: repeatElement(space, count: pad)) }
                }
            }
            while output.count > start, output.last == space { output.removeLast() }
            output.append(0x0a)
        }
    }

    /// As the terminal shows it: ``Output`` writes control and direction-override characters
    /// escaped (`\x1b`), wider than they are, so a hostile name would push its row's columns.
    private static func width(_ cell: String) -> Int {
        if cell.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return cell.utf8.count }
        var shown: [UInt8] = []
        InterfaceName.appendPrintable(cell, keepingLines: true, to: &shown)
        return String(decoding: shown, as: UTF8.self).count
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
