import Foundation
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The rules every test in this repository keeps (README, "Tests"), checked over the sources so
/// that the next helper cannot quietly break them: a test never waits without a deadline, every
/// suite has a time limit and runs off the cooperative pool.
@Suite("The tests' own rules", .ownThread, .timeLimit(.minutes(3)))
struct TestRulesTests {
    /// Every Swift file under Tests/, with its path from the repository root.
    static func sources() throws -> [(path: String, text: String)] {
        let root = Daemon.packageRoot
        let enumerator = FileManager.default.enumerator(atPath: root + "/Tests")
        var files: [(String, String)] = []
        while let path = enumerator?.nextObject() as? String {
            // This file names what it looks for.
            guard path.hasSuffix(".swift"), path != "EndToEndTests/TestRulesTests.swift" else { continue }
            files.append(("Tests/" + path, try String(contentsOfFile: root + "/Tests/" + path, encoding: .utf8)))
        }
        return files.sorted { $0.0 < $1.0 }
    }

    /// Each `@Suite(…)` attribute's text, to its closing parenthesis.
    static func suites(in text: String) -> [String] {
        var found: [String] = []
        var rest = text[...]
        while let start = rest.range(of: "@Suite(") {
            var depth = 1, index = start.upperBound, inString = false, escaped = false
            while depth > 0, index < rest.endIndex {
                let character = rest[index]
                if inString {
                    if escaped { escaped = false } else if character == "\\" { escaped = true } else if character == "\"" { inString = false }
                } else if character == "\"" {
                    inString = true
                } else if character == "(" {
                    depth += 1
                } else if character == ")" {
                    depth -= 1
                }
                index = rest.index(after: index)
            }
            found.append(String(rest[start.lowerBound..<index]))
            rest = rest[index...]
        }
        return found
    }

    @Test("no wait for a child without a deadline: waitUntilExit only inside Process.awaitExit and Command.run")
    func noUnboundedWaits() throws {
        let sources = try Self.sources()
        #expect(sources.count > 50, "found \(sources.count) test sources under \(Daemon.packageRoot)/Tests")
        let allowed: Set = ["Tests/IfMeterTestSupport/ProcessExit.swift", "Tests/IfMeterTestSupport/Command.swift"]
        let offenders = sources.filter { !allowed.contains($0.path) && $0.text.contains("waitUntilExit()") }.map(\.path)
        #expect(offenders == [], "use Process.awaitExit (a deadline and a message) or Process.end")
    }

    @Test("no library code changes what the whole process shares (umask, working directory, environment): the tests run it side by side")
    func noProcessWideState() throws {
        let root = Daemon.packageRoot
        let enumerator = FileManager.default.enumerator(atPath: root + "/Sources")
        var offenders: [String] = []
        while let path = enumerator?.nextObject() as? String {
            guard path.hasSuffix(".swift") else { continue }
            let text = try String(contentsOfFile: root + "/Sources/" + path, encoding: .utf8)
            for call in ["umask(", "chdir(", "setenv(", "putenv(", "unsetenv("] where text.contains(call) {
                offenders.append("Sources/\(path): \(call)")
            }
        }
        #expect(offenders == [], "a test beside it creating a file, or reading the environment, would be affected")
    }

    @Test("no Swift file of the sources, tests or fuzz targets is over 400 lines: a file holds one idea")
    func filesStaySmall() throws {
        let root = Daemon.packageRoot
        var long: [String] = []
        var read = 0
        for top in ["Sources", "Tests", "Fuzz"] {
            let enumerator = FileManager.default.enumerator(atPath: root + "/" + top)
            while let path = enumerator?.nextObject() as? String {
                guard path.hasSuffix(".swift") else { continue }
                let lines = try String(contentsOfFile: "\(root)/\(top)/\(path)", encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
                read += 1
                if lines.count - 1 > 400 { long.append("\(top)/\(path): \(lines.count - 1) lines") }
            }
        }
        #expect(read > 300, "read \(read) Swift files under \(root)")
        #expect(long == [], "split them by idea")
    }

    /// Swift Testing runs test bodies on the cooperative pool, one thread a core (two here).
    /// Two bodies that hold it (the fuzz corpora replayed, 67 s of CPU; a child test process in
    /// Europe/Berlin; a namespace being made) stopped every other test, and eight-case table
    /// tests of no I/O went past their 60 s limit unstarted. No test body runs there.
    @Test("every suite has a time limit and runs its tests on threads of their own, off the cooperative pool")
    func suiteTraits() throws {
        var suites = 0
        for source in try Self.sources() {
            for suite in Self.suites(in: source.text) {
                suites += 1
                #expect(suite.contains(".timeLimit("), "\(source.path): \(suite)")
                #expect(suite.contains(".ownThread"), "\(source.path): \(suite)")
            }
        }
        #expect(suites > 80)
    }

    /// The checkout lies wherever root cloned it, `/root` or a `mktemp -d` directory (0700):
    /// another user cannot search it, and a program there run as `nobody` exits 126.
    @Test("nothing run as another user is run from the checkout: the checkout's programs go through OtherUserCopy")
    func otherUsersRunCopies() throws {
        var offenders: [String] = []
        for source in try Self.sources() where source.path != "Tests/IfMeterTestSupport/OtherUserCopy.swift" {
            var rest = source.text[...]
            while let found = rest.range(of: #"--reuid="#) ?? rest.range(of: #""runuser""#) {
                // The command line that follows, to its closing bracket.
                let line = rest[found.lowerBound...].prefix { $0 != "]" }
                if ["CLIBinary.path", "packageRoot", "Daemon.path", "buildProductsDirectory"].contains(where: { line.contains($0) }),
                   !line.contains("OtherUserCopy.of(") {
                    offenders.append("\(source.path): \(line.prefix(120))")
                }
                rest = rest[found.upperBound...]
            }
        }
        #expect(offenders == [], "\(offenders.joined(separator: "\n"))")
    }

    @Test("a copy for another user runs as nobody where the program itself, in a 0700 directory, cannot",
          .enabled(if: getuid() == 0, "needs root to run a program as nobody"))
    func otherUserCopyRuns() throws {
        let closed = try TemporaryDirectory()
        #expect(chmod(closed.path, 0o700) == 0)
        let program = closed.path + "/ifmeter"
        try FileManager.default.copyItem(atPath: CLIBinary.path, toPath: program)
        // runuser, not setpriv --reuid: setpriv leaves the saved uid 0, so root's capabilities
        // still pass the path's directories, and only the program's own opens fail (a script's).
        let asNobody = ["runuser", "-u", "nobody", "--"]
        let refused = try Command.run(asNobody + [program, "--version"])
        #expect(refused.status != 0 && refused.stderr.contains("Permission denied"), "nobody ran a program in a 0700 directory: \(refused)")
        #expect(OtherUserCopy.firstClosedDirectory(above: program) == closed.path)
        let open = try TemporaryDirectory()
        #expect(chmod(open.path, 0o700) == 0)
        let copy = try OtherUserCopy.of(program, in: open.path)
        let ran = try Command.run(asNobody + [copy, "--version"])
        #expect(ran.status == 0 && ran.stdout.hasPrefix("ifmeter "), "\(ran)")
        #expect(OtherUserCopy.firstClosedDirectory(above: copy) == nil)
    }

    @Test("a daemon that does not stop is killed at its deadline, and the test fails naming it and its threads",
          .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason))
    func hungStop() throws {
        let daemon = try DaemonProcess(namespace: try NetworkNamespace(), config: "interval = 3600\n")
        try daemon.start()
        // A daemon hung in its shutdown, as far as the test can tell: SIGTERM stays pending.
        daemon.signal(SIGSTOP)
        let error = try #require(throws: ExitDeadlineExceeded.self) { try daemon.stop(within: 2) }
        #expect(error.description.hasPrefix("ifmeterd (pid \(daemon.pid)) still running 2 s after it was told to stop; killed"), "\(error)")
        #expect(error.description.contains("ifmeterd T "), "the stopped thread is named with its state: \(error)")
        #expect(!daemon.isRunning)
    }

    /// Foundation's Process learns that a child exited when the socket the child inherited
    /// closes. A long-lived program started while another thread's Process.run held that socket
    /// open kept the child "running" for good, and every wait on it hung (a whole run, once
    /// dockerd held several): what the tests start themselves inherits none of their descriptors.
    @Test("a program the tests start with their signals reset holds no descriptor of theirs")
    func spawnedHoldsNothing() throws {
        // Not close-on-exec, as Foundation's own sockets are not.
        var ends: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let directory = try TemporaryDirectory()
        let longLived = try SpawnWithSignals.start([try Command.resolve("sleep"), "60"], output: directory.path + "/out")
        defer {
            kill(longLived, SIGKILL)
            _ = SpawnWithSignals.wait(longLived, within: 10)
        }
        // What the program holds, read from the kernel: another test's child may inherit these
        // ends meanwhile (the suites run side by side), so their closing proves nothing.
        let sockets = Set(ends.map { end -> String in
            var info = stat()
            _ = fstat(end, &info)
            return "socket:[\(info.st_ino)]"
        })
        let held = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(longLived)/fd").compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(longLived)/fd/\($0)")
        }
        #expect(held.count >= 3, "its standard descriptors: \(held)")
        #expect(held.filter(sockets.contains).isEmpty, "the long-lived program holds the test's socket: \(held)")
        // The program may open files of its own (sleep opened glibc's gconv cache once); none
        // of the test process's sockets, pipes or event descriptors.
        #expect(!held.contains { $0.hasPrefix("socket:") || $0.hasPrefix("pipe:") || $0.hasPrefix("anon_inode:") }, "\(held)")
    }
}
