import Foundation
import IfMeterPlatform
import IfMeterTestSupport
import Testing

/// The workers' two lanes (docs/SECURITY.md, HTTP): the daemon's own work and the socket's
/// peers go first; the HTTP listener's clients' work waits until none of that does.
@Suite("Background worker lanes", .ownThread, .timeLimit(.minutes(3)))
struct BackgroundWorkerTests {
    /// What ran on the worker, in order.
    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var entries: [String] = []
        func add(_ entry: String) { lock.withLock { entries.append(entry) } }
        var all: [String] { lock.withLock { entries } }
    }

    @Test("a job of the first lane runs before every later-lane job waiting, whatever the order handed over; results come back in the order run")
    func firstLaneFirst() throws {
        let loop = try EventLoop()
        let worker = try BackgroundWorker((), named: "test-worker", loop: loop)
        let log = Log()
        let started = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        var delivered: [String] = []
        // The worker busy, so that everything after waits in its lanes.
        worker.run({ _ in started.signal(); release.wait(); log.add("busy") }, then: { delivered.append("busy") })
        #expect(started.wait(timeout: .now() + 30) == .success)
        for name in ["http1", "http2", "http3"] {
            worker.run(in: .later, { _ in log.add(name) }, then: { delivered.append(name) })
        }
        for name in ["root", "save"] {
            worker.run(in: .first, { _ in log.add(name) }, then: { delivered.append(name) })
        }
        release.signal()
        worker.drain()
        #expect(log.all == ["busy", "root", "save", "http1", "http2", "http3"])
        #expect(delivered == log.all)
    }

    @Test("a later-lane job waits for at most firstInARow first-lane jobs; one not yet begun can be dropped")
    func laterNotStarved() throws {
        let loop = try EventLoop()
        let worker = try BackgroundWorker((), named: "test-worker", loop: loop)
        let log = Log()
        let started = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        worker.run({ _ in started.signal(); release.wait() }, then: {})
        #expect(started.wait(timeout: .now() + 30) == .success)
        worker.run(in: .later, { _ in log.add("http") }, then: {})
        for index in 0..<20 { worker.run(in: .first, { _ in log.add("socket\(index)") }, then: {}) }
        release.signal()
        worker.drain()
        #expect(log.all.firstIndex(of: "http") == BackgroundWorker<Void>.firstInARow, "\(log.all)")
        #expect(log.all.filter { $0.hasPrefix("socket") }.count == 20)

        worker.run({ _ in started.signal(); release.wait() }, then: {})
        #expect(started.wait(timeout: .now() + 30) == .success)
        var dropped = false
        worker.run(in: .later, { _ in log.add("dropped") }, then: { dropped = true })
        worker.discardWaiting(.later)
        release.signal()
        worker.drain()
        #expect(!log.all.contains("dropped") && !dropped)
    }

    @Test("a job's parts reach the loop while it still runs, in order, all before its result; its thread has the worker's name")
    func partsWhileRunning() throws {
        let loop = try EventLoop()
        let worker = try BackgroundWorker((), named: "test-worker", loop: loop)
        let release = DispatchSemaphore(value: 0)
        var delivered: [String] = []
        worker.run({ _, handOver in
            // The worker's thread carries its name, as `top -H` shows it.
            handOver((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "unnamed")
            handOver("first")
            // Goes on only once the loop has the first part: it is delivered while the job runs.
            guard release.wait(timeout: .now() + 30) == .success else { return "timed out" }
            handOver("second")
            handOver("third")
            return "done"
        }, parts: { (part: String) in
            delivered.append(part)
            if part == "first" { release.signal() }
        }, then: { (result: String) in
            delivered.append(result)
            loop.exit(0)
        })
        _ = try loop.run()
        #expect(delivered == ["test-worker\n", "first", "second", "third", "done"])
    }
}
