import Foundation
import IfMeterTestSupport
import Testing

/// Data plans end to end: the real daemon and client on a veth pair in test namespaces, known
/// datagrams, figures compared with the kernel's counters (docs/PLANS.md).
@Suite("Data plans on real links", .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason), .serialized, .ownThread, .timeLimit(.minutes(10)))
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
        _ = try? daemon.stop(SIGKILL)
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

        try daemon.stop()
        try daemon.start(extraArguments: ["--interval", "3600"])
        try sample()
        #expect(try fired().map(\.0) == [0.25], "a restart fires nothing again")

        try daemon.stop()
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
        #expect(FileManager.default.createFile(atPath: followerErrors, contents: nil))
        follower.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: followerErrors))
        try follower.run()
        defer { if follower.isRunning { kill(follower.processIdentifier, SIGKILL) } }
        // It says so once it has subscribed and caught up.
        try waitFor("notify following") { self.lines(followerErrors).contains { $0.contains("following ifmeterd's plan events") } }
        try send(upTo: 0.8)
        try sample()
        try waitFor("notify ran for 75%") { self.lines(out) == ["cap 75 0"] }
        kill(follower.processIdentifier, SIGKILL)
        try follower.awaitExit("ifmeter notify after SIGKILL")

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

    @Test("a reload that changes one plan keeps the other's state; plan events are in the estimate log")
    func reloadKeepsState() throws {
        let other = """

            plan[all] = va
            plan[all].limit = \(Self.limit)
            plan[all].period = day
            plan[all].thresholds = 25%
            """
        let original = try String(contentsOfFile: daemon.config, encoding: .utf8)
        try (original + other).write(toFile: daemon.config, atomically: true, encoding: .utf8)
        baseline = try kernelTx()
        try daemon.start(extraArguments: ["--interval", "3600"])
        try #require(try kernelTx() == baseline, "va carried traffic while the daemon started")
        try send(upTo: 0.3)
        try sample()
        #expect(try fired().map(\.0).sorted() == [0.25, 0.25], "both plans crossed 25 %")
        // cap now counts rx (another plan: its watch starts afresh, and va received nothing);
        // all is unchanged and keeps what it fired.
        try (original.replacingOccurrences(of: "direction = tx", with: "direction = rx") + other)
            .write(toFile: daemon.config, atomically: true, encoding: .utf8)
        _ = try request(#"{"v":1,"cmd":"reload"}"#)
        try sample()
        #expect(try fired().count == 2, "nothing fired again after the reload")
        let plans = try #require(try request(#"{"v":1,"cmd":"plans"}"#)["plans"] as? [[String: Any]])
        #expect(plans.first { $0["name"] as? String == "all" }?["fired"] as? [Double] == [0.25])
        #expect(plans.first { $0["name"] as? String == "cap" }?["fired"] as? [Double] == [])
        try daemon.stop()
        let logged = try daemon.logRecords().filter { $0["type"] as? String == "event" && $0["kind"] as? String == "plan-threshold" }
        #expect(logged.count == 2, "the estimate log has both plan events")
        #expect(logged.allSatisfy { ($0["plan"] as? [String: Any])?["threshold"] as? Double == 0.25 })
    }

    @Test("notify --desktop: a real notification server (dunst on a session bus, under Xvfb) shows each plan event once",
          .enabled(if: DesktopSession.available, DesktopSession.skipReason))
    func desktop() throws {
        let session = try DesktopSession()
        defer { session.stop() }
        baseline = try kernelTx()
        try daemon.start(extraArguments: ["--interval", "3600"])
        try #require(try kernelTx() == baseline, "va carried traffic while the daemon started")
        let state = daemon.directory + "/notify.state"
        try "ifmeter-notify 1\n".write(toFile: state, atomically: true, encoding: .utf8)
        try send(upTo: 0.3)
        try sample()
        let notify = ["notify", "--state", state, "--desktop", "--once"]
        let environment = ["DBUS_SESSION_BUS_ADDRESS=\(session.address)"]
        let first = try pair.left.run(["env"] + environment + [CLIBinary.path, "--socket", daemon.socket] + notify)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(!first.stderr.contains("failed"), "\(first.stderr)")
        let again = try pair.left.run(["env"] + environment + [CLIBinary.path, "--socket", daemon.socket] + notify)
        #expect(again.status == 0, "\(again.stderr)")
        let shown = try session.shown()
        #expect(shown.filter { $0.contains("Data plan cap: 25% of its limit") }.count == 1, "\(shown)")
        #expect(shown.contains { $0.hasPrefix("ifmeter|") }, "shown as ifmeter's: \(shown)")
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

/// A desktop session for a test: Xvfb, a session bus, and dunst (a real freedesktop
/// notification server) on them; `shown()` is what dunst displayed, as "app|summary|body".
final class DesktopSession {
    static var available: Bool {
        ["dunst", "dunstctl", "Xvfb", "dbus-daemon"].allSatisfy { (try? Command.resolve($0)) != nil }
    }
    static let skipReason: Comment = "dunst, Xvfb or dbus-daemon is not installed (scripts/install-deps --test installs them)"

    private(set) var address = ""
    /// dbus-daemon and dunst, in the order started.
    private var processes: [pid_t] = []
    /// The X server, and the display it chose.
    private var x: pid_t?
    private var display = ""
    private let directory: TemporaryDirectory

    /// Each started with its signals unblocked (``SpawnWithSignals``): a test's own thread blocks
    /// them all, and a server started from it with Foundation's Process ignored SIGTERM, was
    /// killed 30 s later and left its socket behind.
    init() throws {
        directory = try TemporaryDirectory()
        do {
            // Xvfb picks a free display and writes its number once it accepts connections
            // (-displayfd): dunst started before that finds no display and exits.
            x = try SpawnWithSignals.start([try Command.resolve("Xvfb"), "-displayfd", "1", "-nolisten", "tcp"],
                                           output: directory.path + "/x")
            display = ":" + (try line(of: "x", from: x!, what: "Xvfb's display (-displayfd)") { $0.allSatisfy(\.isNumber) })
            // The bus in the foreground, its address on its output (a forked bus is no child to wait for).
            let bus = try SpawnWithSignals.start([try Command.resolve("dbus-daemon"), "--session", "--nofork", "--print-address=1"],
                                                 output: directory.path + "/bus")
            processes.append(bus)
            address = try line(of: "bus", from: bus, what: "the session bus's address") { $0.hasPrefix("unix:") }
            // Only what dunst needs, and the run's mark: the user's session stays out of it.
            let environment = ["DISPLAY=\(display)", "DBUS_SESSION_BUS_ADDRESS=\(address)", "HOME=\(directory.path)"]
                + TestRun.environment.map { "\($0.key)=\($0.value)" }
            let dunst = try SpawnWithSignals.start([try Command.resolve("env"), "-i"] + environment + [try Command.resolve("dunst")],
                                                   output: directory.path + "/dunst")
            processes.append(dunst)
            // Ready once it owns the Notifications name.
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                if let count = try? Command.run(["env", "DBUS_SESSION_BUS_ADDRESS=\(address)", "dunstctl", "count"], timeout: 10),
                   count.status == 0 { return }
                guard kill(dunst, 0) == 0 else {
                    throw CommandFailed(command: ["dunst"], result: CommandResult(status: -1, stdout: output("dunst"), stderr: "dunst exited on \(display)"))
                }
                usleep(50_000)
            }
            throw CommandFailed(command: ["dunst"], result: CommandResult(status: -1, stdout: output("dunst"), stderr: "dunst did not answer within 60 s"))
        } catch {
            stop()
            throw error
        }
    }

    private func output(_ name: String) -> String {
        (try? String(contentsOfFile: directory.path + "/" + name, encoding: .utf8)) ?? ""
    }

    /// The first line `pid` wrote to its output `name` that `matches`: what it recorded once ready.
    private func line(of name: String, from pid: pid_t, what: String, matches: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let lines = output(name).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
            if let found = lines.first(where: matches) { return found }
            var status: Int32 = 0
            guard waitpid(pid, &status, WNOHANG) == 0 else { break }
            usleep(20_000)
        }
        throw CommandFailed(command: [what], result: CommandResult(status: -1, stdout: output(name), stderr: "\(what): not within 60 s, or it exited"))
    }

    /// Every notification dunst showed: closed, then read from its history.
    func shown() throws -> [String] {
        _ = try Command.run(["env", "DBUS_SESSION_BUS_ADDRESS=\(address)", "dunstctl", "close-all"])
        let text = try Command.check(["env", "DBUS_SESSION_BUS_ADDRESS=\(address)", "dunstctl", "history"])
        let json = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        let entries = ((json?["data"] as? [[Any]])?.first as? [[String: Any]]) ?? []
        func field(_ entry: [String: Any], _ key: String) -> String { ((entry[key] as? [String: Any])?["data"] as? String) ?? "" }
        return entries.map { "\(field($0, "appname"))|\(field($0, "summary"))|\(field($0, "body"))" }
    }

    /// Ends dunst and the bus, then the X server, each with SIGTERM (and SIGKILL 30 s later);
    /// the X server removes its socket as it exits, or it is removed here.
    func stop() {
        var killed = false
        for pid in processes.reversed() + (x.map { [$0] } ?? []) {
            kill(pid, SIGTERM)
            killed = SpawnWithSignals.wait(pid, within: Process.exitDeadline) == nil && pid == x
        }
        processes = []
        x = nil
        if killed { unlink("/tmp/.X11-unix/X\(display.dropFirst())") }
        display = ""
    }

    deinit { stop() }
}

/// The shipped alerting rules, checked and unit-tested by Prometheus' own promtool.
@Suite("Plan alerting rules", .enabled(if: Promtool.available, Promtool.skipReason), .ownThread, .timeLimit(.minutes(10)))
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
