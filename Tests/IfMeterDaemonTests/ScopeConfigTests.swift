import Foundation
import IfMeterCore
@testable import IfMeterDaemon
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `local_prefixes` and `attach_socket` (docs/SCOPES.md), and the attach helper's line
/// protocol: hostile input where it enters, refused with why, nothing changed.
@Suite("Traffic scopes: config and the attach helper", .ownThread, .timeLimit(.minutes(3)))
struct ScopeConfigTests {
    @Test("local_prefixes is repeatable, each line adding; attach_socket has a default")
    func parsed() throws {
        let config = try DaemonConfig.parse("""
            local_prefixes = 10.0.0.0/8 fd00::/8
            local_prefixes = 100.64.0.0/10, 192.168.7.9
            attach_socket = /run/test/attach.sock
            """, file: "test.conf")
        #expect(config.scopes.localPrefixes == Set(["10.0.0.0/8", "fd00::/8", "100.64.0.0/10", "192.168.7.9/32"]
            .map { LocalPrefix(parsing: $0)! }))
        #expect(config.scopes.attachSocket == "/run/test/attach.sock")
        #expect(DaemonConfig().scopes.attachSocket == "/run/ifmeter/attach.sock")
        #expect(DaemonConfig().scopes.localPrefixes.isEmpty)
    }

    static let refused: [(String, String)] = [
        ("local_prefixes = 10.0.0.0/33", "test.conf:1: local_prefixes: \"10.0.0.0/33\" is not an address or prefix (10.0.0.0/8, 192.168.1.7, fd00::/8)"),
        ("local_prefixes = example.com", "test.conf:1: local_prefixes: \"example.com\" is not an address or prefix (10.0.0.0/8, 192.168.1.7, fd00::/8)"),
        ("local_prefixes = 10.1.2.3/8", "test.conf:1: local_prefixes: 10.1.2.3/8 has bits set past its length; did you mean 10.0.0.0/8?"),
        ("local_prefixes = 0.0.0.0/0", "test.conf:1: local_prefixes: 0.0.0.0/0 would make every address local; name the networks that are"),
        ("local_prefixes = ::/0", "test.conf:1: local_prefixes: ::/0 would make every address local; name the networks that are"),
        ("local_prefixes =", "test.conf:1: local_prefixes: expected one or more prefixes (10.0.0.0/8 fd00::/8)"),
        ("local_prefixes = ::/80", "test.conf:1: local_prefixes: ::/80 holds ::ffff:0:0/96, every IPv4 address as IPv6 writes it; name the networks that are local"),
        ("local_prefixes = ::/1", "test.conf:1: local_prefixes: ::/1 holds ::ffff:0:0/96, every IPv4 address as IPv6 writes it; name the networks that are local"),
        ("local_prefixes = ::fffe:0:0/95", "test.conf:1: local_prefixes: ::fffe:0:0/95 holds ::ffff:0:0/96, every IPv4 address as IPv6 writes it; name the networks that are local"),
        ("local_prefixes = " + (0..<8193).map { "10.\($0 / 256).\($0 % 256).0/24" }.joined(separator: " "),
         "test.conf:1: local_prefixes: 8193 prefixes; at most 8192 (summarise them: 10.0.0.0/8 for its /24s)"),
        ("attach_socket = run/attach.sock", "test.conf:1: attach_socket: expected an absolute path of a socket (up to 107 bytes, no ..), got \"run/attach.sock\""),
        ("attach_socket = /run/../tmp/a", "test.conf:1: attach_socket: expected an absolute path of a socket (up to 107 bytes, no ..), got \"/run/../tmp/a\""),
    ]

    @Test("an IPv4 range written as IPv6, ::ffff:10.0.0.0/104, is the IPv4 one")
    func mappedAccepted() throws {
        let config = try DaemonConfig.parse("local_prefixes = ::ffff:10.0.0.0/104", file: "test.conf")
        #expect(config.scopes.localPrefixes == [LocalPrefix(parsing: "10.0.0.0/8")!])
    }

    @Test("a bad value is refused with the file, the line and why", arguments: refused)
    func refusedValues(_ line: String, _ message: String) {
        #expect(throws: ConfigError.self) { try DaemonConfig.parse(line, file: "test.conf") }
        do {
            _ = try DaemonConfig.parse(line, file: "test.conf")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test("the request line: attach and an index, as the kernel writes one; nothing else")
    func lines() throws {
        #expect(try LinkAttachment.parse(Array("attach 2\n".utf8)).get() == 2)
        #expect(try LinkAttachment.parse(Array("attach 2147483647".utf8)).get() == Int32.max)
        for bad in ["attach 0\n", "attach 02\n", "attach -1\n", "attach 2147483648\n", "attach  2\n", "attach 2 \n",
                    "attach 2\r\n", "ATTACH 2\n", "detach 2\n", "attach\n", "", "attach 2\n\n", "attach 9999999999\n",
                    "attach " + String(repeating: "1", count: 70)] {
            #expect(throws: LinkAttachment.LineError.self, "\(bad.debugDescription)") { try LinkAttachment.parse(Array(bad.utf8)).get() }
        }
    }

    @Test("ifmeterd --attach-link-stdin answers bad input with one error line, and changes nothing")
    func helperRefuses() throws {
        let directory = try TemporaryDirectory()
        let pins = directory.path + "/pins"
        try "apps_pins = \(pins)\n".write(toFile: directory.path + "/test.conf", atomically: true, encoding: .utf8)
        let run = { (input: String) throws -> CommandResult in
            try Command.run([DaemonProcess.binary, "--attach-link-stdin", "--config", directory.path + "/test.conf"], stdin: input)
        }
        for bad in ["attach eth0\n", "attach 0\n", String(repeating: "x", count: 200), "\n"] {
            let result = try run(bad)
            #expect(result.status != 0)
            #expect(result.stdout.hasPrefix("error: ") && result.stdout.hasSuffix("\n")
                    && result.stdout.filter { $0 == "\n" }.count == 1, "\(result.stdout)")
        }
        #expect(access(pins, F_OK) != 0, "nothing was made")
        // A good line where nothing is pinned: attached nowhere, said why.
        let unpinned = try run("attach 2147483647\n")
        #expect(unpinned.status != 0 && unpinned.stdout.hasPrefix("error: attach the scope programs to ifindex 2147483647"),
                "\(unpinned.stdout)")
        #expect(access(pins, F_OK) != 0)
        // Loopback is never split: refused before anything is looked up.
        let loopback = try run("attach \(if_nametoindex("lo"))\n")
        #expect(loopback.status != 0 && loopback.stdout.contains("is loopback, whose traffic is never split"), "\(loopback.stdout)")
    }

    @Test("the daemon's request over a socket-activated helper (Accept=yes) reads its answer",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-socket-activate"), "needs systemd-socket-activate"))
    func overTheSocket() throws {
        let directory = try TemporaryDirectory()
        let socket = directory.path + "/attach.sock"
        try "apps_pins = \(directory.path)/pins\n".write(toFile: directory.path + "/test.conf", atomically: true, encoding: .utf8)
        let activator = try SpawnedProcess(["/usr/bin/systemd-socket-activate", "--accept", "--inetd", "-l", socket,
                                            DaemonProcess.binary, "--attach-link-stdin", "--config", directory.path + "/test.conf"],
                                           errors: directory.path + "/activator.log")
        defer {
            _ = activator.send(SIGTERM)
            _ = try? activator.awaitExit("systemd-socket-activate", within: 10)
        }
        // Listening once it says so: what it recorded, not the socket file appearing.
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline,
              !((try? String(contentsOfFile: directory.path + "/activator.log", encoding: .utf8)) ?? "").contains("Listening on") {
            usleep(10_000)
        }
        let answer = try #require(ScopeCoverage.ask(socket: socket, ifindex: Int32.max))
        #expect(answer.hasPrefix("error: attach the scope programs to ifindex \(Int32.max)"), "\(answer)")
        let missing = try #require(ScopeCoverage.ask(socket: directory.path + "/none.sock", ifindex: 1))
        #expect(missing.contains("ifmeterd-attach.socket"), "\(missing)")
    }
}
