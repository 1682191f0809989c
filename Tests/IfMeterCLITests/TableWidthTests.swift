@testable import IfMeterCLI
import IfMeterCore
import Testing

/// Columns line up as the terminal shows them: ``Output`` escapes control characters in names
/// (`\x1b`), so a hostile interface name is measured escaped, not as the bytes it is.
@Suite("Table widths as shown", .ownThread, .timeLimit(.minutes(1)))
struct TableWidthTests {
    @Test("a name with an escape, a tab-free control and non-ASCII lines up with plain ones", arguments: [
        "z\u{1B}[31m", "e\u{7}x", "zé", "naïve\u{202E}",
    ])
    func escapedNamesAlign(name: String) {
        var table = Table([.left, .right])
        table.add(["eth0", "1.0 MB"])
        table.add([name, "22.5 kB"])
        table.add(["wlan0", "3 B"])
        var shown: [UInt8] = []
        InterfaceName.appendPrintable(table.render(), keepingLines: true, to: &shown)
        let lines = String(decoding: shown, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 3)
        let ends = lines.map(\.count)
        #expect(Set(ends).count == 1, "every row ends in the same column: \(lines)")
    }
}
