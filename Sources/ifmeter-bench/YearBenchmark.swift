import IfMeterCore
import IfMeterHistory
import IfMeterStore
#if canImport(Glibc)
import Glibc
#endif

/// A year of history at `links` interfaces through the real meter and store, into a new
/// database at `path` (left there, for scripts/bench-dbsize to set beside vnStat's): sampled
/// hourly, and every 5 minutes for the last 48 hours so the 5-minute buckets retention keeps
/// are all there; saved every 6 hours and pruned at default retention; the WAL checkpointed.
/// Every link carries traffic in every sample, a different amount each.
func yearOfHistory(path: String, links: Int) throws {
    removeDatabase(path)
    unlink(path + ".journal")
    let store = try Store(path: path)
    var meter = Meter(bootID: "bench")
    var pending = PendingWrites()
    let end = 1_796_558_400.0  // 2026-12-06 12:00 UTC
    var wall = end - 365 * 86400
    func instant() -> MeterInstant { MeterInstant(wall: wall, sinceBootNanoseconds: UInt64((wall - end + 400 * 86400) * 1e9)) }
    let calendar = store.configuration.calendar
    let interfaces = (0..<links).map {
        Link(ifindex: Int32($0 + 2), name: "a\($0)", kind: "veth", arpType: ARPHRD.ether, counters: LinkCounters())
    }
    pending.add(meter.start(links: interfaces, at: instant()), calendar: calendar, monthStartDay: { _ in 1 })
    var counters = [LinkCounters](repeating: LinkCounters(), count: links)
    var lastSave = wall
    while wall < end {
        wall += end - wall > 48 * 3600 ? 3600 : 300
        for index in counters.indices {
            let amount = UInt64(1_000 + (index * 7919 + Int(wall) / 300 * 104_729) % 5_000_000)
            counters[index].rxBytes += amount
            counters[index].txBytes += amount / 8
            counters[index].rxPackets += amount / 1000 + 1
            counters[index].txPackets += amount / 4000 + 1
        }
        let readings = counters.indices.map { CounterReading(ifindex: Int32($0 + 2), counters: counters[$0]) }
        pending.add(meter.apply(sample: readings, at: instant()), calendar: calendar, monthStartDay: { _ in 1 })
        if wall - lastSave >= 6 * 3600 || wall >= end {
            pending.setMeterState(meter.exportState())
            try store.writer.save(&pending)
            while try store.retention.prune(now: Int64(wall)) > 0 {}
            lastSave = wall
        }
    }
    let checkpoint = try BareUpserts(path: path, createTable: false)
    try checkpoint.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    var info = stat()
    stat(path, &info)
    print("a year at default retention, \(links) interfaces: \(info.st_size) bytes")
}
