// `make bench`: what one periodic sample costs, against the cheapest possible dump of the same
// links in the same run. Run inside a namespace holding the links (scripts/bench does that).
import IfMeterCore
import IfMeterKernel
#if canImport(Glibc)
import Glibc
#endif

func nanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

func median(_ values: [UInt64]) -> Double {
    let sorted = values.sorted()
    return Double(sorted[sorted.count / 2])
}

let arguments = CommandLine.arguments.dropFirst()
let rounds = arguments.first.flatMap { Int($0) } ?? 300

do {
    let socket = try NetlinkSocket()
    // Metadata is cached once, as the daemon does at start; samples join counters to it.
    let metadata = Dictionary(uniqueKeysWithValues: try socket.dumpLinks().map { ($0.ifindex, $0) })
    var floor: [UInt64] = [], sample: [UInt64] = [], linkDump: [UInt64] = []
    for round in 0..<(rounds + rounds / 10) {
        // Interleaved, so drift on the machine hits all three alike; the first tenth warms up.
        let t0 = nanoseconds()
        let raw = try socket.rawCountersDump()
        let t1 = nanoseconds()
        let readings = try socket.dumpCounters()
        var joined = 0
        for reading in readings where metadata.index(forKey: reading.ifindex) != nil {
            joined += 1
        }
        let t2 = nanoseconds()
        let links = try socket.dumpLinks()
        let t3 = nanoseconds()
        guard raw.links == readings.count, joined == readings.count, links.count == readings.count else {
            print("link count changed during the benchmark (\(raw.links), \(readings.count), \(links.count))")
            exit(1)
        }
        if round >= rounds / 10 {
            floor.append(t1 - t0)
            sample.append(t2 - t1)
            linkDump.append(t3 - t2)
        }
    }
    let count = Double(metadata.count)
    let (f, s, l) = (median(floor), median(sample), median(linkDump))
    func perLink(_ value: Double) -> String {
        let microseconds = value / count / 1000
        return String(Int(microseconds * 1000)) + " ns/link"
    }
    func ratio(_ value: Double) -> String {
        let hundredths = Int((value / f * 100).rounded())
        return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)x"
    }
    print("links=\(metadata.count) rounds=\(rounds) (medians)")
    print("  floor   raw C RTM_GETSTATS dump           \(Int(f / 1000)) us  \(perLink(f))  1.00x")
    print("  sample  RTM_GETSTATS via libnl + Swift    \(Int(s / 1000)) us  \(perLink(s))  \(ratio(s))")
    print("  links   full RTM_GETLINK dump (libnl)     \(Int(l / 1000)) us  \(perLink(l))  \(ratio(l))")
} catch {
    print("ifmeter-bench: \(error)")
    exit(1)
}
