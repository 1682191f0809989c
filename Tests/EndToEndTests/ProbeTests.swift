import Foundation
import IfMeterTestSupport
import Testing

/// The built `ifmeterd` binary, run as a user would run it.
enum Daemon {
    static var path: String { Command.buildProductsDirectory + "/ifmeterd" }

    /// Runs ifmeterd with `arguments` to its exit, for command lines that must not start a
    /// daemon: with a config, socket, state and log directory of its own, in a network
    /// namespace of its own where the test may make one, and with a deadline.
    static func runToExit(_ arguments: [String]) throws -> CommandResult {
        let daemon = try DaemonProcess(namespace: NetworkNamespace.available ? try NetworkNamespace() : nil)
        return try daemon.runToExit(arguments)
    }
    static var packageRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }
}

/// `ifmeterd --probe --json` as documented in docs/PROBE.md.
struct ProbeOutput: Decodable {
    struct Epoch: Decodable {
        var boot_id: String
        var ifindex: Int
    }
    struct Interface: Decodable {
        var name: String
        var ifindex: Int
        var `class`: String
        var class_reason: String
        var kind: String
        var operstate: String
        var rx_bytes: UInt64?
        var tx_bytes: UInt64?
        var rx_packets: UInt64?
        var tx_packets: UInt64?
        var labels: [String]
        var epoch: Epoch?
        var speed_bps: UInt64?
    }
    var version: String
    var boot_id: String?
    var source: String
    var warnings: [String]
    var interfaces: [Interface]

    func interface(_ name: String) throws -> Interface {
        try #require(interfaces.first { $0.name == name }, "\(name) not in \(interfaces.map(\.name))")
    }
}

@Suite("ifmeterd --probe inside a namespace", .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason), .ownThread, .timeLimit(.minutes(10)))
struct ProbeInNamespaceTests {
    /// A namespace with loopback, a veth end carrying known traffic, a tun, a tap and a bridge.
    func populated() throws -> VethPair {
        let pair = try VethPair(subnet: 79)
        try pair.left.ip("tuntap", "add", "mode", "tun", "name", "tunE")
        try pair.left.ip("tuntap", "add", "mode", "tap", "name", "tapE")
        try pair.left.ip("link", "add", "brE", "type", "bridge")
        try pair.sendLeftToRight(count: 100, payload: 200)
        return pair
    }

    func probe(_ pair: VethPair, _ arguments: String...) throws -> ProbeOutput {
        let result = try pair.left.run([Daemon.path, "--probe", "--json"] + arguments)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        return try JSONDecoder().decode(ProbeOutput.self, from: Data(result.stdout.utf8))
    }

    @Test("netlink: classes, reasons and counters of every interface")
    func netlinkProbe() throws {
        let pair = try populated()
        let output = try probe(pair)
        #expect(output.source == "netlink" && output.warnings.isEmpty)
        #expect(Set(output.interfaces.map(\.name)) == ["lo", "va", "tunE", "tapE", "brE"])
        let expectations: [(String, String, String)] = [
            ("lo", "loopback", "IFF_LOOPBACK"),
            ("va", "virtual", "netlink kind veth"),
            ("tunE", "tunnel", "sysfs tun_flags (tun)"),
            ("tapE", "tunnel", "sysfs tun_flags (tap)"),
            ("brE", "virtual", "netlink kind bridge"),
        ]
        for (name, expectedClass, reason) in expectations {
            let interface = try output.interface(name)
            #expect(interface.class == expectedClass, "\(name)")
            #expect(interface.class_reason == reason, "\(name)")
            #expect(interface.labels.contains("tunnel-double-counted") == (expectedClass == "tunnel"))
            #expect(interface.labels.starts(with: ["estimate", "interface-counters", "not-per-app", "includes-overhead"]))
        }
        let va = try output.interface("va")
        #expect(va.tx_bytes == 100 * 242 && va.tx_packets == 100)
        #expect(va.tx_bytes == (try pair.left.sysfsCounter("va", "tx_bytes")))
        #expect(va.kind == "veth" && va.operstate == "up")
        #expect(try output.interface("tunE").kind == "tun")
        #expect(output.interfaces.map(\.ifindex) == output.interfaces.map(\.ifindex).sorted())
        let bootID = try String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(output.boot_id == bootID)
        #expect(output.interfaces.allSatisfy { $0.epoch?.boot_id == bootID && $0.epoch?.ifindex == $0.ifindex })
        #expect(try output.interface("va").speed_bps == 10_000_000_000, "veth reports 10 Gbit/s")
        #expect(try output.interface("tunE").speed_bps == nil, "a tun that is down has no speed")
    }

    @Test("getifaddrs: the same interfaces and counters, labelled 32-bit")
    func getifaddrsProbe() throws {
        let pair = try populated()
        let output = try probe(pair, "--source", "getifaddrs")
        #expect(output.source == "getifaddrs")
        #expect(Set(output.interfaces.map(\.name)) == ["lo", "va", "tunE", "tapE", "brE"])
        let va = try output.interface("va")
        #expect(va.tx_bytes == 100 * 242)
        #expect(va.labels.contains("32-bit-counters"))
        #expect(try output.interface("tunE").class == "tunnel")
    }

    @Test("the table: a header, one aligned row per interface, the footnote")
    func table() throws {
        let pair = try populated()
        let result = try pair.left.run([Daemon.path, "--probe"])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("NAME ") == true)
        let va = try #require(lines.first { $0.hasPrefix("va ") })
        #expect(va.contains("virtual") && va.contains(" 24200 ") && va.hasSuffix("netlink kind veth"))
        let headerClass = try #require(lines[0].range(of: "CLASS")).lowerBound
        let rowClass = try #require(va.range(of: "virtual")).lowerBound
        #expect(lines[0].distance(from: lines[0].startIndex, to: headerClass)
                == va.distance(from: va.startIndex, to: rowClass))
        #expect(lines.contains { $0.hasPrefix("source: netlink") })
        #expect(lines.last?.contains("not per-application") == true)
    }

    @Test("with netlink refused, no source works: a clear message and exit 69")
    func noSource() throws {
        let pair = try populated()
        let result = try pair.left.run([Daemon.packageRoot + "/Tests/tools/deny-netlink", Daemon.path, "--probe"])
        #expect(result.status == 69)  // EX_UNAVAILABLE
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("cannot read interface counters: netlink socket failed: Permission denied (EACCES); getifaddrs failed: Permission denied (EACCES)"))
    }
}

@Suite("ifmeterd command line", .ownThread, .timeLimit(.minutes(10)))
struct CommandLineTests {
    @Test("--help and --version exit 0", arguments: [["--help"], ["--version"], ["-h"]])
    func informational(_ arguments: [String]) throws {
        let result = try Daemon.runToExit(arguments)
        #expect(result.status == 0)
        #expect(result.stdout.contains(arguments == ["--version"] ? "ifmeterd 0.1.0" : "ifmeterd --probe [--json]"))
    }

    @Test("bad arguments: exit 64 and say what is wrong", arguments: [
        (["--probe", "--source", "bogus"], "unknown source \"bogus\" (expected netlink or getifaddrs)"),
        (["--frobnicate"], "unknown argument \"--frobnicate\""),
        (["--probe", "--source"], "--source needs a value"),
        (["--interval", "0"], "--interval: expected whole seconds from 1 to 3600, got \"0\""),
    ])
    func usageErrors(_ arguments: [String], _ message: String) throws {
        let result = try Daemon.runToExit(arguments)
        #expect(result.status == 64)
        #expect(result.stderr.contains("ifmeterd: " + message))
        #expect(result.stderr.contains("usage: ifmeterd"))
    }

    @Test("a crashed run's daemons are found by their directory's exact shape, never a benchmark's beside the tests")
    func staleDaemonDirectories() {
        let prefix = "/tmp/ifmeterd-"
        #expect(DaemonProcess.owner(of: prefix + "4242-6D4CE52B-92E9-48CA-B2F3-5A298B16380F/state", prefix: prefix) == 4242)
        #expect(DaemonProcess.owner(of: prefix + "4242-6D4CE52B-92E9-48CA-B2F3-5A298B16380F", prefix: prefix) == 4242)
        for other in ["/tmp/tmp.x/ifmeterd-10-1/state", prefix + "10-1/state", prefix + "abc-6D4CE52B-92E9-48CA-B2F3-5A298B16380F",
                      "/var/tmp/ifmeterd-4242-6D4CE52B-92E9-48CA-B2F3-5A298B16380F"] {
            #expect(DaemonProcess.owner(of: other, prefix: prefix) == nil, "\(other)")
        }
    }

    @Test("the probe on this machine lists loopback, classified, with counters")
    func probeHere() throws {
        let result = try Command.run([Daemon.path, "--probe", "--json"])
        #expect(result.status == 0)
        let output = try JSONDecoder().decode(ProbeOutput.self, from: Data(result.stdout.utf8))
        let lo = try output.interface("lo")
        #expect(lo.class == "loopback" && lo.rx_bytes != nil)
    }
}
