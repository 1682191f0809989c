import Foundation
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Limits and concurrency on the socket: many clients at once, too many, one that reads
/// nothing or too slowly, one that says nothing, answers larger than a client's buffer.
extension ProtocolTests {
    @Test("100 concurrent clients while sampling every second")
    func concurrentClients() throws {
        let (_, daemon) = try daemon("interval = 1\nmax_clients = 128\n")
        let failures = NSLock()
        nonisolated(unsafe) var problems: [String] = []
        // Connected first, then a thread each: concurrentPerform would run only as many at a
        // time as there are CPUs.
        let clients = try (0..<100).map { _ in try daemon.client() }
        let finished = DispatchGroup()
        for (index, client) in clients.enumerated() {
            finished.enter()
            Thread.detachNewThread {
                defer { finished.leave() }
                do {
                    for round in 0..<10 {
                        let command = round % 2 == 0 ? "status" : "interfaces"
                        let reply = try client.request(#"{"v":1,"id":\#(index * 100 + round),"cmd":"\#(command)"}"#)
                        if reply["ok"] as? Bool != true || reply["id"] as? Int != index * 100 + round {
                            failures.withLock { problems.append("\(index): \(reply)") }
                        }
                    }
                } catch {
                    failures.withLock { problems.append("\(index): \(error)") }
                }
            }
        }
        finished.wait()
        #expect(problems.isEmpty, "\(problems.prefix(3))")
        #expect(daemon.isRunning)
    }

    @Test("a uid's connections hold a bounded amount of unread answers; the next large one waits until they read")
    func unreadAnswersPerUID() throws {
        let (namespace, daemon) = try daemon("interval = 3600\nclient_buffer = 4096\n", start: false)
        // 801 links: an interfaces answer of about 500 KB, more than a socket buffer takes and
        // than the uid's limit of 16 × client_buffer (64 KiB).
        try namespace.ipBatch((0..<400).map { "link add a\($0) type veth peer name b\($0)" })
        try daemon.start()
        var pending = try (0..<3).map { _ in try daemon.client() }
        for client in pending { try client.send(#"{"v":1,"id":1,"cmd":"interfaces"}"# + "\n") }
        while !pending.isEmpty {
            var all = pending.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            #expect(poll(&all, nfds_t(all.count), 10_000) >= 1)
            let answering = try #require(all.indices.first { all[$0].revents & Int16(POLLIN) != 0 })
            // The others stay silent while this answer is unread: nothing is queued for them.
            var others = pending.indices.filter { $0 != answering }.map { pollfd(fd: pending[$0].fd, events: Int16(POLLIN), revents: 0) }
            if !others.isEmpty {
                #expect(poll(&others, nfds_t(others.count), 1000) == 0, "a second large answer was queued while the first was unread")
            }
            // A small answer for the same uid is not held back meanwhile.
            #expect(try daemon.client().request(#"{"v":1,"id":2,"cmd":"status"}"#)["ok"] as? Bool == true)
            let answer = try SocketClient.decode(try #require(try pending[answering].readLine()))
            #expect(answer["ok"] as? Bool == true && (answer[path: "result.interfaces"] as? [Any])?.count == 801)
            pending.remove(at: answering)
        }
    }

    @Test("more clients than max_clients: the extra one is told why and closed")
    func tooManyClients() throws {
        let (_, daemon) = try daemon("interval = 3600\nmax_clients = 2\nadmin_reserved_clients = 1\n")
        // The connection awaitReady polled with is closed, but the daemon may not have seen its
        // EOF yet and still count it: two clients are admitted once it has.
        let (first, second) = try eventually("two clients admitted") { () -> (SocketClient, SocketClient)? in
            let first = try daemon.client(), second = try daemon.client()
            guard (try? first.request(#"{"v":1,"cmd":"status"}"#))?["ok"] as? Bool == true,
                  (try? second.request(#"{"v":1,"cmd":"status"}"#))?["ok"] as? Bool == true else { return nil }
            return (first, second)
        }
        let third = try daemon.client()
        let refusal = try SocketClient.decode(try #require(try third.readLine()))
        #expect(errorCode(refusal) == "too_many_clients")
        #expect(try third.readLine() == nil)
        #expect(try first.request(#"{"v":1,"cmd":"status"}"#)["ok"] as? Bool == true)
        withExtendedLifetime(second) {}
    }

    @Test("a watcher that never reads is cut off past client_buffer; everyone else is served meanwhile")
    func slowWatcher() throws {
        // owner_grace = 0: veth pairs with both ends here are counted at the next sample.
        let (namespace, daemon) = try daemon("interval = 1\nclient_buffer = 4K\nowner_grace = 0\n")
        let slow = try daemon.client()
        try slow.send(#"{"v":1,"id":1,"cmd":"watch"}"# + "\n")
        // 300 veth pairs appearing are 600 event lines for the watcher, far more than the
        // socket and client_buffer hold; it reads none of them.
        try namespace.ipBatch((0..<300).map { "link add s\($0)a type veth peer name s\($0)b" })
        let other = try daemon.client()
        for _ in 0..<20 { #expect(try other.request(#"{"v":1,"cmd":"status"}"#)["ok"] as? Bool == true) }
        // The pairs are counted at a sample: the watcher is drained only once the daemon has
        // them, so the burst of their events meets a watcher that does not read.
        _ = try eventually("the 600 veths counted") { () -> Bool? in
            let list = try other.request(#"{"v":1,"cmd":"interfaces"}"#)[path: "result.interfaces"] as? [Any]
            return (list?.count ?? 0) > 600 ? true : nil
        }
        // Draining the slow client: whole stream lines, fewer than were sent, then the
        // slow_client notice as the last line, then EOF.
        var lines: [String] = []
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, let line = try slow.readLine(timeoutMilliseconds: 20_000) { lines.append(line) }
        #expect(lines.count < 600, "cut off before all its stream")
        let notice = try SocketClient.decode(try #require(lines.last))
        #expect(errorCode(notice) == "slow_client" && notice.string("error.message")?.contains("client_buffer") == true, "\(notice)")
        for line in lines.dropLast() {
            #expect((try? SocketClient.decode(line))?.string("stream") != nil, "a torn or foreign line before the notice: \(line)")
        }
        #expect(daemon.isRunning)
    }

    @Test("an answer larger than client_buffer reaches a client that reads it; pipelined requests wait their turn")
    func largeAnswer() throws {
        // owner_grace = 0: veth pairs with both ends here are counted at the next sample.
        let (namespace, daemon) = try daemon("interval = 3600\nclient_buffer = 4K\nowner_grace = 0\n")
        try namespace.ipBatch((0..<100).map { "link add l\($0)a type veth peer name l\($0)b" })
        let client = try daemon.client()
        try client.send(String(repeating: #"{"v":1,"cmd":"sample"}"# + "\n", count: 2)
                        + String(repeating: #"{"v":1,"cmd":"interfaces"}"# + "\n", count: 5))
        for index in 0..<7 {
            let line = try #require(try client.readLine())
            let reply = try SocketClient.decode(line)
            #expect(reply["ok"] as? Bool == true, "\(reply)")
            if index >= 2 {
                #expect(line.utf8.count > 4096 && (reply[path: "result.interfaces"] as? [Any])?.count == 201)
            }
        }
    }

    @Test("a silent client is disconnected after idle_timeout; a watcher is not")
    func idleTimeout() throws {
        let (_, daemon) = try daemon("interval = 1\nidle_timeout = 1\n")
        let silent = try daemon.client()
        let watcher = try daemon.client()
        _ = try watcher.request(#"{"v":1,"id":1,"cmd":"watch"}"#)
        let notice = try SocketClient.decode(try #require(try silent.readLine(timeoutMilliseconds: 30_000)))
        #expect(errorCode(notice) == "idle_timeout")
        #expect(try silent.readLine() == nil)
        // The watcher was kept: it goes on receiving rate lines, by the daemon's own clock more
        // than twice the idle timeout after the silent client was dropped, and no notice.
        var rateTimes: [Double] = []
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, (rateTimes.last ?? 0) - (rateTimes.first ?? 0) <= 2,
              let line = try watcher.readLine(timeoutMilliseconds: 10_000) {
            let reply = try SocketClient.decode(line)
            #expect(errorCode(reply) == nil, "the watcher was sent \(reply)")
            if reply.string("stream") == "rates", let at = reply[path: "result.at"] as? Double { rateTimes.append(at) }
        }
        #expect((rateTimes.last ?? 0) - (rateTimes.first ?? 0) > 2, "rate lines at \(rateTimes)")
    }
}
