import Foundation
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Debian's chromium, chromium-driver and python3-selenium, which Tests/tools/page-browser-test drives.
enum Browser {
    static var available: Bool {
        ["/usr/bin/chromium", "/usr/bin/chromedriver", "/usr/lib/python3/dist-packages/selenium"].allSatisfy {
            FileManager.default.fileExists(atPath: $0)
        }
    }
    static let skipReason: Comment = "needs Debian's chromium, chromium-driver and python3-selenium (scripts/install-deps --test)"

    /// Where the screenshots are kept for a person to look at.
    static var screenshots: String { Daemon.packageRoot + "/.build/test-artifacts/page" }
}

/// The page in a real browser (docs/CLI.md, "The page"): a daemon as the unit runs it, with a
/// plan, two veths carrying known traffic (one named `<b>x`) and a Podman container; the
/// page's figures against the kernel's counters and `ifmeter plans`, the live rates after a
/// sample without a reload, no console error, screenshots at two widths in light and dark.
@Suite("The page in a real browser", .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason),
       .enabled(if: Browser.available, Browser.skipReason), .enabled(if: Podman.available, Podman.skipReason),
       .serialized, .ownThread, .timeLimit(.minutes(10)))
final class PageTests {
    let pair: VethPair
    let daemon: DaemonProcess
    static let port = 10951
    static let hostile = "<b>x"

    init() throws {
        pair = try VethPair(leftName: "pa", rightName: "pb", subnet: 96)
        // No IPv6 neighbour discovery: the links carry only the test's datagrams.
        for (side, name) in [(pair.left, "pa"), (pair.right, "pb")] {
            _ = try side.exec(["sysctl", "-qw", "net.ipv6.conf.\(name).disable_ipv6=1"])
        }
        daemon = try DaemonProcess(namespace: pair.left, config: """
            interval = 2
            metrics_listen = 127.0.0.1:\(Self.port)
            plan[cap] = pa
            plan[cap].limit = 10M
            plan[cap].period = month
            plan[cap].thresholds = 1%, 50%
            """)
    }

    deinit {
        _ = try? daemon.stop(SIGKILL)
        Podman.remove("page")
        pair.left.delete()
        pair.right.delete()
    }

    func counters(_ name: String, in namespace: NetworkNamespace) throws -> (rx: UInt64, tx: UInt64) {
        (try namespace.sysfsCounter(name, "rx_bytes"), try namespace.sysfsCounter(name, "tx_bytes"))
    }

    /// Datagrams from the left namespace to the right over the link whose addresses are given.
    func send(_ count: Int, from: String, to: String) throws {
        let receiver = try pair.right.inside { try UDPSocket(bindTo: to, port: 9100) }
        let sender = try pair.left.inside { try UDPSocket(bindTo: from, port: 0) }
        for _ in 0..<count {
            try sender.send([UInt8](repeating: 0x5a, count: 900), to: to, port: 9100)
            try receiver.receive(timeoutMilliseconds: 30_000)
        }
    }

    @Test("figures equal the kernel's and ifmeter plans; live rates after a sample without a reload; <b>x is text; no console error; four screenshots")
    func page() throws {
        let baseline = try counters("pa", in: pair.left)
        try daemon.startAsTheUnit()
        try #require(try counters("pa", in: pair.left) == baseline, "pa carried traffic while the daemon started")

        // A second veth, made while the daemon runs (counted from its creation), named to break HTML.
        try pair.left.ip("link", "add", Self.hostile, "type", "veth", "peer", "name", "pd", "netns", pair.right.name)
        _ = try pair.left.exec(["sysctl", "-qw", "net.ipv6.conf.\(Self.hostile).disable_ipv6=1"])
        _ = try pair.right.exec(["sysctl", "-qw", "net.ipv6.conf.pd.disable_ipv6=1"])
        try pair.left.ip("address", "add", "10.97.0.1/24", "dev", Self.hostile)
        try pair.right.ip("address", "add", "10.97.0.2/24", "dev", "pd")
        let macs = try [(pair.left, Self.hostile), (pair.right, "pd")].map { side, name in
            try side.exec(["cat", "/sys/class/net/\(name)/address"]).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        try pair.left.ip("neigh", "add", "10.97.0.2", "lladdr", macs[1], "dev", Self.hostile, "nud", "permanent")
        try pair.right.ip("neigh", "add", "10.97.0.1", "lladdr", macs[0], "dev", "pd", "nud", "permanent")
        try pair.left.ip("link", "set", Self.hostile, "up")
        try pair.right.ip("link", "set", "pd", "up")
        try pair.left.waitForOperstate(Self.hostile, "up")

        try Podman.run("page", in: pair.left)
        try Podman.send(200_000, from: "page", in: pair.left, port: 5011)
        try Podman.freeze("page", in: pair.left)
        let container = try Podman.counters(of: "page")
        try pair.sendLeftToRight(count: 300, payload: 1000, port: 9001)
        try pair.sendRightToLeft(count: 40, payload: 500, port: 9002)
        try send(120, from: "10.97.0.1", to: "10.97.0.2")
        let now = try counters("pa", in: pair.left)
        let pa = (rx: now.rx - baseline.rx, tx: now.tx - baseline.tx)
        let hostile = try counters(Self.hostile, in: pair.left)

        // What the daemon has recorded: the page is loaded only once its samples hold the traffic.
        let containerName = "container:\(Podman.name("page"))"
        _ = try eventually("the traffic counted", seconds: 60) { () -> Bool? in
            let figures = try daemon.figuresAfterSample()
            let seen = [figures["pa"], figures[Self.hostile], figures[containerName]].map { $0.map { ($0["rx_bytes"] as? UInt64 ?? 0, $0["tx_bytes"] as? UInt64 ?? 0) } }
            return seen[0].map { $0 == (pa.rx, pa.tx) } == true && seen[1].map { $0 == (hostile.rx, hostile.tx) } == true
                && seen[2].map { $0 == (container.rx, container.tx) } == true ? true : nil
        }
        let plansJSON = try pair.left.run([CLIBinary.path, "--socket", daemon.socket, "plans", "--json"])
        let plansText = try pair.left.run([CLIBinary.path, "--socket", daemon.socket, "plans"])
        let plan = try #require((try SocketClient.decode(plansJSON.stdout))["plans"] as? [[String: Any]], "ifmeter plans --json: \(plansJSON.stdout)")
        let cap = try #require(plan.first)

        try? FileManager.default.removeItem(atPath: Browser.screenshots)
        let run = try pair.left.run([Daemon.packageRoot + "/Tests/tools/page-browser-test", "http://127.0.0.1:\(Self.port)/",
                                     Browser.screenshots, "--traffic", "10.96.0.2:9", "--subject", Self.hostile, "--deadline", "120"])
        try #require(run.status == 0, "the browser: \(run.stderr)")
        let report = try SocketClient.decode(run.stdout)

        // Figures: the kernel's, byte for byte.
        let figures = try #require(report["figures"] as? [String: Any])
        let rows = Dictionary((figures["rows"] as? [[String: Any]] ?? []).map { ($0["name"] as? String ?? "", $0) }) { first, _ in first }
        func cells(_ name: String) throws -> [String: UInt64] {
            let row = try #require(rows[name], "no row for \(name) among \(rows.keys.sorted())")
            return (row["cells"] as? [String: Any] ?? [:]).compactMapValues { ($0 as? NSNumber)?.uint64Value }
        }
        #expect(try cells("pa")["month-rx"] == pa.rx && cells("pa")["month-tx"] == pa.tx, "pa: the kernel's \(pa)")
        #expect(try cells("pa")["month-total"] == pa.rx + pa.tx)
        #expect(try cells(Self.hostile)["month-rx"] == hostile.rx && cells(Self.hostile)["month-tx"] == hostile.tx,
                "<b>x: the kernel's \(hostile), counted from its creation")
        let owned = try cells(containerName)
        #expect(owned["total"] == container.rx + container.tx, "the container's own counters, \(container); the page \(owned)")

        // The hostile name is text, its link escaped.
        let row = try #require(rows[Self.hostile])
        #expect(row["shown"] as? String == Self.hostile)
        #expect(row["elements_in_name"] as? Int == 0)
        #expect(row["href"] as? String == "/subject?name=%3Cb%3Ex")
        #expect(figures["bold"] as? Int == 0, "no <b> element anywhere on the page")
        let subject = try #require((report["subjects"] as? [[String: Any]])?.first)
        #expect(subject["heading"] as? String == Self.hostile && subject["charts"] as? Int == 3 && subject["bold"] as? Int == 0)
        #expect((subject["bars"] as? Int ?? 0) > 0, "its charts have bars: \(subject)")

        // The plan's bar says what `ifmeter plans` says.
        let bar = try #require((figures["plans"] as? [[String: Any]])?.first)
        for (page, cli) in [("used", "used_bytes"), ("limit", "limit_bytes"), ("days_left", "days_left"), ("daily_budget", "daily_budget_bytes")] {
            #expect((bar[page] as? NSNumber)?.uint64Value == (cap[cli] as? NSNumber)?.uint64Value, "\(page): page \(bar), ifmeter plans \(cap)")
        }
        let projected = try #require((bar["projected"] as? NSNumber)?.doubleValue)
        let cliProjected = try #require((cap["projected_bytes"] as? NSNumber)?.doubleValue)
        // The pace's projection moves with the clock between the two reads: within 1 %.
        #expect(abs(projected - cliProjected) <= cliProjected / 100, "projected: page \(projected), ifmeter plans \(cliProjected)")
        let title = try #require(bar["title"] as? String)
        let line = try #require(plansText.stdout.split(separator: "\n").first { $0.hasPrefix("cap ") })
        let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        // `ifmeter plans`: plan, period (3 words), used (2), limit (2), share.
        #expect(title.contains("\(words[4]) \(words[5]) of \(words[6]) \(words[7]) (\(words[8]))"), "page \(title), ifmeter plans \(line)")

        // Live: a rate after a sample, the page never reloaded.
        let live = try #require(report["live"] as? [String: Any])
        #expect(live["marker"] as? String == "kept" && live["navigations"] as? Int == 1)
        let moving = (live["moving"] as? [[String]] ?? []).map { $0.first ?? "" }
        #expect(moving.contains("pa"), "pa's rate appeared: \(live)")

        // Nothing the browser complained of.
        #expect((report["console"] as? [Any])?.isEmpty == true, "console: \(report["console"] ?? "none")")
        #expect((report["violations"] as? [Any])?.isEmpty == true, "CSP violations: \(report["violations"] ?? "none")")

        // Four screenshots, each as wide as asked; dark is dark; a phone scrolls only tables.
        let shots = try #require(report["screenshots"] as? [String: [String: Any]])
        #expect(shots.count == 4)
        for (path, shot) in shots {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(data.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), "\(path) is a PNG")
            let width = data.count > 20 ? data[16..<20].reduce(0) { $0 << 8 | Int($1) } : 0
            #expect(width == shot["width"] as? Int, "\(path): \(width) px wide")
            #expect(shot["page_wider_than_window"] as? Bool == false, "\(path): the page is wider than the window")
            let dark = shot["dark"] as? Bool == true
            #expect((shot["background"] as? String == "rgb(255, 255, 255)") == !dark, "\(path): background \(shot["background"] ?? "")")
        }
        #expect(try daemon.stop() == 0)
    }
}
