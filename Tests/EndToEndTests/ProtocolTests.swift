import Foundation
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The socket API against the real daemon (in a namespace of its own, so its interfaces are
/// the test's): every command, every error, limits, concurrency, readiness, reload.
@Suite("Socket protocol", .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason), .ownThread, .timeLimit(.minutes(10)))
struct ProtocolTests {
    func daemon(_ config: String = "interval = 3600\n", start: Bool = true) throws -> (NetworkNamespace, DaemonProcess) {
        let namespace = try NetworkNamespace()
        let daemon = try DaemonProcess(namespace: namespace, config: config)
        if start { try daemon.start() }
        return (namespace, daemon)
    }

    func errorCode(_ reply: [String: Any]) -> String? { reply.string("error.code") }

    @Test("every command answers with its documented shape")
    func everyCommand() throws {
        let (_, daemon) = try daemon()
        let client = try daemon.client()
        let status = try client.request(#"{"v":1,"id":1,"cmd":"status"}"#)
        #expect(status["v"] as? Int == 1 && status["id"] as? Int == 1 && status["ok"] as? Bool == true)
        #expect(status[path: "result.ready"] as? Bool == true)
        #expect(status.int("result.pid") == UInt64(daemon.pid) && status.int("result.interfaces") == 1)
        #expect(status.string("result.source") == "netlink" && status[path: "result.store.healthy"] as? Bool == true)
        #expect(try interface("lo", in: client.request(#"{"v":1,"id":2,"cmd":"interfaces"}"#)).string("class") == "loopback")
        let usage = try client.request(#"{"v":1,"id":3,"cmd":"usage","interface":"lo","period":"day","projection":true}"#)
        #expect(usage[path: "result.rows"] is [Any] && usage.string("result.period") == "day")
        #expect((usage[path: "result.projection.labels"] as? [String])?.contains("projection") == true)
        let byClass = try client.request(#"{"v":1,"id":4,"cmd":"usage","class":"loopback","period":"total"}"#)
        #expect(byClass["ok"] as? Bool == true)
        let events = try client.request(#"{"v":1,"id":5,"cmd":"events","kind":"first-sight"}"#)
        #expect((events[path: "result.events"] as? [[String: Any]])?.first?["interface"] as? String == "lo")
        let sample = try client.request(#"{"v":1,"id":"s","cmd":"sample"}"#)
        #expect(sample["id"] as? String == "s" && sample.int("result.interfaces") == 1)
        let reload = try client.request(#"{"v":1,"id":6,"cmd":"reload"}"#)
        #expect(reload["ok"] as? Bool == true)
        let forget = try client.request(#"{"v":1,"id":7,"cmd":"forget","interface":"lo"}"#)
        #expect(forget["ok"] as? Bool == true)
        let watch = try client.request(#"{"v":1,"id":8,"cmd":"watch"}"#)
        #expect(watch.string("stream") == "rates" && watch[path: "result.interfaces"] is [Any])
    }

    @Test("reload applies the file it reads; forget deletes a name's buckets, total and events, counting goes on, and a name gone and forgotten is unknown")
    func reloadAndForget() throws {
        let pair = try VethPair(subnet: 94)
        let daemon = try DaemonProcess(namespace: pair.left, config: "interval = 3600\n")
        try daemon.start()
        let client = try daemon.client()
        try "interval = 7\n".write(toFile: daemon.config, atomically: true, encoding: .utf8)
        #expect(try client.request(#"{"v":1,"id":1,"cmd":"reload"}"#)["ok"] as? Bool == true)
        #expect(try client.request(#"{"v":1,"cmd":"status"}"#).int("result.interval") == 7)

        let total = #"{"v":1,"cmd":"usage","interface":"va","period":"total"}"#
        let day = #"{"v":1,"cmd":"usage","interface":"va","period":"day"}"#
        let events = #"{"v":1,"cmd":"events","interface":"va"}"#
        func txBytes(_ reply: [String: Any]) -> UInt64 {
            ((reply[path: "result.rows"] as? [[String: Any]]) ?? []).reduce(0) { $0 + ($1.int("tx_bytes") ?? 0) }
        }
        try pair.sendLeftToRight(count: 20, payload: 500)
        _ = try client.request(#"{"v":1,"cmd":"sample"}"#)
        #expect(txBytes(try client.request(total)) == 20 * 542)
        #expect(txBytes(try client.request(day)) == 20 * 542)
        #expect((try client.request(events)[path: "result.events"] as? [Any])?.isEmpty == false)

        let forget = try client.request(#"{"v":1,"id":2,"cmd":"forget","interface":"va"}"#)
        #expect(forget["ok"] as? Bool == true, "\(forget)")
        #expect(txBytes(try client.request(total)) == 0)
        #expect(txBytes(try client.request(day)) == 0)
        #expect((try client.request(events)[path: "result.events"] as? [Any])?.isEmpty == true)
        let va = try interface("va", in: client.request(#"{"v":1,"cmd":"interfaces"}"#))
        #expect(va.int("tx_bytes") == 0, "\(va)")
        // A present interface goes on counting from the forget.
        try pair.sendLeftToRight(count: 10, payload: 500)
        _ = try client.request(#"{"v":1,"cmd":"sample"}"#)
        #expect(txBytes(try client.request(total)) == 10 * 542)

        try pair.left.ip("link", "del", "va")
        _ = try client.request(#"{"v":1,"cmd":"sample"}"#)
        #expect(try client.request(#"{"v":1,"id":3,"cmd":"forget","interface":"va"}"#)["ok"] as? Bool == true)
        #expect(errorCode(try client.request(total)) == "unknown_interface")
        #expect(errorCode(try client.request(#"{"v":1,"id":4,"cmd":"forget","interface":"va"}"#)) == "unknown_interface")
    }

    @Test("a user other than root gets current figures: what was counted since the last save, read from memory, with no save forced")
    func currentFiguresForEveryone() throws {
        let (namespace, daemon) = try daemon("interval = 3600\nsave_interval = 3600\n")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: daemon.directory)
        let root = try daemon.client()
        func traffic() throws {
            _ = try namespace.exec(["python3", "-c", "import socket; socket.socket(2, 2).sendto(b'x' * 1000, ('127.0.0.1', 9))"])
            _ = try root.request(#"{"v":1,"cmd":"sample"}"#)
        }
        func lastSave() throws -> Double? { try root.request(#"{"v":1,"cmd":"status"}"#)[path: "result.store.last_save_at"] as? Double }
        // What the daemon counted for lo, from memory (its own figures, not the store's).
        func counted() throws -> UInt64 {
            let interfaces = try root.request(#"{"v":1,"cmd":"interfaces"}"#)[path: "result.interfaces"] as? [[String: Any]] ?? []
            return try #require(interfaces.first { $0["name"] as? String == "lo" }?.int("tx_bytes"))
        }
        let saved = try eventually("the first save") { try lastSave() }
        let ask = """
            import json, socket, sys
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile("rwb")
            for line in sys.stdin:
                f.write(line.encode()); f.flush(); print(f.readline().decode().strip(), flush=True)
            """
        let asker = Process()
        asker.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        asker.arguments = ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/python3", "-c", ask, daemon.socket]
        let input = Pipe(), output = Pipe()
        (asker.standardInput, asker.standardOutput) = (input, output)
        try asker.run()
        defer {
            try? input.fileHandleForWriting.close()
            asker.end()
        }
        func nobody(_ request: String) throws -> [String: Any] {
            input.fileHandleForWriting.write(Data((request + "\n").utf8))
            return try SocketClient.decode(output.fileHandleForReading.firstLine())
        }
        func total(_ reply: [String: Any]) -> UInt64? { (reply[path: "result.rows"] as? [[String: Any]])?.first?.int("tx_bytes") }
        let usage = #"{"v":1,"cmd":"usage","interface":"lo","period":"total"}"#
        let today = #"{"v":1,"cmd":"query","interfaces":["lo"],"usage":[{"period":"day","last":1}]}"#
        func day() throws -> (start: UInt64, tx: UInt64)? {
            let usage = try nobody(today)[path: "result.usage"] as? [[String: Any]]
            return ((usage?.first?["rows"] as? [[String: Any]])?.last).flatMap { row in
                row.int("start").flatMap { start in row.int("tx_bytes").map { (start, $0) } }
            }
        }
        var (lastTotal, lastDay) = (try counted(), try day())
        for round in 1...3 {
            try traffic()
            let expected = try counted()
            #expect(expected > lastTotal, "round \(round): traffic was counted")
            #expect(total(try nobody(usage)) == expected, "round \(round): nobody's total is what was counted")
            #expect(total(try root.request(usage)) == expected, "round \(round): root's too")
            // Today's row grew by what the total grew by; a day begun meanwhile holds part of it.
            let today = try #require(try day())
            if let lastDay, lastDay.start == today.start {
                #expect(today.tx - lastDay.tx == expected - lastTotal, "round \(round): today's row holds the unsaved traffic")
            } else {
                #expect(today.tx > 0 && today.tx <= expected - lastTotal, "round \(round): a new day's row")
            }
            (lastTotal, lastDay) = (expected, today)
        }
        #expect(try lastSave() == saved, "no question made the daemon save")
        let events = try nobody(#"{"v":1,"cmd":"events","interface":"lo"}"#)
        #expect(events[path: "result.events"] is [Any] && events[path: "result.unsaved_not_included"] == nil, "\(events)")
    }

    @Test("each bad request gets its error, and the connection stays usable", arguments: [
        ("not json", "bad_json"),
        (#"[1,2]"#, "bad_json"),
        (#"{"v":"1","cmd":"status"}"#, "bad_json"),
        (#"{"cmd":"status"}"#, "bad_request"),
        (#"{"v":2,"cmd":"status"}"#, "unsupported_version"),
        (#"{"v":1}"#, "bad_request"),
        (#"{"v":1,"cmd":"frobnicate"}"#, "unknown_command"),
        (#"{"v":1,"cmd":"usage","interface":"lo"}"#, "bad_request"),
        (#"{"v":1,"cmd":"usage","period":"day"}"#, "bad_request"),
        (#"{"v":1,"cmd":"usage","interface":"lo","class":"wifi","period":"day"}"#, "bad_request"),
        (#"{"v":1,"cmd":"usage","interface":"wlan9","period":"day"}"#, "unknown_interface"),
        (#"{"v":1,"cmd":"usage","class":"modem","period":"day"}"#, "bad_request"),
        (#"{"v":1,"cmd":"usage","interface":"lo","period":"week"}"#, "bad_request"),
        (#"{"v":1,"cmd":"usage","interface":"lo","period":"day","from":"yesterday"}"#, "bad_json"),
        (#"{"v":1,"cmd":"events","kind":"explosion"}"#, "bad_request"),
        (#"{"v":1,"cmd":"events","limit":0}"#, "bad_request"),
        // Once killed the daemon (an Int64 conversion trapped); now refused where it enters.
        (#"{"v":1,"cmd":"usage","class":"loopback","period":"day","from":1e30}"#, "bad_request"),
        (#"{"v":1,"cmd":"usage","interface":"lo","period":"hour","to":-1e300}"#, "bad_request"),
        (#"{"v":1,"cmd":"forget"}"#, "bad_request"),
        (#"{"v":1,"cmd":"forget","interface":"wlan9"}"#, "unknown_interface"),
    ])
    func badRequests(_ line: String, _ code: String) throws {
        let (_, daemon) = try daemon()
        let client = try daemon.client()
        let reply = try client.request(line)
        #expect(reply["ok"] as? Bool == false)
        #expect(errorCode(reply) == code, "\(line) → \(reply)")
        #expect(!(reply.string("error.message") ?? "").isEmpty)
        #expect(try client.request(#"{"v":1,"id":9,"cmd":"status"}"#)["ok"] as? Bool == true)
    }

    @Test("an oversize line is refused and discarded; the next request on the line works")
    func oversizeLine() throws {
        let (_, daemon) = try daemon("interval = 3600\nmax_line_length = 1K\n")
        let client = try daemon.client()
        let huge = #"{"v":1,"id":1,"cmd":"status","interface":""# + String(repeating: "x", count: 5000) + #""}"#
        let reply = try client.request(huge)
        #expect(errorCode(reply) == "line_too_long")
        #expect(try client.request(#"{"v":1,"id":2,"cmd":"status"}"#)["id"] as? Int == 2)
    }

    @Test("pipelined requests are answered in order")
    func pipelined() throws {
        let (_, daemon) = try daemon()
        let client = try daemon.client()
        try client.send((1...20).map { #"{"v":1,"id":\#($0),"cmd":"status"}"# + "\n" }.joined())
        let ids = try (1...20).map { _ in try SocketClient.decode(try #require(try client.readLine()))["id"] as? Int }
        #expect(ids == Array(1...20))
    }

    @Test("admin commands are refused to a non-root peer (nobody)")
    func adminRefusedToNobody() throws {
        let (_, daemon) = try daemon()
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: daemon.directory)
        let script = """
            import json, socket, sys
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile("rwb")
            for cmd in ("reload", "forget", "status"):
                f.write(json.dumps({"v": 1, "id": cmd, "cmd": cmd, "interface": "lo"}).encode() + b"\\n"); f.flush()
                print(f.readline().decode().strip())
            """
        let result = try Command.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                                      "/usr/bin/python3", "-c", script, daemon.socket])
        #expect(result.status == 0, "\(result.stderr)")
        let replies = try result.stdout.split(separator: "\n").map { try SocketClient.decode(String($0)) }
        #expect(replies.count == 3)
        #expect(replies.prefix(2).allSatisfy { errorCode($0) == "permission_denied" })
        #expect(replies.last?["ok"] as? Bool == true)
    }

    @Test("a request while the database is still loading gets ready:false, never zeros")
    func readiness() throws {
        let (_, daemon) = try daemon()
        #expect(try daemon.stop() == 0)
        let holder = try DatabaseHolder(path: daemon.stateDirectory + "/ifmeter.db")
        try daemon.start(waitForReady: false)
        var client: SocketClient?
        let deadline = Date().addingTimeInterval(60)
        while client == nil && Date() < deadline {
            client = try? daemon.client()
            if client == nil { usleep(10_000) }
        }
        let early = try #require(client)
        let status = try early.request(#"{"v":1,"id":1,"cmd":"status"}"#)
        #expect(status[path: "result.ready"] as? Bool == false)
        #expect(status[path: "result.interfaces"] == nil && status[path: "result.last_sample_at"] == nil)
        let interfaces = try early.request(#"{"v":1,"id":2,"cmd":"interfaces"}"#)
        #expect(errorCode(interfaces) == "not_ready" && interfaces["result"] == nil)
        holder.release()
        try daemon.awaitReady()
        #expect(try early.request(#"{"v":1,"id":3,"cmd":"status"}"#)[path: "result.ready"] as? Bool == true)
    }

    @Test("a tunnel's usage rows, and the tunnel class's, carry tunnel-double-counted like its own figures")
    func tunnelLabels() throws {
        let namespace = try NetworkNamespace()
        _ = try namespace.ip("tuntap", "add", "mode", "tun", "name", "tunq")
        let daemon = try DaemonProcess(namespace: namespace, config: "interval = 3600\n")
        try daemon.start()
        let client = try daemon.client()
        let interfaces = try client.request(#"{"v":1,"cmd":"interfaces"}"#)
        let tun = try #require((interfaces[path: "result.interfaces"] as? [[String: Any]])?.first { $0["name"] as? String == "tunq" })
        #expect(tun["class"] as? String == "tunnel" && (tun["labels"] as? [String])?.contains("tunnel-double-counted") == true)
        for request in [#"{"v":1,"cmd":"usage","interface":"tunq","period":"total"}"#,
                        #"{"v":1,"cmd":"usage","class":"tunnel","period":"total"}"#] {
            let rows = try #require(try client.request(request)[path: "result.rows"] as? [[String: Any]], "\(request)")
            #expect(!rows.isEmpty && rows.allSatisfy { ($0["labels"] as? [String])?.contains("tunnel-double-counted") == true },
                    "\(request) → \(rows)")
        }
        let lo = try #require(try client.request(#"{"v":1,"cmd":"usage","interface":"lo","period":"total"}"#)[path: "result.rows"] as? [[String: Any]])
        #expect(!lo.isEmpty && lo.allSatisfy { ($0["labels"] as? [String])?.contains("tunnel-double-counted") == false }, "\(lo)")
    }
}
