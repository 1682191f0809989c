import IfMeterCore
import IfMeterWire
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Round-trip latency of `status` and `interfaces` against a running ifmeterd: one client in
/// a loop, then 50 clients at once (50 connections, each on its own thread, asking in a loop:
/// the daemon saturated, so their round trips are mostly queueing), then for `status` 50 clients
/// each asking 100 times a second (latency under load, counted from when each request was due,
/// so a late client thread counts against the figure); each for `seconds` (long enough to span
/// several saves when the daemon saves every few seconds). Prints medians, 99th percentiles and
/// maxima in microseconds.
func daemonBenchmark(socket path: String, seconds: Double) throws {
    func summary(_ label: String, _ values: [UInt64]) -> String {
        "\(label) median \(percentile(values, 0.5)) us p99 \(percentile(values, 0.99)) us max \(percentile(values, 1)) us"
    }
    func slow(_ values: [UInt64]) -> String {
        "\(values.filter { $0 > 5_000_000 }.count) of \(values.count) over 5 ms"
    }
    for command in ["status", "interfaces"] {
        let single = try latencies(path: path, command: command, clients: 1, seconds: seconds)
        let many = try latencies(path: path, command: command, clients: 50, seconds: seconds)
        var line = "\(command): \(summary("1 client", single)); \(summary("50 clients", many)), \(slow(many))"
        if command == "status" {
            let paced = try latencies(path: path, command: command, clients: 50, seconds: seconds, every: 10_000_000)
            line += "; \(summary("50 clients at 100/s each", paced)), \(slow(paced))"
        }
        print(line)
    }
}

private func percentile(_ values: [UInt64], _ fraction: Double) -> UInt64 {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))] / 1000
}

/// Each client's round trips for `seconds`: back to back, or one every `every` nanoseconds
/// (each client at a random phase), timed from when it was due.
private func latencies(
    path: String, command: String, clients: Int, seconds: Double, every: UInt64? = nil
) throws -> [UInt64] {
    final class Collected: Sendable {
        let latencies = Mutex<[UInt64]>([])
        let failure = Mutex<String?>(nil)
    }
    let collected = Collected()
    // All connected before any asks, then one thread each: libdispatch's concurrentPerform
    // runs as many iterations at a time as there are CPUs, so "50 clients" on 2 cores were 2.
    let connections = try (0..<clients).map { _ in try Connection(path: path) }
    let deadline = nanoseconds() + UInt64(seconds * 1e9)
    onThreads(connections) { connection in
        do {
            var mine: [UInt64] = []
            let line = Array("{\"v\":1,\"cmd\":\"\(command)\"}\n".utf8)
            var due = nanoseconds() + (every.map { UInt64.random(in: 0..<$0) } ?? 0)
            while true {
                if every != nil { sleep(until: due) }
                let start = every == nil ? nanoseconds() : due
                guard start < deadline else { break }
                try connection.roundTrip(line)
                mine.append(nanoseconds() - start)
                due += every ?? 0
            }
            collected.latencies.withLock { $0 += mine }
        } catch {
            collected.failure.withLock { $0 = "\(error)" }
        }
    }
    if let message = collected.failure.withLock({ $0 }) { throw BenchmarkError(message) }
    return collected.latencies.withLock { $0 }
}

/// Runs `body` with each of `items` on a thread of its own, all at once, and waits for them.
private func onThreads<Item: Sendable>(_ items: [Item], _ body: @escaping @Sendable (Item) -> Void) {
    let threads = items.map { item -> pthread_t in
        var thread = pthread_t()
        let job = Unmanaged.passRetained(Job { body(item) }).toOpaque()
        let created = pthread_create(&thread, nil, { raw in
            Unmanaged<Job>.fromOpaque(raw!).takeRetainedValue().run()
            return nil
        }, job)
        precondition(created == 0, "pthread_create: \(Errno(created).description)")
        return thread
    }
    for thread in threads { pthread_join(thread, nil) }
}

/// Sleeps until `time` (CLOCK_MONOTONIC nanoseconds, as ``nanoseconds()``); at once if it passed.
private func sleep(until time: UInt64) {
    var until = timespec(tv_sec: Int(time / 1_000_000_000), tv_nsec: Int(time % 1_000_000_000))
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nil) == EINTR {}
}

/// What one of ``onThreads(_:_:)``'s threads runs.
private final class Job {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
}

/// A blocking client that reads exactly one response line per request.
private final class Connection: @unchecked Sendable {
    let fd: FileDescriptor
    var buffer = [UInt8](repeating: 0, count: 1 << 20)

    init(path: String) throws {
        guard let fd = FileDescriptor(adopting: socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)),
              let address = UnixSocketAddress(path: path),
              address.withSockaddr({ connect(fd.rawValue, $0, $1) }) == 0 else {
            throw BenchmarkError("cannot connect to \(path)")
        }
        self.fd = fd
    }

    func roundTrip(_ line: [UInt8]) throws {
        guard line.withUnsafeBytes({ send(fd.rawValue, $0.baseAddress, $0.count, 0) }) == line.count else {
            throw BenchmarkError("send failed")
        }
        var filled = 0
        while true {
            // An `interfaces` answer of 4000 links is 2.5 MB: grow rather than read nothing.
            if filled == buffer.count { buffer += [UInt8](repeating: 0, count: buffer.count) }
            let count = buffer.withUnsafeMutableBytes { recv(fd.rawValue, $0.baseAddress! + filled, $0.count - filled, 0) }
            guard count > 0 else { throw BenchmarkError("connection closed") }
            filled += count
            if buffer[filled - 1] == UInt8(ascii: "\n") { return }
        }
    }
}
