import Foundation
import IfMeterCore
@testable import IfMeterPage
import IfMeterPresentation
import IfMeterWire
import IfMeterTestSupport
import Testing

/// Node.js, which runs the page's script for the tests with a stand-in for the browser's
/// document and `fetch`.
enum Node {
    static var available: Bool { (try? Command.resolve("node")) != nil }
    static let skipReason: Comment = "node is not installed (Debian package nodejs; scripts/install-deps --test installs it)"

    /// Reads the script's `/api/v1/rates` from `ratesLine` and prints, as a JSON array, what it
    /// wrote in each rate cell (one cell per interface of the line). The script ends a poll by
    /// setting its timer for the next one: the cells are written by then.
    static let harness = #"""
        "use strict";
        const fs = require("fs");
        const [scriptPath, ratesPath] = process.argv.slice(2);
        const ratesLine = fs.readFileSync(ratesPath, "utf8");
        const cells = JSON.parse(ratesLine).result.interfaces.map(function (entry) {
          return { dataset: { rate: entry.name }, textContent: "" };
        });
        globalThis.document = {
          querySelectorAll: function (selector) { return selector === "[data-rate]" ? cells : []; },
          getElementById: function () { return null; },
          body: { dataset: { interval: "30" } },
        };
        globalThis.window = {
          setTimeout: function () { process.stdout.write(JSON.stringify(cells.map(function (cell) { return cell.textContent; }))); },
        };
        globalThis.fetch = async function () { return { ok: true, json: async function () { return JSON.parse(ratesLine); } }; };
        require("vm").runInThisContext(fs.readFileSync(scriptPath, "utf8"), { filename: "ifmeter.js" });
        """#
}

/// The page's rate cells are written twice: by the daemon when it renders the page, and by the
/// page's script after each sample. Both must read the same for the same rate.
@Suite("The page's script and Units", .enabled(if: Node.available, Node.skipReason), .ownThread, .timeLimit(.minutes(3)))
struct PageScriptUnitsTests {
    /// Rates at every place the rules could part: each unit's step and the values around it,
    /// what rounds up into the next unit, half-hundredths of every unit (where rounding the
    /// value times 100 and rounding the binary value's exact decimals differ), and a spread of
    /// magnitudes up to far past EiB.
    static var rates: [Double] {
        var rates: [Double] = [0, 0.25, 0.4, 0.5, 0.6, 1, 1.5, 2.5, 99.5, 511.5, 1000, 1023, 1023.4, 1023.5, 1023.99]
        for exponent in 1...6 {
            let unit = Double(1 << (10 * exponent))
            rates += [unit - 1, unit - 0.5, unit, unit + 0.5, unit + 1, unit * 1.005, unit * 1.125, unit * 1023.995,
                      unit * 1023.996, unit * 1024 - unit / 1000]
            for hundredths in stride(from: 100, to: 102_400, by: 997) {
                rates.append((Double(hundredths) + 0.5) / 100 * unit)
            }
        }
        // SplitMix64: the same spread on every run.
        var state: UInt64 = 0x1f_2e3d_4c5b
        for _ in 0..<2000 {
            state &+= 0x9e37_79b9_7f4a_7c15
            var mixed = (state ^ (state >> 30)) &* 0xbf58_476d_1ce4_e5b9
            mixed = (mixed ^ (mixed >> 27)) &* 0x94d0_49bb_1331_11eb
            mixed ^= mixed >> 31
            let magnitude = Double(mixed % 25)
            rates.append(Double(mixed >> 11) / 0x1p53 * pow(10, magnitude))
        }
        return rates
    }

    @Test("every rate the script writes in a cell is the text the daemon's page has for it")
    func ratesMatch() throws {
        let rates = Self.rates
        let entries = rates.indices.map { index in
            RatesResult.Entry(name: "link\(index)", rate: RateResult(
                rxBytesPerSecond: rates[index], txBytesPerSecond: rates[rates.count - 1 - index],
                smoothedRxBytesPerSecond: 0, smoothedTxBytesPerSecond: 0))
        }
        let directory = try TemporaryDirectory()
        let script = try #require(PageAssets.asset("ifmeter.js")).body
        try Data(script).write(to: URL(fileURLWithPath: directory.path + "/ifmeter.js"))
        try Data(LineEncoder.success(RatesResult(at: 1_796_083_200, interfaces: entries), id: nil, stream: "rates"))
            .write(to: URL(fileURLWithPath: directory.path + "/rates.json"))
        try Data(Node.harness.utf8).write(to: URL(fileURLWithPath: directory.path + "/harness.js"))

        let run = try Command.run(["node", directory.path + "/harness.js", directory.path + "/ifmeter.js", directory.path + "/rates.json"])
        #expect(run.status == 0, "\(run.stderr)")
        let written = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String], "\(run.stdout)")
        try #require(written.count == entries.count)
        var differences: [String] = []
        for (entry, text) in zip(entries, written) where text != OverviewPage.rate(entry.rate, Units()) {
            differences.append("\(entry.rate.rxBytesPerSecond), \(entry.rate.txBytesPerSecond): script \(text), "
                               + "page \(OverviewPage.rate(entry.rate, Units()))")
        }
        let differing = differences.count
        #expect(differing == 0, "of \(entries.count) cells; the first:\n\(differences.prefix(20).joined(separator: "\n"))")
    }
}
