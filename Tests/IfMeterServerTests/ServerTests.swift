import Foundation
import IfMeterPlatform
@testable import IfMeterServer
import IfMeterTestSupport
import IfMeterWire
import Testing

/// The socket server with a stub policy and no meter: it frames lines, admits by the cost the
/// policy gives, answers later what is answered later, and holds a reader that does not read
/// to its budget. The loop runs on a thread of its own; the test is the client.
final class StubServer: @unchecked Sendable {
    let directory: TemporaryDirectory
    let path: String
    /// Requests the stub saw, with the cost the policy gave them, in order (loop thread only).
    private(set) var seen: [(cmd: String, cost: RequestCost)] = []
    private var thread: Thread?
    private let ready = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    /// Signalled once a `stream` request has been sent everything the server would send it.
    let streamed = DispatchSemaphore(value: 0)

    init(clientBuffer: Int = 1 << 20) throws {
        directory = try TemporaryDirectory()
        path = directory.path + "/s.sock"
        let thread = Thread { [unowned self] in self.serve(clientBuffer: clientBuffer) }
        self.thread = thread
        thread.start()
        guard ready.wait(timeout: .now() + 30) == .success else { throw StubError("the stub server did not start") }
    }

    struct StubError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// Answers: `echo` at once, `later` from a timer (as an answer built off the loop would
    /// come), `stream` with lines until the reader is cut off, `parts` with one long line sent
    /// in parts, `stop` by stopping.
    private func serve(clientBuffer: Int) {
        let loop = try! EventLoop()
        let limits = Server.Limits(maxLineLength: 256, admission: Admission.Limits(maxClients: 8, maxClientsPerUID: 8, adminReserved: 0),
                                   clientBuffer: clientBuffer, unreadPerUID: 1 << 20, idleTimeout: .seconds(60))
        let server = try! Server(path: path, passed: nil, mode: 0o600, group: nil, limits: limits, loop: loop)
        server.costOf = { request in request.cmd == "later" ? [.offLoop, .largeAnswer] : [] }
        var timers: [EventSource] = []
        server.onRequest = { [unowned self] request, client in
            self.seen.append((request.cmd ?? "", server.costOf(request)))
            let id = request.id
            switch request.cmd {
            case "later":
                server.holdRequests(of: client)
                timers.append(try! loop.after(.milliseconds(1)) {
                    server.send(LineEncoder.success(AdminResult(done: "later"), id: id), to: client)
                    server.answered(client)
                })
            case "stream":
                for index in 0..<2000 {
                    server.send(LineEncoder.success(AdminResult(done: String(repeating: "x", count: 1000) + "\(index)"), id: id),
                                to: client)
                }
                self.streamed.signal()
            case "parts":
                // One line of 200 kB in parts of 1000 bytes, all queued before the reader reads.
                server.holdRequests(of: client)
                let line = LineEncoder.success(AdminResult(done: String(repeating: "p", count: 200_000)), id: id)
                var start = 0
                while line.count - start > 1000 {
                    server.send(Array(line[start..<start + 1000]), to: client, partOfAnswer: true)
                    start += 1000
                }
                server.send(Array(line[start...]), to: client, partOfAnswer: true)
                server.answered(client)
                self.streamed.signal()
            case "stop":
                server.send(LineEncoder.success(AdminResult(done: "stopping"), id: id), to: client)
                loop.exit(0)
            default:
                server.send(LineEncoder.success(AdminResult(done: request.cmd ?? "?"), id: id), to: client)
            }
        }
        ready.signal()
        _ = try? loop.run()
        server.shutdown()
        done.signal()
    }

    func stop() throws {
        let client = try SocketClient(path: path)
        try client.send(#"{"v":1,"cmd":"stop"}"# + "\n")
        _ = try client.readLine()
        _ = done.wait(timeout: .now() + 30)
    }
}

@Suite("Socket server (stub policy)", .ownThread, .timeLimit(.minutes(3)))
struct ServerTests {
    @Test("pipelined lines are answered in order; an overlong line is refused and the connection goes on")
    func framing() throws {
        let stub = try StubServer()
        defer { try? stub.stop() }
        let client = try SocketClient(path: stub.path)
        let long = #"{"v":1,"cmd":""# + String(repeating: "y", count: 300) + #""}"#
        try client.send(#"{"v":1,"id":1,"cmd":"a"}"# + "\n" + long + "\n" + "{not json}\n" + #"{"v":1,"id":2,"cmd":"b"}"# + "\n")
        let lines = try (0..<4).map { _ in try #require(try client.readLine()) }
        let decoded = try lines.map(SocketClient.decode)
        #expect((decoded[0]["result"] as? [String: Any])?["done"] as? String == "a")
        #expect((decoded[1]["error"] as? [String: Any])?["code"] as? String == "line_too_long")
        #expect((decoded[2]["error"] as? [String: Any])?["code"] as? String == "bad_json")
        #expect((decoded[3]["result"] as? [String: Any])?["done"] as? String == "b")
        #expect(decoded[3]["id"] as? Int == 2)
    }

    @Test("a request answered later holds the connection's next one; the policy's cost is what the server admits by")
    func answeredLater() throws {
        let stub = try StubServer()
        defer { try? stub.stop() }
        let client = try SocketClient(path: stub.path)
        try client.send(#"{"v":1,"id":1,"cmd":"later"}"# + "\n" + #"{"v":1,"id":2,"cmd":"now"}"# + "\n")
        let first = try SocketClient.decode(try #require(try client.readLine()))
        let second = try SocketClient.decode(try #require(try client.readLine()))
        #expect(first["id"] as? Int == 1 && second["id"] as? Int == 2, "answers keep the order of requests")
        try stub.stop()
        #expect(stub.seen.map(\.cmd).prefix(2) == ["later", "now"])
        #expect(stub.seen.first?.cost == [.offLoop, .largeAnswer])
    }

    @Test("a reader past client_buffer is cut off: its stream ends with the slow_client notice as a whole line")
    func outputBudget() throws {
        let stub = try StubServer(clientBuffer: 8192)
        defer { try? stub.stop() }
        let client = try SocketClient(path: stub.path)
        try client.send(#"{"v":1,"id":9,"cmd":"stream"}"# + "\n")
        // Not a byte is read until the server is done sending: its socket fills, then its queue.
        #expect(stub.streamed.wait(timeout: .now() + 30) == .success)
        var last: String?
        var count = 0
        while let line = try client.readLine() {
            #expect((try? SocketClient.decode(line)) != nil, "every line arrives whole: \(line.prefix(80))")
            last = line
            count += 1
        }
        #expect(count < 2000, "the stream was cut short")
        let notice = try SocketClient.decode(try #require(last))
        #expect((notice["error"] as? [String: Any])?["code"] as? String == "slow_client")
    }
}

extension ServerTests {
    @Test("an answer sent in parts is the answer the reader waits for: past client_buffer it is not cut off, and the next request waits for its end")
    func answerInParts() throws {
        let stub = try StubServer(clientBuffer: 8192)
        defer { try? stub.stop() }
        let client = try SocketClient(path: stub.path)
        try client.send(#"{"v":1,"id":3,"cmd":"parts"}"# + "\n" + #"{"v":1,"id":4,"cmd":"now"}"# + "\n")
        #expect(stub.streamed.wait(timeout: .now() + 30) == .success)
        let answer = try SocketClient.decode(try #require(try client.readLine()))
        #expect(answer["id"] as? Int == 3)
        #expect((answer["result"] as? [String: Any])?["done"] as? String == String(repeating: "p", count: 200_000))
        let next = try SocketClient.decode(try #require(try client.readLine()))
        #expect(next["id"] as? Int == 4 && (next["result"] as? [String: Any])?["done"] as? String == "now")
    }
}

/// The loop's timers take a `Duration`; sd-event counts whole microseconds.
@Suite("Event loop durations", .ownThread, .timeLimit(.minutes(1)))
struct EventLoopDurationTests {
    static let cases: [(Duration, UInt64)] = [
        (.seconds(1), 1_000_000), (.milliseconds(250), 250_000), (.microseconds(7), 7), (.zero, 0),
        (.nanoseconds(999), 0), (.microseconds(-5), 0), (.seconds(Int64.max), UInt64.max),
        (Duration(secondsComponent: 2, attosecondsComponent: 999_999_999_999), 2_000_000),
    ]

    @Test("a duration in sd-event's microseconds: cut down below one, never negative, saturated above 2^64", arguments: cases)
    func microseconds(duration: Duration, expected: UInt64) {
        #expect(EventLoop.microseconds(duration) == expected)
    }
}
