import Foundation
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The real daemon against a hostile local user (the attackers run as `nobody`), hostile
/// files and hostile values: each defect the hostile-input issue listed has a test here or in
/// the unit suites (docs/SECURITY.md maps them).
@Suite("Hostile neighbours", .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason), .ownThread, .timeLimit(.minutes(10)))
struct HostileTests {
    func daemon(_ config: String) throws -> (NetworkNamespace, DaemonProcess) {
        let namespace = try NetworkNamespace()
        let daemon = try DaemonProcess(namespace: namespace, config: config)
        // nobody must reach the socket (mode 0666) through the test's directory.
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: daemon.directory)
        try daemon.start()
        return (namespace, daemon)
    }

    func asNobody(_ arguments: [String]) throws -> CommandResult {
        try Command.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"] + arguments)
    }

    /// CPU seconds (user + system) a process has used, from /proc/PID/stat.
    func cpuSeconds(_ pid: Int32) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        let fields = stat[stat.index(after: stat.lastIndex(of: ")")!)...].split(separator: " ")
        let ticks = Double(fields[11])! + Double(fields[12])!  // utime, stime (fields 14, 15)
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    @Test("one user's 100 watch connections: it gets max_clients_per_uid, root and others are still served")
    func perUserLimit() throws {
        let (_, daemon) = try daemon("interval = 3600\n")
        let script = """
            import json, socket, sys, time
            held, codes = [], {}
            for _ in range(100):
                s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
                try: s.send(b'{"v":1,"id":1,"cmd":"watch"}\\n')
                except OSError: pass  # refused and closed already: its refusal is still there to read
                held.append(s)
            for s in held:
                # A deadline a loaded machine does not reach; an error is counted, not fatal.
                s.settimeout(30)
                try:
                    line = s.makefile("rb").readline()
                    code = json.loads(line).get("error", {}).get("code", "watching") if line else "closed"
                except Exception as error:
                    code = type(error).__name__
                codes[code] = codes.get(code, 0) + 1
            print(json.dumps(codes)); sys.stdout.flush()
            sys.stdin.readline()  # hold every connection until the test is done
            """
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        holder.arguments = ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/python3", "-c", script, daemon.socket]
        let input = Pipe(), output = Pipe()
        holder.standardInput = input
        holder.standardOutput = output
        try holder.run()
        defer {
            try? input.fileHandleForWriting.close()
            holder.end()
        }
        let line = output.fileHandleForReading.firstLine()
        let codes = try SocketClient.decode(line)
        #expect(codes["watching"] as? Int == 64, "\(codes)")
        #expect(codes["too_many_clients"] as? Int == 36, "\(codes)")
        // Root is served while nobody holds its 64, and so is another unprivileged user.
        #expect(try daemon.client().request(#"{"v":1,"cmd":"status"}"#)["ok"] as? Bool == true)
        let other = try Command.run(["setpriv", "--reuid=daemon", "--regid=daemon", "--clear-groups", "/usr/bin/python3", "-c", """
            import socket, sys
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.send(b'{"v":1,"cmd":"status"}\\n')
            print(s.makefile("rb").readline().decode().strip())
            """, daemon.socket])
        #expect(try SocketClient.decode(other.stdout)["ok"] as? Bool == true, "\(other)")
    }

    @Test("out of descriptors: connections are refused with a reason and the loop does not spin")
    func descriptorExhaustion() throws {
        let namespace = try NetworkNamespace()
        let daemon = try DaemonProcess(namespace: namespace, config: "interval = 3600\n")
        try daemon.start(prefix: ["prlimit", "--nofile=48"])
        var clients: [SocketClient] = []
        for _ in 0..<100 { clients.append(try daemon.client()) }
        let pid = daemon.pid  // ip netns exec and prlimit exec, so the daemon is the started process
        // The last connections cannot have a descriptor: each is told why and closed.
        let refusal = try SocketClient.decode(try #require(try clients.last!.readLine(timeoutMilliseconds: 30_000)))
        #expect(refusal.string("error.code") == "too_many_clients")
        #expect(refusal.string("error.message")?.contains("file descriptors") == true, "\(refusal)")
        // Held for a while, the backlog costs the daemon next to no CPU (it spun at 100 %). As a
        // share of the time held, not a figure per second: a test thread held up by a loaded
        // machine only holds the backlog longer, and a spinning loop fills its share of that too.
        let before = try cpuSeconds(pid), from = Date()
        let waited = from.addingTimeInterval(2)
        while Date() < waited { usleep(100_000) }
        let share = try (cpuSeconds(pid) - before) / Date().timeIntervalSince(from)
        #expect(share < 0.2, "the daemon used \(share * 100) % of a CPU while the backlog was held")
        clients.removeAll()
        let deadline = Date().addingTimeInterval(60)
        var served = false
        while !served && Date() < deadline {
            served = (try? daemon.client().request(#"{"v":1,"cmd":"status"}"#))?["ok"] as? Bool == true
            if !served { usleep(50_000) }
        }
        #expect(served, "a slot freed is a client served")
    }

    @Test("1000 connections, silent watchers, garbage, maximum-length lines, a sample flood and a slowloris: root is answered throughout, sampling never stalls")
    func hostileNeighbour() throws {
        let (_, daemon) = try daemon("interval = 1\nmax_line_length = 4K\n")
        let root = try daemon.client()
        let watcher = try daemon.client()
        _ = try watcher.request(#"{"v":1,"id":"w","cmd":"watch"}"#)
        let attacker = Process()
        attacker.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        attacker.arguments = ["--reuid=nobody", "--regid=nogroup", "--clear-groups",
                              try OtherUserCopy.of(Daemon.packageRoot + "/Tests/tools/hostile-neighbour", in: daemon.directory),
                              daemon.socket, "8", "1000", "200", "4096"]
        let output = Pipe()
        attacker.standardOutput = output
        try attacker.run()
        var latencies: [Double] = []
        var sampleTimes: [Double] = []
        // The longest this loop itself went unscheduled between two turns: what the machine's
        // load, not the attack, took from every process alike.
        var longestPause = 0.0
        var lastTurn = Date()
        // The attack lasts 8 s once set up; a deadline far past that catches a hung attacker.
        let attackDeadline = Date().addingTimeInterval(120)
        while attacker.isRunning && Date() < attackDeadline {
            let started = Date()
            longestPause = max(longestPause, started.timeIntervalSince(lastTurn) - 0.02)
            #expect(try root.request(#"{"v":1,"cmd":"status"}"#)["ok"] as? Bool == true)
            latencies.append(Date().timeIntervalSince(started))
            while let line = try? watcher.readLine(timeoutMilliseconds: 0) {
                if let reply = try? SocketClient.decode(line), reply.string("stream") == "rates",
                   let at = reply[path: "result.at"] as? Double {
                    sampleTimes.append(at)
                }
            }
            lastTurn = Date()
            usleep(20_000)
        }
        try attacker.awaitExit("hostile-neighbour (an 8 s attack)", within: 10)
        let report = try SocketClient.decode(String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
        #expect(try #require(report["accepted"] as? Int, "\(report)") <= 64, "\(report)")
        // Every attack really ran: silent watchers, and sends of each other kind.
        #expect((report["watching"] as? Int ?? 0) > 0, "\(report)")
        let sent = report["sent"] as? [String: Int] ?? [:]
        #expect(["garbage", "long", "flood", "slowloris"].allSatisfy { (sent[$0] ?? 0) > 0 }, "\(report)")
        #expect(((report["refused"] as? [String: Any])?["too_many_clients"] as? Int ?? 0) >= 900, "\(report)")
        // Root was answered every time (each request above has SocketClient's deadline) and
        // sampling never stalled. The latency figure itself (p99 under 50 ms on this machine) is
        // measured by `scripts/bench-hostile`, not asserted here: suites run in parallel on a
        // loaded two-core machine. Starvation is a sample late by more than the daemon was ever
        // unresponsive to root, or than this test's own loop went unscheduled: a machine too
        // loaded to run the daemon delays all of them alike.
        let sorted = latencies.sorted()
        let p99 = sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))]
        print("hostile neighbour: root's status p99 \(p99) s over \(sorted.count) requests; samples at \(sampleTimes)")
        #expect(sorted.count >= 3, "root asked only \(sorted.count) times during the attack")
        #expect(sampleTimes.count >= 3, "\(sampleTimes)")
        let allowed = 3 + max(sorted.last ?? 0, longestPause)
        for (earlier, later) in zip(sampleTimes, sampleTimes.dropFirst()) {
            #expect(later - earlier <= allowed,
                    "samples \(earlier) → \(later) while root waited at most \(sorted.last ?? 0) s and this loop paused \(longestPause) s: sampling stalled")
        }
        #expect(daemon.isRunning)
    }

    @Test("a foreground daemon whose stderr reader is gone keeps running (SIGPIPE ignored)")
    func brokenStderr() throws {
        let namespace = try NetworkNamespace()
        let daemon = try DaemonProcess(namespace: namespace, config: "interval = 3600\n")
        // The daemon's stderr is a pipe whose reader exits at once: the notice each SIGHUP
        // writes would raise SIGPIPE. The process started is sh; the daemon is its child.
        try daemon.start(prefix: ["sh", "-c", "exec \"$@\" 2>&1 | true", "sh"])
        // Released, DaemonProcess kills sh and every process naming its directory: the daemon
        // too, even when this #require fails.
        let pid = try #require(Int32(try Command.check(["pgrep", "-f", "--newest", "^" + DaemonProcess.binary + ".*" + daemon.directory])
            .trimmingCharacters(in: .whitespacesAndNewlines)))
        kill(pid, SIGHUP)
        kill(pid, SIGHUP)
        #expect(try daemon.client().request(#"{"v":1,"cmd":"status"}"#)["ok"] as? Bool == true)
        #expect(kill(pid, 0) == 0)
    }

    @Test("values that once trapped the daemon are refused with a message", arguments: [
        (["--interval", "99999999999999"], "interval = 30\n", Int32(64), "--interval: expected whole seconds from 1 to 3600"),
        (["--check-config"], "max_line_length = 8589934592G\n", Int32(78), "max_line_length: expected a size from 256 to 16777216 bytes"),
        (["--check-config"], "interval = 99999999999999\n", Int32(78), "interval: expected a duration from 1 to 3600 s"),
    ])
    func trappingValues(_ arguments: [String], _ config: String, _ status: Int32, _ message: String) throws {
        let daemon = try DaemonProcess(namespace: try NetworkNamespace(), config: config)
        let result = try daemon.runToExit(arguments)
        #expect(result.status == status && result.stderr.contains(message), "\(result)")
    }

    @Test("link events lost while the daemon is stalled (a small event socket, passed as systemd would): an events-lost event and label")
    func eventsLost() throws {
        let namespace = try NetworkNamespace()
        let daemon = try DaemonProcess(namespace: namespace, config: "interval = 3600\n")
        // The event socket passed the way systemd passes ifmeterd-events.socket (LISTEN_FDS,
        // fd 3), but with the smallest receive buffer the kernel allows, so a few link messages
        // overflow it — what a stock rmem_max does to a thousand.
        let passNetlinkSocket = """
            import os, socket, sys
            s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
            s.bind((0, 1))  # RTNLGRP_LINK, as ListenNetlink=route 1
            os.dup2(s.fileno(), 3)
            os.set_inheritable(3, True)  # dup2 onto itself (the socket may be fd 3) keeps close-on-exec
            os.environ.update(LISTEN_FDS="1", LISTEN_PID=str(os.getpid()))
            os.execv(sys.argv[1], sys.argv[1:])
            """
        try daemon.start(prefix: ["python3", "-c", passNetlinkSocket])
        let pid = daemon.pid  // ip netns exec and python exec, so the daemon is the started process
        let status = try daemon.client().request(#"{"v":1,"cmd":"status"}"#)
        #expect(status.string("result.link_events.origin") == "systemd", "\(status)")
        kill(pid, SIGSTOP)
        // 20 veth pairs created and deleted while nobody reads the socket: far more than it holds.
        try namespace.ipBatch((0..<20).map { "link add e\($0)a type veth peer name e\($0)b" })
        try namespace.ipBatch((0..<20).map { "link del e\($0)a" })
        kill(pid, SIGCONT)
        // Some traffic on lo after the loss, so it has a day row and a log record to label.
        _ = try namespace.ip("link", "set", "lo", "up")
        _ = try namespace.exec(["python3", "-c", "import socket; socket.socket(2, 2).sendto(b'x' * 1000, ('127.0.0.1', 9))"])
        let client = try daemon.client()
        _ = try client.request(#"{"v":1,"cmd":"sample"}"#)
        let reply = try client.request(#"{"v":1,"cmd":"events","kind":"events-lost"}"#)
        let events = try #require(reply[path: "result.events"] as? [[String: Any]], "\(reply)")
        #expect(!events.isEmpty, "no events-lost event after an overflow")
        #expect((events.first?["detail"] as? String)?.contains("resynchronised from a full dump") == true)
        #expect(daemon.stderrText.contains("events-lost"), "\(daemon.stderrText)")
        // Every figure whose period contains the loss says so: the interface's total, the
        // day's row, and the estimate log's record of that window.
        let interfaces = try client.request(#"{"v":1,"cmd":"interfaces"}"#)
        let lo = try #require((interfaces[path: "result.interfaces"] as? [[String: Any]])?.first { $0["name"] as? String == "lo" })
        #expect((lo["labels"] as? [String])?.contains("events-lost") == true, "\(lo)")
        #expect(lo[path: "continuity.events_lost"] as? Int == events.count)
        let day = try client.request(#"{"v":1,"cmd":"usage","interface":"lo","period":"day"}"#)
        let rows = try #require(day[path: "result.rows"] as? [[String: Any]])
        #expect(rows.contains { ($0["labels"] as? [String])?.contains("events-lost") == true }, "\(rows)")
        #expect(try daemon.stop() == 0)
        let records = try daemon.logRecords().filter { $0["type"] as? String == "estimate" }
        #expect(records.contains { ($0["labels"] as? [String])?.contains("events-lost") == true })
    }

    @Test("two interface names that are not UTF-8 stay two interfaces")
    func nonUTF8Names() throws {
        let namespace = try NetworkNamespace()
        // Swift strings cannot carry the raw bytes, so the shell makes the names.
        _ = try namespace.exec(["sh", "-c", #"ip link add "$(printf '\377a')" type veth peer name "$(printf '\376a')""#])
        let probe = try namespace.exec([DaemonProcess.binary, "--probe", "--json"])
        let names = try #require((try SocketClient.decode(probe)["interfaces"] as? [[String: Any]])?.compactMap { $0["name"] as? String })
        #expect(names.contains(#"\xffa"#) && names.contains(#"\xfea"#), "\(names)")
    }

    @Test("an interface named with an escape sequence is shown escaped by ifmeter, never sent to the terminal")
    func escapeInName() throws {
        let namespace = try NetworkNamespace()
        // ESC is not white space: the kernel takes it in a name.
        _ = try namespace.exec(["sh", "-c", #"ip link add "$(printf 'e\033[2Jx')" type veth peer name peer0"#])
        let daemon = try DaemonProcess(namespace: namespace, config: "interval = 3600\n")
        try daemon.start()
        let list = try Command.run([Command.buildProductsDirectory + "/ifmeter", "--socket", daemon.socket, "list", "-a"])
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout.contains(#"e\x1b[2Jx"#), "\(list.stdout)")
        #expect(!list.stdout.utf8.contains(0x1B), "a raw ESC reached the terminal")
        let json = try Command.run([Command.buildProductsDirectory + "/ifmeter", "--socket", daemon.socket, "list", "-a", "--json"])
        #expect(json.stdout.contains(#"e\u001b[2Jx"#), "JSON keeps the name, escaped as JSON: \(json.stdout)")
    }

    @Test("SIGTERM while the database is still loading: a clean exit")
    func stopWhileLoading() throws {
        let namespace = try NetworkNamespace()
        let daemon = try DaemonProcess(namespace: namespace, config: "interval = 3600\n")
        try daemon.start()
        #expect(try daemon.stop() == 0)
        let holder = try DatabaseHolder(path: daemon.stateDirectory + "/ifmeter.db")
        defer { holder.release() }
        try daemon.start(waitForReady: false)
        var loading = false
        let deadline = Date().addingTimeInterval(60)
        while !loading && Date() < deadline {
            loading = (try? daemon.client().request(#"{"v":1,"cmd":"status"}"#))?[path: "result.ready"] as? Bool == false
            if !loading { usleep(20_000) }
        }
        #expect(loading)
        #expect(try daemon.stop() == 0)
    }

    @Test("sample requests from other users share one dump and come at most once a second")
    func sampleCoalescing() throws {
        let (_, daemon) = try daemon("interval = 3600\n")
        let script = """
            import json, socket, sys, time
            clients = []
            for _ in range(10):
                s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); clients.append((s, s.makefile("rb")))
            def answer(pair):
                return json.loads(pair[1].readline())["result"]["sampled_at"]
            clients[0][0].send(b'{"v":1,"cmd":"sample"}\\n')
            first, asked = answer(clients[0]), time.monotonic()
            for s, _ in clients:
                s.send(b'{"v":1,"cmd":"sample"}\\n')
            times = [answer(pair) for pair in clients]
            print(json.dumps({"first": first, "times": times, "waited": time.monotonic() - asked}))
            """
        let result = try asNobody(["/usr/bin/python3", "-c", script, daemon.socket])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try SocketClient.decode(result.stdout)
        let first = try #require(report["first"] as? Double)
        let times = try #require(report["times"] as? [Double])
        #expect(Set(times).count == 1, "ten requests, one dump: \(times)")
        #expect((times.first ?? 0) - first >= 0.9, "a second dump within a second of the first: \(report)")
        // Root's five samples back to back are five fresh dumps after the shared one; that
        // they are not paced is SamplePaceTests' (how far apart they come is load's, here).
        let root = try daemon.client()
        let mine = try (0..<5).map { _ in try #require(try root.request(#"{"v":1,"cmd":"sample"}"#)[path: "result.sampled_at"] as? Double) }
        #expect(mine.first! > (times.first ?? .infinity), "\(mine) after \(times)")
        #expect(zip(mine, mine.dropFirst()).allSatisfy { $0 < $1 }, "\(mine)")
    }
}
