import CBenchFloor
import IfMeterCore
import IfMeterKernel
#if canImport(Glibc)
import Glibc
#endif

/// What one periodic sample costs, against the cheapest possible dump of the same links in the
/// same run. Runs in the namespace holding the links (scripts/bench makes them).
func linkBenchmark(rounds: Int) throws {
    let socket = try NetlinkSocket()
    let floorSocket = try FloorSocket()
    // Metadata is cached once, as the daemon does at start; samples join counters to it.
    let metadata = Dictionary(uniqueKeysWithValues: try socket.dumpLinks().map { ($0.ifindex, $0) })
    var floor: [UInt64] = [], sample: [UInt64] = [], linkDump: [UInt64] = []
    for round in 0..<(rounds + rounds / 10) {
        // Interleaved, so drift on the machine hits all three alike; the first tenth warms up.
        let t0 = nanoseconds()
        let raw = try floorSocket.dump()
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
            throw BenchmarkError("link count changed during the benchmark (\(raw.links), \(readings.count), \(links.count))")
        }
        if round >= rounds / 10 {
            floor.append(t1 - t0)
            sample.append(t2 - t1)
            linkDump.append(t3 - t2)
        }
    }
    let count = Double(metadata.count)
    let (f, s, l) = (median(floor), median(sample), median(linkDump))
    func perLink(_ value: Double) -> String { "\(Int(value / count)) ns/link" }
    print("links=\(metadata.count) rounds=\(rounds) (medians)")
    print("  floor   raw C RTM_GETSTATS dump           \(Int(f / 1000)) us  \(perLink(f))  1.00x")
    print("  sample  RTM_GETSTATS via libnl + Swift    \(Int(s / 1000)) us  \(perLink(s))  \(ratio(s, f))")
    print("  links   full RTM_GETLINK dump (libnl)     \(Int(l / 1000)) us  \(perLink(l))  \(ratio(l, f))")
}

/// The floor's plain netlink socket and its receive buffer.
final class FloorSocket {
    private let fd: FileDescriptor
    private var buffer = [UInt8](repeating: 0, count: 1 << 20)
    private var sequence: UInt32 = 0

    init() throws {
        let opened = ifmb_floor_open()
        guard let fd = FileDescriptor(adopting: opened) else {
            throw BenchmarkError("cannot open a netlink socket: \(Errno(-opened).description)")
        }
        self.fd = fd
    }

    /// The link count and the sum of their received bytes.
    func dump() throws -> (links: Int, rxBytes: UInt64) {
        sequence &+= 1
        var sum: UInt64 = 0
        let count = ifmb_floor_dump(fd.rawValue, &buffer, buffer.count, sequence, &sum)
        guard count >= 0 else { throw BenchmarkError("raw RTM_GETSTATS dump failed: \(Errno(-count).description)") }
        return (Int(count), sum)
    }
}
