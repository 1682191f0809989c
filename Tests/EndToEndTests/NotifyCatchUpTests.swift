import Foundation
import IfMeterTestSupport
import Testing

/// `ifmeter notify` against a stand-in daemon that has stored more plan events than one answer
/// holds: a daemon that ran for years, or one a tenant had fire events on purpose. The stand-in
/// answers `watch` and `events` (`from`, `kind`, `limit`, oldest first) as docs/PROTOCOL.md says.
@Suite("ifmeter notify catching up", .ownThread, .timeLimit(.minutes(10)))
struct NotifyCatchUpTests {
    /// The stand-in: a Unix socket server holding `STORE` (one plan-threshold event a line,
    /// `AT PERIOD_START`), read afresh for each request so a test can add events.
    static let standIn = """
        import json, os, socket, sys
        path, store = sys.argv[1], sys.argv[2]
        server = socket.socket(socket.AF_UNIX); server.bind(path); server.listen(8)
        print("listening", flush=True)
        def events():
            with open(store) as f:
                for line in f:
                    at, start = line.split()
                    yield {"at": float(at), "kind": "plan-threshold", "detail": "", "plan": {
                        "plan": "p", "direction": "total", "threshold": 0.5, "used": 5, "limit": 10,
                        "period_start": int(start), "period_end": int(start) + 100, "while_down": False}}
        while True:
            connection, _ = server.accept()
            reader = connection.makefile("rb")
            for line in reader:
                request = json.loads(line)
                answer = {"v": 1, "ok": True}
                if "id" in request: answer["id"] = request["id"]
                if request["cmd"] == "watch":
                    answer.update(stream="rates", result={"at": 0, "interfaces": []})
                else:
                    start = request.get("from", float("-inf"))
                    chosen = [e for e in events() if e["at"] >= start and e["kind"] == request["kind"]]
                    answer["result"] = {"events": chosen[:request.get("limit", 1000)]}
                connection.sendall(json.dumps(answer).encode() + b"\\n")
            connection.close()
        """

    @Test("more stored events than one answer holds: the first run remembers them all; later runs act on the new ones once, never on old ones again")
    func manyStoredEvents() throws {
        let directory = try TemporaryDirectory()
        let socket = directory.path + "/stand-in.sock", store = directory.path + "/events", state = directory.path + "/notify.state"
        let acted = directory.path + "/acted"
        // 12,000 events: more than the 10,000 an answer holds and the 10,000 keys the state keeps.
        func append(_ range: Range<Int>) throws {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: store))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data(range.map { "\(1_000_000 + $0) \($0 * 100)\n" }.joined().utf8))
            try handle.close()
        }
        #expect(FileManager.default.createFile(atPath: store, contents: nil))
        try append(0..<12_000)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: try Command.resolve("python3"))
        server.arguments = ["-c", Self.standIn, socket, store]
        let output = Pipe()
        server.standardOutput = output
        try server.run()
        defer { server.end(SIGKILL) }
        #expect(output.fileHandleForReading.firstLine() == "listening")

        func notify() throws -> [String] {
            let result = try Command.run([CLIBinary.path, "--socket", socket, "notify", "--once", "--state", state,
                                          "--exec", "echo $IFMETER_PERIOD_START >> \(acted)"])
            #expect(result.status == 0, "\(result.stderr)")
            let text = (try? String(contentsOfFile: acted, encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(atPath: acted)
            return text.split(separator: "\n").map(String.init)
        }
        #expect(try notify() == [], "a first run only remembers")
        #expect(try notify() == [], "nothing new: nothing done, however many keys the state had to let go")
        try append(12_000..<12_005)
        #expect(try notify() == (12_000..<12_005).map { String($0 * 100) }, "the five new events, once each")
        #expect(try notify() == [])
        let kept = try String(contentsOfFile: state, encoding: .utf8).split(separator: "\n")
        #expect(kept.count <= 10_002, "header, the newest time, at most 10,000 keys: \(kept.count) lines")
        #expect(kept.dropFirst().first == "newest 1012004.0", "\(kept.prefix(2))")
    }
}
