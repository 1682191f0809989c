import Foundation
import IfMeterCore
@testable import IfMeterHistory
@testable import IfMeterStore
import IfMeterTestSupport
import Testing

func traffic(_ rx: UInt64, _ tx: UInt64, _ rxPackets: UInt64 = 0, _ txPackets: UInt64 = 0) -> Traffic {
    Traffic(rxBytes: rx, txBytes: tx, rxPackets: rxPackets, txPackets: txPackets)
}

func link(_ name: String, _ ifindex: Int32, _ counters: Traffic, kind: String = "") -> Link {
    Link(ifindex: ifindex, name: name, kind: kind, arpType: ARPHRD.ether,
         counters: LinkCounters(rxBytes: counters.rxBytes, txBytes: counters.txBytes,
                                rxPackets: counters.rxPackets, txPackets: counters.txPackets))
}

func reading(_ ifindex: Int32, _ counters: Traffic) -> CounterReading {
    CounterReading(ifindex: ifindex, counters: LinkCounters(
        rxBytes: counters.rxBytes, txBytes: counters.txBytes,
        rxPackets: counters.rxPackets, txPackets: counters.txPackets))
}

let origin = 1_790_000_000.0  // 2026-09-21, a Monday

func at(_ seconds: Double) -> MeterInstant {
    MeterInstant(wall: origin + seconds, sinceBootNanoseconds: UInt64((1000 + seconds) * 1e9))
}

/// A daemon's life in miniature: a meter, its store, and the save that joins them.
struct Lifetime {
    var meter: Meter
    let store: Store
    var pending = PendingWrites()

    /// Opens the store and resumes the meter from it, as the daemon does at start.
    init(path: String, bootID: String = "boot-1", configuration: HistoryConfiguration = HistoryConfiguration()) throws {
        store = try Store(path: path, configuration: configuration)
        let (state, names) = try store.loader.meter()
        meter = Meter(bootID: bootID, restoring: state, knownNames: names)
    }

    mutating func take(_ output: MeterOutput) {
        pending.add(output, calendar: store.configuration.calendar,
                    monthStartDay: store.configuration.monthStartDay(for:))
        pending.setMeterState(meter.exportState())
    }

    mutating func save() throws(StoreError) {
        try store.writer.save(&pending)
    }
}

@Suite("Store", .ownThread, .timeLimit(.minutes(3)))
struct StoreTests {
    @Test("restart in the same boot: saved totals plus the resumed meter lose nothing")
    func restartContinuity() throws {
        let directory = try TemporaryDirectory()
        do {
            var first = try Lifetime(path: directory.database)
            first.take(first.meter.start(links: [link("eth0", 2, traffic(1000, 1000)), link("wg0", 3, traffic(0, 0))], at: at(0)))
            first.take(first.meter.apply(sample: [reading(2, traffic(1500, 1300, 5, 3)), reading(3, traffic(70, 80, 1, 1))], at: at(30)))
            try first.save()
            // Traffic the kernel counts after the last save, then the daemon dies.
            first.take(first.meter.apply(sample: [reading(2, traffic(1800, 1400, 8, 4))], at: at(60)))
        }
        var second = try Lifetime(path: directory.database)
        #expect(try second.store.loader.meter().state?.interfaces.map(\.last) == [traffic(1500, 1300, 5, 3), traffic(70, 80, 1, 1)])
        second.take(second.meter.start(links: [link("eth0", 2, traffic(2600, 1900, 12, 9)), link("wg0", 3, traffic(70, 80, 1, 1))], at: at(600)))
        try second.save()

        let eth0 = try #require(try second.store.queries.total("eth0"))
        #expect(eth0.tally.traffic == traffic(1600, 900, 12, 9))
        #expect(eth0.tally.gaps == 1)
        #expect(eth0.since == origin)
        #expect(try second.store.queries.total("wg0")?.tally.traffic == traffic(70, 80, 1, 1))
        #expect(try second.store.queries.total("nonexistent") == nil)
        let kinds = try second.store.queries.events().map(\.kind)
        #expect(kinds == [.firstSight, .firstSight, .gap, .gap])
    }

    @Test("a schema-2 database's open epochs resume as the daemon's own namespace's, counting on")
    func epochsKeyedByNamespace() throws {
        let directory = try TemporaryDirectory()
        do {
            var first = try Lifetime(path: directory.database)
            first.take(first.meter.start(links: [link("eth0", 2, traffic(1000, 1000))], at: at(0)))
            first.take(first.meter.apply(sample: [reading(2, traffic(1500, 1300, 5, 3))], at: at(30)))
            try first.save()
        }
        // Back to schema 2's epochs table, as a release before namespaces wrote it.
        do {
            let connection = try SQLiteConnection(path: directory.database, create: false)
            try connection.execute("""
                CREATE TABLE epochs_v2 (
                    boot_id TEXT NOT NULL, ifindex INTEGER NOT NULL, generation INTEGER NOT NULL,
                    name TEXT NOT NULL, kind TEXT NOT NULL, since REAL NOT NULL, open INTEGER NOT NULL,
                    last_rx_bytes INTEGER NOT NULL, last_tx_bytes INTEGER NOT NULL,
                    last_rx_packets INTEGER NOT NULL, last_tx_packets INTEGER NOT NULL,
                    last_wall REAL NOT NULL, last_boot_ns INTEGER NOT NULL, counters_32bit INTEGER NOT NULL,
                    speed_bps INTEGER, saved_in INTEGER NOT NULL,
                    PRIMARY KEY (boot_id, ifindex, generation));
                INSERT INTO epochs_v2 SELECT boot_id, ifindex, generation, name, kind, since, open,
                    last_rx_bytes, last_tx_bytes, last_rx_packets, last_tx_packets, last_wall, last_boot_ns,
                    counters_32bit, speed_bps, saved_in FROM epochs;
                DROP TABLE epochs;
                ALTER TABLE epochs_v2 RENAME TO epochs;
                CREATE INDEX epochs_open ON epochs (open);
                DROP TABLE plans;
                DROP TABLE networks;
                DROP TABLE app_counters;
                DROP TABLE app_names;
                DROP TABLE app_subjects;
                DROP TABLE scope_counters;
                ALTER TABLE events DROP COLUMN plan;
                PRAGMA user_version = 2;
                """, "test")
        }
        var second = try Lifetime(path: directory.database)
        #expect(try second.store.connection.scalarInt("PRAGMA user_version", "test") == Int64(Schema.version))
        let resumed = try #require(try second.store.loader.meter().state?.interfaces)
        #expect(resumed.map(\.key) == [LinkKey(.own, ifindex: 2)])
        #expect(resumed.map(\.last) == [traffic(1500, 1300, 5, 3)])
        second.take(second.meter.start(links: [link("eth0", 2, traffic(2600, 1900, 12, 9))], at: at(600)))
        try second.save()
        #expect(try second.store.queries.total("eth0")?.tally.traffic == traffic(1600, 900, 12, 9))
        #expect(try second.store.queries.events().map(\.kind) == [.firstSight, .gap])
    }

    @Test("every name is known after a restart with when it was first seen; the earliest time wins")
    func namesKept() throws {
        let directory = try TemporaryDirectory()
        do {
            var first = try Lifetime(path: directory.database)
            first.take(first.meter.start(links: [link("eth0", 2, .zero)], at: at(0)))
            try first.save()
            first.take(first.meter.apply(.newOrChanged(link("wg0", 3, .zero)), at: at(30)))
            try first.save()
            first.take(first.meter.apply(sample: [reading(2, traffic(10, 10))], at: at(60)))
            try first.save()
        }
        let second = try Lifetime(path: directory.database)
        #expect(try second.store.loader.meter().knownNames == ["eth0": origin, "wg0": origin + 30])
        var pending = PendingWrites()
        pending.setMeterState(MeterState(bootID: "boot-1", interfaces: [],
                                         firstSeen: ["eth0": origin + 99, "wg0": origin + 1], lastInstant: nil))
        try second.store.writer.save(&pending)
        #expect(try second.store.loader.meter().knownNames == ["eth0": origin, "wg0": origin + 1])
    }

    @Test("reboot: the saved state is from another boot; names with history count from zero")
    func rebootContinuity() throws {
        let directory = try TemporaryDirectory()
        do {
            var first = try Lifetime(path: directory.database, bootID: "boot-1")
            first.take(first.meter.start(links: [link("eth0", 2, traffic(500, 500))], at: at(0)))
            first.take(first.meter.apply(sample: [reading(2, traffic(900, 600))], at: at(30)))
            try first.save()
        }
        var second = try Lifetime(path: directory.database, bootID: "boot-2")
        second.take(second.meter.start(links: [link("eth0", 7, traffic(40, 50))], at: at(3600)))
        try second.save()
        #expect(try second.store.queries.total("eth0")?.tally.traffic == traffic(440, 150))
        #expect(try second.store.queries.total("eth0")?.tally.resets == 1)
        #expect(try second.store.queries.events(kind: .reboot).count == 1)
    }

    @Test("a second writer is refused with the documented message")
    func lock() throws {
        let directory = try TemporaryDirectory()
        do {
            let first = try Store(path: directory.database)
            let error = try #require(throws: StoreError.self) { try Store(path: directory.database) }
            #expect(error.kind == .locked(byPID: getpid()))
            #expect(error.description == "cannot open database \(directory.database): it is in use by another ifmeterd (pid \(getpid())); only one may write it")
            withExtendedLifetime(first) {}
        }
        // Released with the first store.
        _ = try Store(path: directory.database)
    }

    @Test("a file that is not an ifmeter database is refused and left byte for byte as it was",
          arguments: ["garbage", "foreign", "truncated", "newer"])
    func refusedFiles(_ variant: String) throws {
        let directory = try TemporaryDirectory()
        let path = directory.database
        switch variant {
        case "garbage":
            try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: path))
        case "foreign":
            let other = try SQLiteConnection(path: path, create: true)
            try other.execute("CREATE TABLE recipes (name TEXT)", "test")
        case "truncated":
            do {
                var life = try Lifetime(path: path)
                life.take(life.meter.start(links: (2..<200).map { link("if\($0)", Int32($0), traffic(1, 1)) }, at: at(0)))
                try life.save()
                try life.store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)", "test")
            }
            let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.truncate(atOffset: UInt64(size / 2))
            try handle.close()
        default:
            do { _ = try Store(path: path) }
            let connection = try SQLiteConnection(path: path, create: false)
            try connection.execute("PRAGMA user_version = 99", "test")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let error = try #require(throws: StoreError.self) { try Store(path: path) }
        #expect(error.description.hasPrefix("cannot open database \(path): "))
        switch variant {
        case "newer":
            #expect(error.kind == .newerSchema(found: 99, supported: Schema.version))
            #expect(error.message.contains("written by a newer ifmeter"))
        case "foreign":
            #expect(error.kind == .corrupt)
            #expect(error.message.contains("not an ifmeter database"))
        default:
            #expect(error.kind == .corrupt)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test("a directory that cannot be written: a clear error, nothing created")
    func unwritableDirectory() throws {
        let error = try #require(throws: StoreError.self) { try Store(path: "/proc/ifmeter-test/ifmeter.db") }
        #expect(error.description.hasPrefix("cannot open database /proc/ifmeter-test/ifmeter.db: cannot create lock file"))
    }

    @Test("retention prunes each resolution, in batches that never exceed the limit")
    func retention() throws {
        let directory = try TemporaryDirectory()
        var configuration = HistoryConfiguration()
        configuration.calendar = BucketCalendar(zone: .utc)
        var life = try Lifetime(path: directory.database, configuration: configuration)
        // Two years of one sample an hour on one interface, saved every day as the daemon saves
        // (every minute by default). Unsaved, a name's pending spans would grow by one a sample,
        // and each sample sums them: two years of them took a minute of the suite's time.
        let hours = 2 * 365 * 24
        life.take(life.meter.start(links: [link("eth0", 2, traffic(0, 0))], at: at(0)))
        for hour in 1...hours {
            life.take(life.meter.apply(sample: [reading(2, traffic(UInt64(hour) * 100, 0))], at: at(Double(hour) * 3600)))
            if hour % 24 == 0 { try life.save() }
        }
        try life.save()
        let now = Int64(origin) + Int64(hours) * 3600
        #expect(try life.store.retention.prune(now: now, limit: 10) == 10)
        while try life.store.retention.prune(now: now, limit: 1000) > 0 {}
        let five = try life.store.queries.usage(.interface("eth0"), resolution: .fiveMinutes)
        let hourly = try life.store.queries.usage(.interface("eth0"), resolution: .hour)
        let daily = try life.store.queries.usage(.interface("eth0"), resolution: .day)
        let monthly = try life.store.queries.usage(.interface("eth0"), resolution: .month)
        let yearly = try life.store.queries.usage(.interface("eth0"), resolution: .year)
        // One sample an hour: buckets starting within the retention window survive.
        #expect(five.count == 48 && five.allSatisfy { $0.start >= now - 48 * 3600 })
        #expect(hourly.count == 4 * 24 && hourly.allSatisfy { $0.start >= now - 4 * 86400 })
        #expect(daily.count == 62 && daily.allSatisfy { $0.start >= now - 62 * 86400 })
        #expect(monthly.count == 25)
        #expect(yearly.count == 3, "years are kept forever")
        #expect(try life.store.queries.total("eth0")?.tally.traffic.rxBytes == UInt64(hours) * 100, "totals are never pruned")
    }

    @Test("usage by class, top days, events, projection")
    func queries() throws {
        let directory = try TemporaryDirectory()
        var configuration = HistoryConfiguration()
        configuration.calendar = BucketCalendar(zone: .utc)
        var life = try Lifetime(path: directory.database, configuration: configuration)
        life.take(life.meter.start(links: [link("eth0", 2, traffic(0, 0)), link("eth1", 3, traffic(0, 0)), link("wg0", 4, traffic(0, 0))], at: at(0)))
        life.pending.note(InterfaceRecord(name: "eth0", interfaceClass: "ethernet", kind: "", mac: "aa", lastSeen: origin))
        life.pending.note(InterfaceRecord(name: "eth1", interfaceClass: "ethernet", kind: "", mac: "bb", lastSeen: origin))
        life.pending.note(InterfaceRecord(name: "wg0", interfaceClass: "tunnel", kind: "wireguard", mac: "", lastSeen: origin))
        life.take(life.meter.apply(sample: [reading(2, traffic(100, 10)), reading(3, traffic(200, 20)), reading(4, traffic(999, 9))], at: at(60)))
        life.take(life.meter.apply(sample: [reading(2, traffic(5100, 10)), reading(3, traffic(200, 20))], at: at(86400 + 60)))
        try life.save()

        let ethernet = try life.store.queries.usage(.interfaceClass(.ethernet), resolution: .day)
        #expect(ethernet.map(\.tally.traffic) == [traffic(300, 30), traffic(5000, 0)])
        #expect(ethernet.first.map { $0.end - $0.start } == 86400)
        let top = try life.store.queries.topDays(.interface("eth0"), limit: 1)
        #expect(top.map(\.tally.traffic) == [traffic(5000, 0)])
        #expect(try life.store.queries.events(kind: .firstSight).count == 3)
        #expect(try life.store.queries.events(interface: "wg0").map(\.kind) == [.firstSight])
        #expect(try life.store.queries.interfaces().map(\.interfaceClass) == ["ethernet", "ethernet", "tunnel"])

        let dayStart = Int64(origin) + 86400 - Int64(origin) % 86400
        let projection = try life.store.queries.projection("eth0", resolution: .day, now: dayStart + 21600)
        #expect(projection.elapsedFraction == 0.25)
        #expect(projection.soFar == traffic(5000, 0))
        #expect(projection.projected == traffic(20000, 0))
        #expect(projection.labels.contains(.projection))
    }

    @Test("what an unchecked import once wrote (a first_seen of 1960, buckets before 1970) is repaired at open, said, and the rest kept")
    func importedTimesRepaired() throws {
        let directory = try TemporaryDirectory()
        do {
            var life = try Lifetime(path: directory.database)
            life.take(life.meter.start(links: [link("eth0", 2, traffic(1000, 1000)), link("eth1", 3, traffic(5, 5))], at: at(0)))
            life.take(life.meter.apply(sample: [reading(2, traffic(1500, 1300)), reading(3, traffic(5, 5))], at: at(30)))
            life.pending.note(InterfaceRecord(name: "eth0", interfaceClass: "ethernet", kind: "", mac: "", lastSeen: origin + 30))
            life.pending.note(InterfaceRecord(name: "eth1", interfaceClass: "ethernet", kind: "", mac: "", lastSeen: origin + 30))
            try life.save()
        }
        try SQLiteConnection(path: directory.database, create: false).execute("""
            UPDATE interfaces SET first_seen = -315619200 WHERE name = 'eth0';
            INSERT INTO buckets (name, resolution, start) VALUES ('eth0', 'day', -315619200)
            """, "edit")
        do {
            let store = try Store(path: directory.database)
            #expect(store.repairs.count == 2 && store.repairs[0].contains("eth0") && store.repairs[0].contains("-315619200"), "\(store.repairs)")
            let loaded = try store.loader.meter()
            #expect(loaded.knownNames["eth0"].map { Statement.acceptedTimes.contains($0) && $0 <= origin + 30 } == true, "\(loaded.knownNames)")
            #expect(loaded.knownNames["eth1"] != nil && loaded.state?.interfaces.count == 2)
            #expect(try store.queries.total("eth0")?.tally.traffic.txBytes == 300, "its counted history is kept")
        }
        #expect(try Store(path: directory.database).repairs.isEmpty, "repaired once")
    }

    @Test("a time out of range in a hand-edited database is a store error, never a trap", arguments: [
        "UPDATE epochs SET since = 1e300", "UPDATE epochs SET last_wall = -1e300",
    ])
    func timeOutOfRange(_ edit: String) throws {
        let directory = try TemporaryDirectory()
        do {
            var life = try Lifetime(path: directory.database)
            life.take(life.meter.start(links: [link("eth0", 2, traffic(1000, 1000))], at: at(0)))
            life.pending.note(InterfaceRecord(name: "eth0", interfaceClass: "ethernet", kind: "", mac: "", lastSeen: origin))
            try life.save()
        }
        try SQLiteConnection(path: directory.database, create: false).execute(edit, "edit")
        let store = try Store(path: directory.database)
        #expect {
            _ = try store.loader.meter()
            _ = try store.queries.totals()
        } throws: { error in
            (error as? StoreError)?.kind == .corrupt && "\(error)".contains("1e+300")
        }
    }

    @Test("an ifindex out of range in a hand-edited database is a store error, never a trap")
    func ifindexOutOfRange() throws {
        let directory = try TemporaryDirectory()
        do {
            var life = try Lifetime(path: directory.database)
            life.take(life.meter.start(links: [link("eth0", 2, traffic(1000, 1000))], at: at(0)))
            life.take(life.meter.apply(sample: [reading(2, traffic(1500, 1300))], at: at(30)))
            try life.save()
        }
        do {
            let editor = try SQLiteConnection(path: directory.database, create: false)
            try editor.execute("UPDATE epochs SET ifindex = 4294967296; UPDATE events SET ifindex = -4294967296", "edit")
        }
        let store = try Store(path: directory.database)
        #expect {
            _ = try store.loader.meter()
        } throws: { error in
            (error as? StoreError)?.kind == .corrupt && "\(error)".contains("4294967296")
        }
        #expect(throws: StoreError.self) { _ = try store.queries.events() }
    }

    @Test("a saved total that would pass 2^64 − 1 is held there and labelled, save after save")
    func savedTotalSaturates() throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.database)
        let epoch = Epoch(bootID: "b", ifindex: 2, since: origin)
        for (index, rx) in [UInt64.max - 10, 100, 5].enumerated() {
            var pending = PendingWrites()
            let delta = MeterDelta(name: "tun0", ifindex: 2, epoch: epoch, traffic: traffic(rx, 1), at: origin + Double(index))
            pending.add(MeterOutput(deltas: [delta]), calendar: store.configuration.calendar, monthStartDay: { _ in 1 })
            pending.note(InterfaceRecord(name: "tun0", interfaceClass: "tunnel", kind: "tun", mac: "", lastSeen: origin))
            try store.writer.save(&pending)
        }
        let total = try #require(try store.queries.total("tun0")).tally
        #expect(total.traffic.rxBytes == .max && total.traffic.txBytes == 3)
        #expect(total.implausible == 2)
        #expect(total.labels(tunnel: true).contains(.implausibleDropped))
        let day = try #require(try store.queries.usage(.interface("tun0"), resolution: .day).first)
        #expect(day.tally.traffic.rxBytes == .max)
    }
}

@Suite("Schema", .ownThread, .timeLimit(.minutes(3)))
struct SchemaTests {
    @Test("buckets and totals have the tally columns, in the order every statement binds and reads them")
    func tallyColumns() throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.database)
        for table in ["buckets", "totals"] {
            let statement = try store.connection.prepare("SELECT name FROM pragma_table_info('\(table)') ORDER BY cid", "read")
            var columns: [String] = []
            while try statement.step() { columns.append(statement.text(0) ?? "") }
            let firstTally = try #require(columns.firstIndex(of: "rx_bytes"))
            #expect(Array(columns[firstTally..<(firstTally + TallyColumns.names.count)]) == TallyColumns.names, "\(table)")
        }
    }
}
