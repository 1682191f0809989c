import CSQLite
import IfMeterCore
import IfMeterHistory
import IfMeterStore
#if canImport(Glibc)
import Glibc
#endif

/// The cost of one save at 10, 100 and 1000 active interfaces, against a bare
/// `INSERT … ON CONFLICT` loop writing as many rows in one transaction on an identically
/// configured database (WAL, synchronous=FULL) in the same run; then the database size per
/// interface after a year at default retention.
func storeBenchmark(directory: String) throws {
    for count in [10, 100, 1000] {
        let path = "\(directory)/bench-\(count).db"
        removeDatabase(path)
        removeDatabase(path + ".baseline")
        let store = try Store(path: path)
        let baseline = try BareUpserts(path: path + ".baseline")
        var meter = Meter(bootID: "bench")
        var pending = PendingWrites()
        var wall = 1_800_000_000.0
        func instant() -> MeterInstant { MeterInstant(wall: wall, sinceBootNanoseconds: UInt64(wall * 1e9)) }
        let links = (0..<count).map {
            Link(ifindex: Int32($0 + 2), name: "if\($0)", kind: "veth", arpType: ARPHRD.ether,
                 counters: LinkCounters())
        }
        pending.add(meter.start(links: links, at: instant()), calendar: store.configuration.calendar,
                    monthStartDay: { _ in 1 })
        try store.writer.save(&pending)
        // Per interface a save writes 5 buckets, 1 total, 1 epoch and 1 name row.
        let rows = count * 8
        var saves: [UInt64] = [], bare: [UInt64] = []
        for round in 1...66 {
            wall += 30
            let readings = (0..<count).map {
                CounterReading(ifindex: Int32($0 + 2), counters: LinkCounters(
                    rxBytes: UInt64(round * 1000), txBytes: UInt64(round * 100),
                    rxPackets: UInt64(round), txPackets: UInt64(round)))
            }
            pending.add(meter.apply(sample: readings, at: instant()), calendar: store.configuration.calendar,
                        monthStartDay: { _ in 1 })
            pending.setMeterState(meter.exportState())
            let t0 = nanoseconds()
            try store.writer.save(&pending)
            let t1 = nanoseconds()
            try baseline.upsert(rows: rows, value: Int64(round))
            let t2 = nanoseconds()
            if round > 6 {
                saves.append(t1 - t0)
                bare.append(t2 - t1)
            }
        }
        let (s, b) = (median(saves), median(bare))
        print("interfaces=\(count): save \(Int(s / 1000)) us (\(Int(s / Double(count) / 1000)) us/interface), "
              + "bare upsert loop of \(rows) rows \(Int(b / 1000)) us, ratio \(ratio(s, b))")
    }
    try sizeAfterOneYear(directory: access("/dev/shm", W_OK) == 0 ? "/dev/shm" : directory)
}

/// One year of 5-minute samples on 20 interfaces, saved hourly and pruned daily at default
/// retention; reports the database file per interface.
func sizeAfterOneYear(directory: String) throws {
    let path = "\(directory)/ifmeter-bench-year-\(getpid()).db"
    removeDatabase(path)
    defer { removeDatabase(path) }
    let interfaces = 20
    do {
        let store = try Store(path: path)
        var meter = Meter(bootID: "bench")
        var pending = PendingWrites()
        var wall = 1_767_222_000.0
        func instant() -> MeterInstant { MeterInstant(wall: wall, sinceBootNanoseconds: UInt64(wall * 1e9)) }
        let links = (0..<interfaces).map {
            Link(ifindex: Int32($0 + 2), name: "wlan\($0)", arpType: ARPHRD.ether, counters: LinkCounters())
        }
        pending.add(meter.start(links: links, at: instant()), calendar: store.configuration.calendar,
                    monthStartDay: { _ in 1 })
        for step in 1...(365 * 288) {
            wall += 300
            let readings = (0..<interfaces).map {
                CounterReading(ifindex: Int32($0 + 2), counters: LinkCounters(
                    rxBytes: UInt64(step) * 1_000_000, txBytes: UInt64(step) * 50_000,
                    rxPackets: UInt64(step) * 900, txPackets: UInt64(step) * 400))
            }
            pending.add(meter.apply(sample: readings, at: instant()), calendar: store.configuration.calendar,
                        monthStartDay: { _ in 1 })
            if step % 12 == 0 {
                pending.setMeterState(meter.exportState())
                try store.writer.save(&pending)
            }
            if step % 288 == 0 {
                while try store.retention.prune(now: Int64(wall)) > 0 {}
            }
        }
    }
    let checkpoint = try BareUpserts(path: path, createTable: false)
    try checkpoint.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    var info = stat()
    stat(path, &info)
    print("one year at default retention, \(interfaces) interfaces: \(info.st_size) bytes, "
          + "\(Int(info.st_size) / interfaces / 1024) KiB per interface")
}

func removeDatabase(_ path: String) {
    for suffix in ["", "-wal", "-shm", ".lock"] { unlink(path + suffix) }
}

/// The baseline: one prepared `INSERT … ON CONFLICT DO UPDATE` run in a loop inside one
/// transaction, nothing else.
final class BareUpserts {
    let handle: OpaquePointer
    var statement: OpaquePointer?

    init(path: String, createTable: Bool = true) throws {
        var handle: OpaquePointer?
        guard sqlite3_open(path, &handle) == SQLITE_OK, let handle else {
            throw BenchmarkError("cannot open \(path)")
        }
        self.handle = handle
        try execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL")
        guard createTable else { return }
        try execute("CREATE TABLE rows (k INTEGER PRIMARY KEY, a INTEGER, b INTEGER, c INTEGER, d INTEGER)")
        sqlite3_prepare_v2(handle, """
            INSERT INTO rows (k, a, b, c, d) VALUES (?1, ?2, ?2, ?2, ?2)
            ON CONFLICT (k) DO UPDATE SET a = a + excluded.a, b = b + excluded.b,
                c = c + excluded.c, d = d + excluded.d
            """, -1, &statement, nil)
    }

    deinit {
        sqlite3_finalize(statement)
        sqlite3_close(handle)
    }

    func execute(_ sql: String) throws {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else {
            throw BenchmarkError(String(cString: sqlite3_errmsg(handle)))
        }
    }

    func upsert(rows: Int, value: Int64) throws {
        try execute("BEGIN IMMEDIATE")
        for key in 0..<rows {
            sqlite3_reset(statement)
            sqlite3_bind_int64(statement, 1, Int64(key))
            sqlite3_bind_int64(statement, 2, value)
            guard sqlite3_step(statement) == SQLITE_DONE else { throw BenchmarkError("upsert failed") }
        }
        try execute("COMMIT")
    }
}
