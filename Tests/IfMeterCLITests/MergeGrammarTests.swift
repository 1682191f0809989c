@testable import IfMeterCLI
import IfMeterTestSupport
import IfMeterWire
import Testing

/// `-i a+b`: the names summed as one subject, asked of the daemon as `interfaces` with `sum` (#61).
@Suite("ifmeter -i a+b", .ownThread, .timeLimit(.minutes(1)))
struct MergeGrammarTests {
    static func subjects(_ arguments: [String]) throws(CLIError) -> Subjects {
        try Subjects(ParsedCommandLine(arguments).parsed)
    }

    @Test("a merge is its members, asked as one summed subject; a list stays a list")
    func merge() throws {
        let merged = try Self.subjects(["days", "-i", "eth0+wlan0+Home uplink"])
        #expect(merged.interfaces == ["eth0", "wlan0", "Home uplink"] && merged.merged)
        let request = QueryRequest.query(for: merged, sum: true, usage: [UsageSpec(.day)])
        #expect(request.interfaces == ["eth0", "wlan0", "Home uplink"] && request.sum == true)
        let list = try Self.subjects(["days", "-i", "eth0,wlan0"])
        #expect(!list.merged)
        #expect(QueryRequest.query(for: list, usage: [UsageSpec(.day)]).sum == nil)
    }

    @Test("95th and chart keep a merge one summed subject: the percentile of the sum, not each member's; the chart of the sum, not the first member's")
    func mergeInPercentileAndChart() throws {
        let percentile = PercentileView.request(for: try Self.subjects(["95th", "-i", "eth0+wlan0"]))
        #expect(percentile.interfaces == ["eth0", "wlan0"] && percentile.sum == true)
        let list = PercentileView.request(for: try Self.subjects(["95th", "-i", "eth0,wlan0"]))
        #expect(list.interfaces == ["eth0", "wlan0"] && list.sum == nil)
        let chart = try ChartCommand(ParsedCommandLine(["chart", "days", "-i", "eth0+wlan0"]).parsed)
        #expect(chart.table.subjects.interfaces == ["eth0", "wlan0"] && chart.table.subjects.merged)
        let first = try ChartCommand(ParsedCommandLine(["chart", "days", "-i", "eth0,wlan0"]).parsed)
        #expect(first.table.subjects.interfaces == ["eth0"])
    }

    @Test("a merge that is not one is refused, saying what a merge is",
          arguments: [["-i", "eth0+"], ["-i", "+eth0"], ["-i", "eth0++wlan0"], ["-i", "eth0+eth0"], ["-i", "eth0+wlan0,wg0"],
                      ["-i", "eth0+wlan0", "-i", "wg0"]])
    func refused(arguments: [String]) {
        #expect(throws: CLIError.self) { try Self.subjects(["days"] + arguments) }
        do {
            _ = try Self.subjects(["days"] + arguments)
        } catch {
            #expect(error.status == .usage)
            #expect(error.message.contains("merge"), "\(error.message)")
        }
    }
}
