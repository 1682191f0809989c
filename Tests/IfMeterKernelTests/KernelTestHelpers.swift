import IfMeterCore
import IfMeterKernel
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

struct Timeout: Error, CustomStringConvertible {
    var description: String
}

extension LinkEventSocket {
    /// Reads events as they arrive until `done` holds for what was read, or the deadline passes.
    func collect(
        seconds: Double = 10, until done: ([LinkEvent]) -> Bool
    ) throws -> (events: [LinkEvent], overflowed: Bool) {
        var events: [LinkEvent] = []
        var overflowed = false
        var remaining = Int32(seconds * 1000)
        while !done(events) {
            guard remaining > 0 else {
                throw Timeout(description: "no matching link event within \(seconds) s; got \(events)")
            }
            var poller = pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)
            let started = monotonicMilliseconds()
            _ = poll(&poller, 1, remaining)
            remaining -= Int32(monotonicMilliseconds() - started)
            let batch = try readEvents()
            events += batch.ownEvents
            overflowed = overflowed || batch.overflowed
        }
        return (events, overflowed)
    }
}

extension LinkFeed {
    /// Reads observations as they arrive on either socket until `done` holds for what was read,
    /// or the deadline passes.
    func collect(seconds: Double = 10, until done: ([LinkObservation]) -> Bool) throws -> [LinkObservation] {
        var seen: [LinkObservation] = []
        let deadline = monotonicMilliseconds() + Int64(seconds * 1000)
        while !done(seen) {
            let now = monotonicMilliseconds()
            guard now < deadline else { throw Timeout(description: "not seen within \(seconds) s; got \(seen)") }
            var pollers = [pollfd(fd: events.fileDescriptor, events: Int16(POLLIN), revents: 0)]
            if let peers { pollers.append(pollfd(fd: peers.fileDescriptor, events: Int16(POLLIN), revents: 0)) }
            _ = poll(&pollers, nfds_t(pollers.count), Int32(min(deadline - now, 1000)))
            seen += try readEvents()
        }
        return seen
    }
}

extension LinkEventSocket.Batch {
    /// The link events of the socket's own namespace, in order.
    var ownEvents: [LinkEvent] {
        observations.compactMap { if case .event(let event) = $0 { event } else { nil } }
    }
}

func monotonicMilliseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}

/// The counters the kernel shows in sysfs for one interface, read inside its namespace.
func sysfsCounters(_ namespace: NetworkNamespace, _ interface: String) throws -> LinkCounters {
    let read = { (name: String) in try namespace.sysfsCounter(interface, name) }
    return LinkCounters(
        rxBytes: try read("rx_bytes"), txBytes: try read("tx_bytes"),
        rxPackets: try read("rx_packets"), txPackets: try read("tx_packets"),
        rxErrors: try read("rx_errors"), txErrors: try read("tx_errors"),
        rxDropped: try read("rx_dropped"), txDropped: try read("tx_dropped"))
}

func link(named name: String, in links: [Link]) throws -> Link {
    try #require(links.first { $0.name == name }, "\(name) missing from \(links.map(\.name))")
}
