import Foundation
import IfMeterTestSupport
import Testing

/// What `ifmeter` says, and which status it exits with, when it cannot answer.
@Suite("ifmeter errors", .ownThread, .timeLimit(.minutes(10)))
struct CLIErrorTests {
    @Test("no daemon: what to run, exit 69")
    func noDaemon() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ifmeter-nodaemon-\(UUID().uuidString)").path
        let result = try Command.run([CLIBinary.path, "--socket", directory + "/ifmeterd.sock", "days"])
        #expect(result.status == 69)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.hasPrefix("ifmeter: ifmeterd is not running (nothing listens on \(directory)/ifmeterd.sock)"))
        #expect(result.stderr.contains("systemctl start ifmeterd") && result.stderr.contains("make run"))
    }

    @Test("no daemon, no --socket: the message names every place it looked",
          .enabled(if: getuid() == 0, "needs root: the client runs with an empty /run of its own, so a daemon on this host cannot answer"))
    func noDaemonDefaultPlaces() throws {
        let directory = try TemporaryPath()
        // A mount namespace with an empty tmpfs on /run: /run/ifmeter/ifmeterd.sock, where a
        // system daemon on this host (make run, the package) listens, does not exist there.
        let fallback = try Command.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                                        #"mount -t tmpfs none /run && exec "$0" "$@""#, CLIBinary.path, "status"], environment: [
            "XDG_RUNTIME_DIR": directory.path, "XDG_STATE_HOME": directory.path, "HOME": directory.path, "IFMETER_SOCKET": "",
        ])
        #expect(fallback.status == 69, "\(fallback)")
        #expect(fallback.stderr.hasPrefix("ifmeter: ifmeterd is not running (nothing listens on /run/ifmeter/ifmeterd.sock)"), "\(fallback.stderr)")
        // As another user it would look in XDG_RUNTIME_DIR first: the same lookup as root's unshared.
        let asNobody = try Command.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                                        #"mount -t tmpfs none /run && exec setpriv --reuid=nobody --regid=nogroup --clear-groups "$0" "$@""#,
                                        try OtherUserCopy.of(CLIBinary.path, in: directory.path), "status"], environment: [
            "XDG_RUNTIME_DIR": directory.path, "XDG_STATE_HOME": directory.path, "HOME": directory.path, "IFMETER_SOCKET": "",
        ])
        #expect(asNobody.status == 69, "\(asNobody)")
        #expect(asNobody.stderr.contains(directory.path + "/ifmeter/ifmeterd.sock or /run/ifmeter/ifmeterd.sock"), "\(asNobody.stderr)")
    }

    @Test("bad arguments: the problem and a pointer to --help, exit 64", arguments: [
        (["daily"], "unknown command \"daily\""),
        (["log", "--limit", "5"], "--limit is not an option of `ifmeter log`"),
        (["log", "--kind", "explosion", "--log-dir", "/nonexistent"], "--kind: \"explosion\" is neither estimate, event nor an event kind"),
    ] as [([String], String)])
    func badArguments(arguments: [String], message: String) throws {
        let result = try Command.run([CLIBinary.path] + arguments)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(result.stderr.contains("Run `ifmeter --help` for usage."))
    }

    @Test("check: a command line that does not parse is UNKNOWN (3), on stdout, for monitoring")
    func checkBadArguments() throws {
        let result = try Command.run([CLIBinary.path, "check", "--json", "--kind", "reset"])
        #expect(result.status == 3)
        #expect(result.stdout == "UNKNOWN: --kind is not an option of `ifmeter check`; see `ifmeter check --help`\n")
    }

    @Test("--help on every command, exit 0")
    func help() throws {
        for command in ["", "summary", "5min", "hours", "days", "months", "years", "top", "list", "events", "status",
                        "rate", "live", "log", "check", "chart"] {
            let result = try Command.run([CLIBinary.path] + (command.isEmpty ? [] : [command]) + ["--help"])
            #expect(result.status == 0)
            #expect(result.stdout.hasPrefix("usage: ifmeter"), "\(command)")
            if !command.isEmpty && command != "summary" { #expect(result.stdout.contains("ifmeter \(command)"), "\(command)") }
        }
    }
}

@Suite("ifmeter against a daemon it cannot use", .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason), .ownThread, .timeLimit(.minutes(10)))
struct CLIDaemonErrorTests {
    @Test("a socket this user may not open: permission denied, exit 77")
    func permission() throws {
        let namespace = try NetworkNamespace()
        let daemon = try DaemonProcess(namespace: namespace, config: "interval = 3600\nsocket_mode = 0600\n")
        try daemon.start()
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: daemon.directory)
        let result = try Command.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                                      try OtherUserCopy.of(CLIBinary.path, in: daemon.directory), "--socket", daemon.socket, "status"])
        #expect(result.status == 77, "\(result.stderr)")
        #expect(result.stderr.contains("cannot connect to \(daemon.socket): permission denied"))
        #expect(try Command.run([CLIBinary.path, "--socket", daemon.socket, "status"]).status == 0)
    }

    @Test("the daemon is starting: 'starting', never zeros, exit 75, for as long as another program holds the database; then figures")
    func starting() throws {
        let namespace = try NetworkNamespace()
        let daemon = try DaemonProcess(namespace: namespace, config: "interval = 3600\n")
        try daemon.start()
        #expect(try daemon.stop() == 0)
        let holder = try DatabaseHolder(path: daemon.stateDirectory + "/ifmeter.db")
        try daemon.start(extraArguments: ["--metrics-listen", "127.0.0.1:10951"], waitForReady: false)
        // Starting is what the daemon says, not that its socket file exists.
        _ = try eventually("status says starting", seconds: 60) {
            (try daemon.client().request(#"{"v":1,"cmd":"status"}"#))[path: "result.ready"] as? Bool == false ? true : nil
        }
        for arguments in [["days"], ["list"], ["status"], ["live"]] {
            let result = try Command.run([CLIBinary.path, "--socket", daemon.socket] + arguments)
            #expect(result.status == 75, "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(arguments): no figures while starting")
            #expect(result.stderr.contains("is starting"), "\(arguments): \(result.stderr)")
        }
        // Metrics are answered while starting: up 0 and no figure it does not know yet.
        let metrics = try Command.run([CLIBinary.path, "--socket", daemon.socket, "metrics"])
        #expect(metrics.status == 0 && metrics.stdout.contains("\nifmeter_up 0\n"), "\(metrics.stdout)\(metrics.stderr)")
        #expect(!metrics.stdout.contains("ifmeter_interface_receive_bytes_total{"))
        let scrape = try namespace.run(["curl", "-sS", "--max-time", "10", "http://127.0.0.1:10951/metrics"])
        #expect(scrape.stdout.contains("\nifmeter_up 0\n"), "\(scrape.stdout)\(scrape.stderr)")
        // Past SQLite's busy timeout it says so once and goes on waiting, still starting.
        _ = try eventually("ifmeterd said it waits for the database", seconds: 120) {
            daemon.stderrText.contains("is held by another program") ? true : nil
        }
        #expect(daemon.isRunning)
        #expect(try Command.run([CLIBinary.path, "--socket", daemon.socket, "status"]).status == 75)
        holder.release()
        try daemon.awaitReady()
        let ready = try Command.run([CLIBinary.path, "--socket", daemon.socket, "list"])
        #expect(ready.status == 0 && ready.stdout.contains("lo"))
    }

    @Test("a fresh daemon says how to ask it; before its first figures ifmeter says when they come, not 0 B")
    func firstMinutes() throws {
        let pair = try VethPair(subnet: 86)
        let daemon = try DaemonProcess(namespace: pair.left, config: "interval = 3600\n")
        try daemon.start()
        #expect(daemon.stderrText.contains("/ifmeter --socket \(daemon.socket)") && daemon.stderrText.contains("ask with: "), "\(daemon.stderrText)")
        let waiting = try Command.run([CLIBinary.path, "--socket", daemon.socket])
        #expect(waiting.status == 0)
        #expect(waiting.stdout.contains("has no figures yet: the first come with its next sample"), "\(waiting.stdout)")
        #expect(waiting.stdout.contains("va (virtual)") && !waiting.stdout.contains("0 B"))
        try pair.sendLeftToRight(count: 10, payload: 100)
        _ = try daemon.client().request(#"{"v":1,"id":1,"cmd":"sample"}"#)
        let counted = try Command.run([CLIBinary.path, "--socket", daemon.socket])
        #expect(counted.stdout.contains("va  (virtual)") && !counted.stdout.contains("no figures yet"), "\(counted.stdout)")
        #expect(try daemon.stop() == 0)
    }
}
