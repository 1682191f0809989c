import Foundation
import IfMeterTestSupport
import Testing

/// Data plans end to end: the real daemon and client on a veth pair in test namespaces, known
/// datagrams, figures compared with the kernel's counters (docs/PLANS.md).
@Suite("Data plans on real links", .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason), .serialized)
final class PlansTests {
    let pair: VethPair
    let daemon: DaemonProcess
    /// va's transmitted bytes when the daemon first saw it: the plan counts from there.
    var baseline: UInt64 = 0
    static let limit: UInt64 = 100_000

    init() throws {
        pair = try VethPair(leftName: "va", rightName: "vb", subnet: 91)
        // No IPv6 neighbour discovery and static neighbours: va carries only the test's datagrams.
        for (side, name) in [(pair.left, "va"), (pair.right, "vb")] {
            _ = try side.exec(["sysctl", "-qw", "net.ipv6.conf.\(name).disable_ipv6=1"])
        }
        daemon = try DaemonProcess(namespace: pair.left, config: """
            plan[cap] = va
            plan[cap].limit = \(Self.limit)
            plan[cap].period = day
            plan[cap].direction = tx
            plan[cap].thresholds = 25%, 50%, 75%, 100%
            """)
    }

    deinit {
        daemon.stop(SIGKILL)
        pair.left.delete()
        pair.right.delete()
    }

    func kernelTx() throws -> UInt64 { try pair.left.sysfsCounter("va", "tx_bytes") }

    func request(_ line: String) throws -> [String: Any] {
        let reply = try daemon.client().request(line)
        return try #require(reply["result"] as? [String: Any], "\(reply)")
    }

    func sample() throws { _ = try request(#"{"v":1,"cmd":"sample"}"#) }

    func plan() throws -> [String: Any] {
        let plans = try #require(try request(#"{"v":1,"cmd":"plans"}"#)["plans"] as? [[String: Any]])
        return try #require(plans.first)
    }

    /// The stored plan-threshold events: (threshold, while_down).
    func fired() throws -> [(Double, Bool)] {
        let events = try #require(try request(#"{"v":1,"cmd":"events","kind":"plan-threshold"}"#)["events"] as? [[String: Any]])
        return events.compactMap { event in
            (event["plan"] as? [String: Any]).map { ($0["threshold"] as? Double ?? -1, $0["while_down"] as? Bool ?? false) }
        }
    }

    /// Sends datagrams until va has sent `share` of the limit since the baseline (and a little more).
    func send(upTo share: Double) throws {
        let target = baseline + UInt64(Double(Self.limit) * share) + 1
        let now = try kernelTx()
        guard now < target else { return }
        try pair.sendLeftToRight(count: Int((target - now) / 1042) + 1, payload: 1000)
    }

    func ifmeter(_ arguments: [String]) throws -> CommandResult {
        try pair.left.run([CLIBinary.path, "--socket", daemon.socket] + arguments)
    }

    @Test("each threshold fires once, at the sample that crossed it, across restarts and a crossing while stopped; notify acts once per event across kill -9")
    func thresholds() throws {
        baseline = try kernelTx()
        try daemon.start(extraArguments: ["--interval", "3600"])
        try #require(try kernelTx() == baseline, "va carried traffic while the daemon started")
        try sample()
        #expect(try fired().isEmpty)

        try send(upTo: 0.3)
        try sample()
        #expect(try fired().map(\.0) == [0.25])
        var figures = try plan()
        #expect(figures["used_bytes"] as? UInt64 == (try kernelTx()) - baseline, "the plan's used is the kernel's tx since first sight")
        #expect(figures["fired"] as? [Double] == [0.25])
        let metrics = try ifmeter(["metrics"]).stdout
        #expect(metrics.contains("ifmeter_plan_used_bytes{plan=\"cap\",direction=\"tx\"} \(try kernelTx() - baseline)\n"))

        daemon.stop()
        try daemon.start(extraArguments: ["--interval", "3600"])
        try sample()
        #expect(try fired().map(\.0) == [0.25], "a restart fires nothing again")

        daemon.stop()
        try send(upTo: 0.55)
        try daemon.start(extraArguments: ["--interval", "3600"])
        try sample()
        let afterStop = try fired()
        #expect(afterStop.map(\.0) == [0.25, 0.5])
        #expect(afterStop.last?.1 == true, "crossed while stopped: marked so")
        figures = try plan()
        #expect(figures["used_bytes"] as? UInt64 == (try kernelTx()) - baseline)

        let state = daemon.directory + "/notify.state"
        let out = daemon.directory + "/notified"
        let notify = ["notify", "--state", state, "--exec", "echo \"$IFMETER_PLAN $IFMETER_THRESHOLD $IFMETER_WHILE_DOWN\" >> \(out)"]
        let first = try ifmeter(notify + ["--once"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("2 earlier plan event(s) remembered"))
        #expect(!FileManager.default.fileExists(atPath: out), "the first run acts on nothing old")

        // Following the stream: 75 % is acted on as it fires; then it is killed.
        let follower = Process()
        follower.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
        follower.arguments = ["netns", "exec", pair.left.name, CLIBinary.path, "--socket", daemon.socket] + notify
        let followerErrors = daemon.directory + "/notify.stderr"
        FileManager.default.createFile(atPath: followerErrors, contents: nil)
        follower.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: followerErrors))
        try follower.run()
        defer { if follower.isRunning { kill(follower.processIdentifier, SIGKILL) } }
        // It says so once it has subscribed and caught up.
        try waitFor("notify following") { self.lines(followerErrors).contains { $0.contains("following ifmeterd's plan events") } }
        try send(upTo: 0.8)
        try sample()
        try waitFor("notify ran for 75%") { self.lines(out) == ["cap 75 0"] }
        kill(follower.processIdentifier, SIGKILL)
        follower.waitUntilExit()

        try send(upTo: 1.05)
        try sample()
        #expect(try fired().map(\.0) == [0.25, 0.5, 0.75, 1])
        #expect(try ifmeter(notify + ["--once"]).status == 0)
        #expect(lines(out) == ["cap 75 0", "cap 100 0"], "caught up after its kill -9: 100 % once, 75 % not again")
        #expect(try ifmeter(notify + ["--once"]).status == 0)
        #expect(lines(out) == ["cap 75 0", "cap 100 0"])

        let check = try ifmeter(["check", "--plan", "cap"])
        #expect(check.status == 2, "over the limit is CRITICAL")
        #expect(check.stdout.hasPrefix("CRITICAL: plan cap used"))
        let text = try ifmeter(["plans"])
        #expect(text.status == 0)
        #expect(text.stdout.contains("cap: over its limit by"))
    }

    func lines(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Polls `condition` until it holds, failing after a generous deadline (never a timing assertion).
    func waitFor(_ what: String, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if try condition() { return }
            usleep(20_000)
        }
        Issue.record("\(what): not within 60 s")
        throw CancellationError()
    }
}

/// The shipped alerting rules, checked and unit-tested by Prometheus' own promtool.
@Suite("Plan alerting rules", .enabled(if: Promtool.available, Promtool.skipReason))
struct PlanRulesTests {
    static let rules = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Rules").path

    @Test("promtool check rules and test rules: threshold, limit and projection alerts fire when they should")
    func promtoolTestRules() throws {
        let checked = try Command.run(["promtool", "check", "rules", Self.rules + "/../../../docs/examples/ifmeter-plans.rules.yml"])
        #expect(checked.status == 0, "\(checked.stdout)\(checked.stderr)")
        let tested = try Command.run(["promtool", "test", "rules", Self.rules + "/ifmeter-plans.test.yml"])
        #expect(tested.status == 0, "\(tested.stdout)\(tested.stderr)")
        #expect(tested.stdout.contains("SUCCESS"))
    }
}
