import Foundation
import IfMeterTestSupport
import Testing

/// Aliases and `-i a+b` end to end (#61): the real daemon and client, two veth links in a test
/// namespace (va with IPv4 datagrams, vc with raw frames and no IPv6), figures compared with the
/// kernel's counters.
@Suite("Aliases and merged views on real links", .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason),
       .serialized, .ownThread, .timeLimit(.minutes(5)))
final class AliasMergeEndToEndTests {
    let pair: VethPair
    let daemon: DaemonProcess
    static let alias = #"Home "uplink" <b>é</b>"#

    init() throws {
        pair = try VethPair(leftName: "va", rightName: "vb", subnet: 93)
        for (side, name) in [(pair.left, "va"), (pair.right, "vb")] {
            _ = try side.exec(["sysctl", "-qw", "net.ipv6.conf.\(name).disable_ipv6=1"])
        }
        // A second link, with no IPv6 from before it is up: it carries only the test's frames.
        try pair.left.ip("link", "add", "vc", "type", "veth", "peer", "name", "vd", "netns", pair.right.name)
        _ = try pair.left.exec(["sysctl", "-qw", "net.ipv6.conf.vc.disable_ipv6=1"])
        _ = try pair.right.exec(["sysctl", "-qw", "net.ipv6.conf.vd.disable_ipv6=1"])
        try pair.left.ip("link", "set", "vc", "up")
        try pair.right.ip("link", "set", "vd", "up")
        try pair.left.waitForOperstate("vc", "up")
        daemon = try DaemonProcess(namespace: pair.left, config: "alias[va] = \(Self.alias)\n")
    }

    deinit {
        _ = try? daemon.stop(SIGKILL)
        pair.left.delete()
        pair.right.delete()
    }

    func kernel(_ name: String) throws -> (rx: UInt64, tx: UInt64) {
        (try pair.left.sysfsCounter(name, "rx_bytes"), try pair.left.sysfsCounter(name, "tx_bytes"))
    }

    func ifmeter(_ arguments: [String]) throws -> CommandResult {
        try pair.left.run([CLIBinary.path, "--socket", daemon.socket] + arguments)
    }

    func json(_ arguments: [String]) throws -> [String: Any] {
        let result = try ifmeter(arguments + ["--json"])
        try #require(result.status == 0, "\(arguments): \(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    /// The summary's all-time rx and tx of its one subject, with its name and alias.
    func allTime(_ arguments: [String]) throws -> (name: String?, alias: String?, rx: UInt64?, tx: UInt64?) {
        let interfaces = try #require(try json(arguments)["interfaces"] as? [[String: Any]])
        try #require(interfaces.count == 1, "\(interfaces)")
        let total = interfaces[0]["all_time"] as? [String: Any]
        return (interfaces[0]["name"] as? String, interfaces[0]["alias"] as? String,
                total?["rx_bytes"] as? UInt64, total?["tx_bytes"] as? UInt64)
    }

    @Test("-i va+vc is the sum of both links' kernel counters exactly, in the summary and by day; an alias is shown, taken by -i, and escaped")
    func aliasAndMerge() throws {
        let before = (va: try kernel("va"), vc: try kernel("vc"))
        try daemon.start(extraArguments: ["--interval", "3600"])
        #expect(try kernel("va") == before.va && kernel("vc") == before.vc, "no traffic while the daemon started")
        try pair.sendLeftToRight(count: 40, payload: 1000)
        try pair.sendRightToLeft(count: 7, payload: 500)
        try pair.left.sendFrames(25, from: "vc")
        let after = (va: try kernel("va"), vc: try kernel("vc"))
        let expected = (rx: after.va.rx - before.va.rx + after.vc.rx - before.vc.rx,
                        tx: after.va.tx - before.va.tx + after.vc.tx - before.vc.tx)
        #expect(after.vc.tx - before.vc.tx == 2500, "25 frames of 100 bytes")
        _ = try daemon.client().request(#"{"v":1,"cmd":"sample"}"#)

        // The merge: the summary's all time, and the days' rows summed, equal the kernel's.
        let merged = try allTime(["-i", "va+vc"])
        #expect(merged.name == "va+vc")
        #expect(merged.rx == expected.rx && merged.tx == expected.tx, "\(merged) vs \(expected)")
        let days = try #require(try json(["days", "-i", "va+vc"])["usage"] as? [[String: Any]])
        #expect(days.count == 1 && days[0]["interface"] as? String == "va+vc")
        let rows = try #require(days[0]["rows"] as? [[String: Any]])
        #expect(rows.reduce(UInt64(0)) { $0 + ($1["rx_bytes"] as? UInt64 ?? 0) } == expected.rx)
        #expect(rows.reduce(UInt64(0)) { $0 + ($1["tx_bytes"] as? UInt64 ?? 0) } == expected.tx)
        let text = try ifmeter(["days", "-i", "va+vc"])
        #expect(text.status == 0 && text.stdout.contains("va+vc"), "\(text.stdout)\(text.stderr)")
        let unknown = try ifmeter(["-i", "va+nope0"])
        #expect(unknown.status == 64 && unknown.stderr.contains("\"nope0\""), "\(unknown.stderr)")

        // The alias: shown beside the name, in JSON exactly, and -i takes it for va.
        let byName = try allTime(["-i", "va"])
        #expect(byName.alias == Self.alias)
        #expect(byName.rx == after.va.rx - before.va.rx && byName.tx == after.va.tx - before.va.tx)
        let byAlias = try allTime(["-i", Self.alias])
        #expect(byAlias.name == "va" && byAlias.rx == byName.rx && byAlias.tx == byName.tx)
        let summary = try ifmeter(["-i", "va"])
        #expect(summary.stdout.hasPrefix("\(Self.alias) (va)  ("), "\(summary.stdout)")
        let metrics = try ifmeter(["metrics"]).stdout
        #expect(metrics.contains(#"alias="Home \"uplink\" <b>é</b>"} 1"#), "the alias label, escaped")

        // An admin's alias for vc, usable in a merge of aliases; the config's for va stays.
        let set = try ifmeter(["alias", "vc", "Lab"])
        #expect(set.status == 0, "\(set.stderr)")
        let refused = try ifmeter(["alias", "va", "Other"])
        #expect(refused.status == 64 || refused.status == 70, "\(refused.stderr)")
        #expect(refused.stderr.contains("config"), "\(refused.stderr)")
        let byAliases = try allTime(["-i", "\(Self.alias)+Lab"])
        #expect(byAliases.name == "va+vc" && byAliases.alias == "\(Self.alias)+Lab")
        #expect(byAliases.rx == expected.rx && byAliases.tx == expected.tx)

        // Kept across a restart; a reload replaces the config's.
        try daemon.stop()
        try daemon.start(extraArguments: ["--interval", "3600"])
        #expect(try allTime(["-i", "Lab"]).name == "vc")
        try "alias[va] = Uplink\n".write(toFile: daemon.config, atomically: true, encoding: .utf8)
        let reload = try daemon.client().request(#"{"v":1,"cmd":"reload"}"#)
        #expect(reload["ok"] as? Bool == true, "\(reload)")
        #expect(try allTime(["-i", "Uplink"]).alias == "Uplink")
        #expect(try ifmeter(["-i", Self.alias]).status == 64, "the old alias names nothing after the reload")
    }
}
