import Foundation
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Polls `body` until it returns a value or `seconds` pass; the last failure says why, with what
/// `seen` (set by the body, say, to the last value it read) holds then.
func eventually<T>(_ what: String, seconds: Double = 20, seen: (() -> String)? = nil, _ body: () throws -> T?) throws -> T {
    let deadline = Date().addingTimeInterval(seconds)
    var last = "never tried"
    while Date() < deadline {
        do {
            if let value = try body() { return value }
            last = "not yet"
        } catch {
            last = "\(error)"
        }
        usleep(100_000)
    }
    let saw = seen.map { "; last seen: \($0())" } ?? ""
    throw CommandFailed(command: [what], result: CommandResult(status: 1, stdout: "", stderr: "gave up after \(seconds) s: \(last)\(saw)"))
}

/// One sample line's value in an exposition, by its exact name and labels.
func sampleValue(_ exposition: String, _ series: String) -> Double? {
    exposition.split(separator: "\n").first { $0.hasPrefix(series + " ") }
        .flatMap { Double($0.dropFirst(series.count + 1)) }
}

let metricsPort: UInt16 = 10951

/// `/metrics` from the real ifmeterd, read by curl, promtool, node_exporter and Prometheus.
@Suite("Prometheus metrics", .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason),
       .enabled(if: Promtool.available, Promtool.skipReason), .ownThread, .timeLimit(.minutes(10)))
struct MetricsTests {
    func curl(_ namespace: NetworkNamespace, _ arguments: [String]) throws -> CommandResult {
        try namespace.run(["curl", "-sS", "--max-time", "10"] + arguments)
    }

    @Test("scrapes between two samples are the same bytes, rendered once; a sample makes a new one")
    func renderedOncePerSample() throws {
        let namespace = try NetworkNamespace()
        let daemon = try DaemonProcess(namespace: namespace, config: "interval = 3600\nsave_interval = 3600\n")
        try daemon.start(extraArguments: ["--metrics-listen", "127.0.0.1:\(metricsPort)"])
        let url = "http://127.0.0.1:\(metricsPort)/metrics"
        // The first save after the start is a new state of the figures too: past it first.
        _ = try eventually("the first save") {
            try daemon.client().request(#"{"v":1,"cmd":"status"}"#)[path: "result.store.last_save_at"] as? Double
        }
        let first = try curl(namespace, [url]).stdout
        // Twenty more descriptors open in the daemon: a new render would count them in
        // process_open_fds; the render of this sample does not.
        let held = try (0..<20).map { _ in try daemon.client() }
        _ = try held[19].request(#"{"v":1,"cmd":"status"}"#)
        for _ in 0..<3 { #expect(try curl(namespace, [url]).stdout == first) }
        let command = try daemon.client().request(#"{"v":1,"id":1,"cmd":"metrics"}"#)
        #expect(command.string("result.text") == first, "the metrics command serves the same render")
        _ = try daemon.client().request(#"{"v":1,"id":2,"cmd":"sample"}"#)
        let after = try curl(namespace, [url]).stdout
        #expect(after != first)
        #expect(sampleValue(after, "ifmeter_last_sample_timestamp_seconds")! > sampleValue(first, "ifmeter_last_sample_timestamp_seconds")!)
        // The held twenty, less what the first render caught in passing and the second did not
        // (a client's connection the loop had not yet seen close, a save's file): a few.
        #expect(sampleValue(after, "process_open_fds")! >= sampleValue(first, "process_open_fds")! + 15)
        withExtendedLifetime(held) {}
    }

    /// DNS rebinding: a page a local browser loads points its own name at 127.0.0.1 and reads the
    /// answers as its own origin's; the listener answers only its names and addresses.
    @Test("a page of another site cannot read the listener: a Host that is not this host's is 421 on every path; addresses, localhost and configured names are answered, a reload adds one")
    func dnsRebinding() throws {
        let namespace = try NetworkNamespace()
        let daemon = try DaemonProcess(namespace: namespace, config: "interval = 3600\nmetrics_listen = 127.0.0.1:\(metricsPort)\nhttp_allowed_hosts = metrics.example.org\n")
        try daemon.startAsTheUnit()
        let paths = ["/", "/subject?name=lo", "/metrics", "/api/v1/status", "/api/v1/query?usage=today", "/static/ifmeter.css", "/nothing"]
        func get(_ path: String, host: String) throws -> (status: String, headers: String, body: String) {
            let result = try curl(namespace, ["-D", "-", "-H", "Host: \(host)", "-w", "\n%{http_code}", "http://127.0.0.1:\(metricsPort)\(path)"])
            let status = String(result.stdout.split(separator: "\n").last ?? "")
            let parts = result.stdout.components(separatedBy: "\r\n\r\n")
            return (status, parts.first ?? "", parts.dropFirst().joined(separator: "\r\n\r\n"))
        }
        for host in ["rebind.attacker.example:\(metricsPort)", "rebind.attacker.example", "localhost.attacker.example", "[::1"] {
            for path in paths {
                let answer = try get(path, host: host)
                #expect(answer.status == "421", "\(host) \(path): \(answer.status)")
                #expect(answer.body.contains("http_allowed_hosts") && !answer.body.contains("ifmeter_"), "\(host) \(path): \(answer.body.prefix(200))")
            }
        }
        for host in ["127.0.0.1:\(metricsPort)", "localhost:\(metricsPort)", "LOCALHOST", "metrics.example.org:\(metricsPort)", "Metrics.Example.org."] {
            let metrics = try get("/metrics", host: host)
            #expect(metrics.status == "200" && metrics.body.contains("ifmeter_"), "\(host): \(metrics.status)")
            let page = try get("/", host: host)
            #expect(page.status == "200", "\(host): \(page.status)")
            #expect(!page.headers.lowercased().contains("access-control-allow"), "no CORS: \(page.headers)")
        }
        try "interval = 3600\nmetrics_listen = 127.0.0.1:\(metricsPort)\nhttp_allowed_hosts = metrics.example.org rebind.attacker.example\n"
            .write(toFile: daemon.config, atomically: true, encoding: .utf8)
        #expect(try daemon.client().request(#"{"v":1,"cmd":"reload"}"#)["ok"] as? Bool == true)
        #expect(try get("/api/v1/status", host: "rebind.attacker.example").status == "200", "a reload applies http_allowed_hosts")
    }

    @Test("40 connections from five loopback addresses trickling a header line every second hold no slot a scrape needs")
    func slowlorisScrape() throws {
        let namespace = try NetworkNamespace()
        let daemon = try DaemonProcess(namespace: namespace, config: "interval = 3600\n")
        try daemon.start(extraArguments: ["--metrics-listen", "0.0.0.0:\(metricsPort)"])
        // Inside the namespace every 127.x address is its own loopback address.
        // It trickles until the test closes its standard input: the attack lasts through the
        // scrapes however long a loaded machine takes over them.
        let trickle = """
            import select, socket, sys
            held = []
            for i in range(40):
                s = socket.create_connection(("127.0.0.%d" % (2 + i % 5), int(sys.argv[1])))
                s.send(b"GET /metrics HTTP/1.1\\r\\nHost: x\\r\\n"); held.append(s)
            print("holding", flush=True)
            while not select.select([sys.stdin], [], [], 1)[0]:
                for s in held:
                    try: s.send(b"X-Slow: 1\\r\\n")
                    except OSError: pass
            """
        let attacker = Process()
        attacker.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
        attacker.arguments = ["netns", "exec", namespace.name, "python3", "-c", trickle, String(metricsPort)]
        let output = Pipe(), input = Pipe()
        attacker.standardOutput = output
        attacker.standardInput = input
        try attacker.run()
        defer { attacker.end() }
        #expect(output.fileHandleForReading.firstLine() == "holding")
        // Well inside the attack (every trickler's deadline passes in 5 s; they go on sending):
        // scrape after scrape is answered in full.
        for _ in 0..<3 {
            let scrape = try curl(namespace, ["http://127.0.0.1:\(metricsPort)/metrics"])
            #expect(scrape.status == 0 && scrape.stdout.contains("ifmeter_up 1"), "\(scrape.stderr)")
        }
        #expect(attacker.isRunning, "the attack lasted through the scrapes")
        // A line, not only the end of its input: a child another test spawns meanwhile may
        // hold a copy of the pipe's write end, and the end would never come.
        try input.fileHandleForWriting.write(contentsOf: Data("stop\n".utf8))
        try input.fileHandleForWriting.close()
        #expect(try attacker.awaitExit("the trickling attacker, its input closed") == 0)
    }

    @Test("/metrics: the kernel's bytes for known traffic, promtool clean, gzip, OpenMetrics, HEAD, 404, 405")
    func exposition() throws {
        let pair = try VethPair(subnet: 84)
        let daemon = try DaemonProcess(namespace: pair.left, config: "interval = 3600\n")
        try daemon.start(extraArguments: ["--metrics-listen", "127.0.0.1:\(metricsPort)"])
        try pair.sendLeftToRight(count: 120, payload: 700)
        try pair.sendRightToLeft(count: 15, payload: 90)
        _ = try daemon.client().request(#"{"v":1,"id":1,"cmd":"sample"}"#)
        let url = "http://127.0.0.1:\(metricsPort)/metrics"
        let plain = try curl(pair.left, ["-D", "-", url])
        #expect(plain.status == 0)
        #expect(plain.stdout.contains("Content-Type: text/plain; version=0.0.4; charset=utf-8"))
        let body = plain.stdout.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
        let transmitted = try pair.left.sysfsCounter("va", "tx_bytes")
        #expect(transmitted == 120 * 742)
        #expect(sampleValue(body, #"ifmeter_interface_transmit_bytes_total{interface="va",class="virtual"}"#) == Double(transmitted))
        #expect(sampleValue(body, #"ifmeter_interface_receive_packets_total{interface="va",class="virtual"}"#) == 15)
        #expect(sampleValue(body, "ifmeter_up") == 1)
        let lint = try Command.run(["promtool", "check", "metrics"], stdin: body)
        #expect(lint.status == 0, "\(lint.stdout)\(lint.stderr)")

        let gzip = try curl(pair.left, ["-D", "-", "-o", "/dev/null", "-H", "Accept-Encoding: gzip", url])
        #expect(gzip.stdout.contains("Content-Encoding: gzip"))
        let unpacked = try curl(pair.left, ["--compressed", url])
        #expect(sampleValue(unpacked.stdout, #"ifmeter_interface_transmit_bytes_total{interface="va",class="virtual"}"#) == Double(transmitted))

        let openMetrics = try curl(pair.left, ["-D", "-", "-H", "Accept: application/openmetrics-text;version=1.0.0", url])
        #expect(openMetrics.stdout.contains("Content-Type: application/openmetrics-text; version=1.0.0; charset=utf-8"))
        #expect(openMetrics.stdout.hasSuffix("# EOF\n"))

        let head = try curl(pair.left, ["-I", url])
        #expect(head.stdout.hasPrefix("HTTP/1.1 200") && !head.stdout.contains("ifmeter_up"))
        let missing = try curl(pair.left, ["-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(metricsPort)/nothing-here"])
        #expect(missing.stdout == "404")
        let post = try curl(pair.left, ["-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-d", "x", url])
        #expect(post.stdout == "405")

        let status = try daemon.client().request(#"{"v":1,"id":2,"cmd":"status"}"#)
        #expect(status.string("result.metrics") == "127.0.0.1:\(metricsPort)")
        #expect(try daemon.stop() == 0)
    }

    @Test("ifmeter metrics is promtool clean; --textfile is replaced atomically while node_exporter reads it")
    func textfile() throws {
        let namespace = try NetworkNamespace()
        let daemon = try DaemonProcess(namespace: namespace, config: "interval = 1\n")
        try daemon.start()
        let printed = try Command.run([CLIBinary.path, "--socket", daemon.socket, "metrics"])
        #expect(printed.status == 0 && sampleValue(printed.stdout, "ifmeter_up") == 1)
        let lint = try Command.run(["promtool", "check", "metrics"], stdin: printed.stdout)
        #expect(lint.status == 0, "\(lint.stdout)\(lint.stderr)")
        let openMetrics = try Command.run([CLIBinary.path, "--socket", daemon.socket, "metrics", "--openmetrics"])
        #expect(openMetrics.stdout.hasSuffix("# EOF\n"))

        let directory = daemon.directory + "/textfile"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let exporter = Process()
        exporter.executableURL = URL(fileURLWithPath: try Command.resolve("ip"))
        exporter.arguments = ["netns", "exec", namespace.name, try Command.resolve("prometheus-node-exporter"),
                              "--collector.disable-defaults", "--collector.textfile",
                              "--collector.textfile.directory=\(directory)", "--web.listen-address=127.0.0.1:9100"]
        exporter.standardError = FileHandle.nullDevice
        exporter.standardOutput = FileHandle.nullDevice
        try exporter.run()
        defer { exporter.end() }
        // A writer replacing the file 100 times as fast as it can, while node_exporter is
        // scraped. It ends on its own: the test waits for it (to its deadline), never stops it.
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/bin/sh")
        writer.arguments = ["-c", "for i in $(seq 100); do \"$0\" --socket \"$1\" metrics --textfile \"$2\" || exit 1; done",
                            CLIBinary.path, daemon.socket, directory]
        try writer.run()
        defer { writer.end(SIGKILL) }
        _ = try eventually("node_exporter up") { try curl(namespace, ["http://127.0.0.1:9100/metrics"]).status == 0 ? true : nil }
        var scrapes = 0
        let deadline = Date().addingTimeInterval(120)
        while (writer.isRunning || scrapes < 5) && Date() < deadline {
            let scrape = try curl(namespace, ["http://127.0.0.1:9100/metrics"])
            guard scrape.status == 0, scrape.stdout.contains("ifmeter_up") else { continue }
            scrapes += 1
            #expect(sampleValue(scrape.stdout, "node_textfile_scrape_error") == 0)
            #expect(sampleValue(scrape.stdout, "ifmeter_up") == 1)
        }
        #expect(scrapes >= 5, "\(scrapes) good scrapes before the deadline")
        #expect(try writer.awaitExit("the textfile writer (100 runs of ifmeter metrics --textfile)", within: 120) == 0)
        // node_exporter reports its own process_* series: a textfile carrying them too would
        // clash. The daemon's exposition has them; the textfile must not.
        func processLines(_ text: String) -> [Substring] {
            text.split(separator: "\n").filter { $0.hasPrefix("process_") || $0.contains(" process_") }
        }
        #expect(!processLines(printed.stdout).isEmpty, "ifmeter metrics has process_* series")
        let written = try String(contentsOfFile: directory + "/ifmeter.prom", encoding: .utf8)
        #expect(sampleValue(written, "ifmeter_up") == 1)
        #expect(processLines(written).isEmpty, "\(processLines(written))")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(leftovers == ["ifmeter.prom"])
        #expect(try daemon.stop() == 0)
    }

    @Test("bad HTTP (unfinished requests, a full house, huge headers) never delays the Unix socket or samples")
    func hostileHTTP() throws {
        let namespace = try NetworkNamespace()
        let daemon = try DaemonProcess(namespace: namespace, config: "interval = 1\n")
        try daemon.start(extraArguments: ["--metrics-listen", "127.0.0.1:\(metricsPort)"])
        // More unfinished requests than the endpoint has slots, from one address.
        var stalled = try namespace.inside {
            try (0..<40).map { _ in
                let connection = try TCPConnection(to: "127.0.0.1", port: metricsPort)
                connection.send("GET /metr")
                return connection
            }
        }
        let first = try #require(try daemon.client().request(#"{"v":1,"id":1,"cmd":"status"}"#)[path: "result.last_sample_at"] as? Double)
        let later = try eventually("samples go on") { () -> Double? in
            let reply = try daemon.client().request(#"{"v":1,"id":2,"cmd":"status"}"#)
            return (reply[path: "result.last_sample_at"] as? Double).flatMap { $0 >= first + 2 ? $0 : nil }
        }
        #expect(later >= first + 2)
        let interfaces = try daemon.client().request(#"{"v":1,"id":3,"cmd":"interfaces"}"#)
        #expect(interfaces["ok"] as? Bool == true)
        stalled.removeAll()

        // Once they are gone, a scrape is served again.
        let url = "http://127.0.0.1:\(metricsPort)/metrics"
        let scrape = try eventually("a scrape after the stalled clients left") { () -> String? in
            let result = try curl(namespace, [url])
            return result.status == 0 && result.stdout.contains("ifmeter_up 1") ? result.stdout : nil
        }
        #expect(sampleValue(scrape, "ifmeter_up") == 1)

        // Headers larger than a connection may hold (32 KiB): refused with 431, never served.
        let huge = try curl(namespace, ["-o", "/dev/null", "-w", "%{http_code}",
                                        "-H", "X-Filler: " + String(repeating: "a", count: 40_000), url])
        #expect(huge.stdout == "431", "\(huge.stderr)")
        #expect(daemon.isRunning)
        #expect(try daemon.stop() == 0)
    }
}
