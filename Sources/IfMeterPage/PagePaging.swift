import IfMeterWire

/// Which rows of the overview's two long tables a load shows: at most ``rows`` of the
/// interfaces and of the owners, from the offsets in the address (`/?interfaces=N&owners=M`),
/// so the page of a host with ten thousand links renders in bounded time and size.
public struct PagePaging: Hashable, Sendable {
    /// Rows of one table on one load: what the page renders well within 100 ms on a two-core
    /// machine (docs/BENCHMARKS.md), all of them at up to a thousand.
    public static let rows = 1000

    public var interfaces = 0
    public var owners = 0

    public init(interfaces: Int = 0, owners: Int = 0) {
        (self.interfaces, self.owners) = (interfaces, owners)
    }

    /// From the address's arguments: each a whole number of rows to pass over; anything else
    /// is the first rows.
    public init(arguments: (String) -> String?) {
        func offset(_ key: String) -> Int {
            guard let text = arguments(key), let value = Int(text), (0...RequestLine.maximumOffset).contains(value) else { return 0 }
            return value
        }
        self.init(interfaces: offset("interfaces"), owners: offset("owners"))
    }

    /// The address of the page with `interfaces` and `owners` as offsets.
    static func address(interfaces: Int, owners: Int) -> String {
        interfaces == 0 && owners == 0 ? "/" : "/?interfaces=\(interfaces)&amp;owners=\(owners)"
    }

    /// The line over a table whose answer holds some of its subjects: which rows these are, and
    /// links to the other pages; nothing when it holds them all.
    static func pager(_ answer: QueryResult, offset: Int, other: Int, isInterfaces: Bool) -> String {
        guard let total = answer.subjectsTotal, total > rows || offset > 0 else { return "" }
        let shown = answer.subjects.count
        func link(_ to: Int, _ text: String) -> String {
            let target = isInterfaces ? address(interfaces: to, owners: other) : address(interfaces: other, owners: to)
            return "<a href=\"\(target)\">\(text)</a>"
        }
        var line = "<p class=\"pager\">Rows \(shown == 0 ? offset : offset + 1)–\(offset + shown) of \(total)"
        // Past the end (an old or typed address), "previous" leads to the last page.
        if offset > 0 { line += " · " + link(min(max(0, offset - rows), lastPage(total)), "previous \(rows)") }
        if offset + shown < total { line += " · " + link(offset + rows, "next \(min(rows, total - offset - shown))") }
        return line + "</p>\n"
    }

    /// Where the last page of `total` rows begins.
    static func lastPage(_ total: Int) -> Int { total == 0 ? 0 : (total - 1) / rows * rows }

    /// What a table says when this page holds none of its rows and others do (an address past
    /// the end); nil when the table has no rows at all.
    static func pastTheEnd(_ answer: QueryResult, other: Int, isInterfaces: Bool) -> String? {
        guard answer.subjects.isEmpty, let total = answer.subjectsTotal, total > 0 else { return nil }
        let first = isInterfaces ? address(interfaces: 0, owners: other) : address(interfaces: other, owners: 0)
        return "<p class=\"facts\">This page is past the last of the \(total) rows: see <a href=\"\(first)\">the first page</a>.</p>\n"
    }
}
