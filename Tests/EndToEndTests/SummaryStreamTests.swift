import Foundation
import IfMeterTestSupport
import Testing

/// The default view of hundreds of interfaces, which the daemon sends in parts and `ifmeter`
/// writes run by run on a second thread while it reads the rest: every interface once, in the
/// daemon's order, with the figures its JSON form has, and one footer at the end.
@Suite("summary of many interfaces, written as it arrives", .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason),
       .ownThread, .timeLimit(.minutes(10)))
struct SummaryStreamTests {
    @Test("600 links (three of the daemon's runs and more): the text names each once, in order, with its JSON form's figures")
    func manyInterfaces() throws {
        let namespace = try NetworkNamespace()
        let pairs = 300
        try namespace.ipBatch((0..<pairs).map { "link add a\($0) type veth peer name b\($0)" })
        try namespace.ipBatch((0..<pairs).flatMap { ["link set a\($0) up", "link set b\($0) up"] })
        let daemon = try DaemonProcess(namespace: namespace, config: "interval = 3600\n")
        try daemon.start()
        // Known bytes on a few links spread over the runs, so some blocks differ from the rest.
        for index in [0, 255, 256, 299] { try namespace.sendFrames(index + 1, from: "a\(index)") }
        let client = try daemon.client()
        #expect(try client.request(#"{"v":1,"id":1,"cmd":"sample"}"#)["ok"] as? Bool == true)

        func ifmeter(_ arguments: [String]) throws -> String {
            let result = try Command.run([CLIBinary.path, "--socket", daemon.socket] + arguments)
            #expect(result.status == 0, "ifmeter \(arguments): \(result.stderr)")
            return result.stdout
        }
        let text = try ifmeter([])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(try ifmeter(["--json"]).utf8)) as? [String: Any])
        let interfaces = try #require(json["interfaces"] as? [[String: Any]])
        let names = interfaces.compactMap { $0["name"] as? String }
        #expect(names.count == 2 * pairs, "every veth end is shown: \(names.count)")

        // Each block begins with the name at the start of a line: the same names, in the same order.
        let blockNames = text.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { line in line.contains("  (virtual)") && !line.hasPrefix(" ") }
            .map { String($0.prefix { $0 != " " }) }
        #expect(blockNames == names)
        // One footer, after the last block.
        let footnote = "Estimates from interface counters"
        #expect(text.components(separatedBy: footnote).count == 2)
        #expect(text.range(of: footnote)!.lowerBound > text.range(of: names.last! + "  (virtual)")!.lowerBound)

        // The links that carried frames: their all-time total in the text is the JSON form's.
        for index in [0, 255, 256, 299] {
            let entry = try #require(interfaces.first { $0["name"] as? String == "a\(index)" })
            let allTime = try #require(entry["all_time"] as? [String: Any])
            let tx = try #require((allTime["tx_bytes"] as? NSNumber)?.uint64Value)
            #expect(tx == UInt64(index + 1) * 100, "a\(index) sent \(index + 1) frames of 100 bytes")
            let block = try #require(("\n" + text).components(separatedBy: "\na\(index)  (virtual)").dropFirst().first)
            let line = try #require(block.split(separator: "\n").first { $0.hasPrefix("  all time") })
            #expect(line.contains(tx < 1024 ? "\(tx) B" : String(format: "%.2f KiB", Double(tx) / 1024)), "\(line)")
        }
        // Standard output closed: the view is not written into the daemon's socket (which would
        // take descriptor 1), nor does the client hang; a full disk fails it, with the reason.
        let closed = try Command.run(["/usr/bin/timeout", "60", "/bin/sh", "-c", "exec \"$0\" --socket \"$1\" >&-",
                                      CLIBinary.path, daemon.socket])
        #expect(closed.status == 0, "ifmeter >&-: \(closed.status) \(closed.stderr)")
        let full = try Command.run(["/usr/bin/timeout", "60", "/bin/sh", "-c", "exec \"$0\" --socket \"$1\" >/dev/full",
                                    CLIBinary.path, daemon.socket])
        #expect(full.status == 74 && full.stderr.contains("cannot write to standard output"), "\(full.status) \(full.stderr)")
        #expect(try client.request(#"{"v":1,"id":2,"cmd":"status"}"#)["ok"] as? Bool == true)
        #expect(try daemon.stop() == 0)
    }
}
