import IfMeterPlans
import CSQLite
import FoundationEssentials
import IfMeterCore
import IfMeterHistory
import IfMeterJSON
#if canImport(Glibc)
import Glibc
#endif

/// ifmeter's history in SQLite (docs/decisions/store.md): one writer, WAL, `synchronous=FULL`.
///
/// Loss bound: a save is one transaction holding the traffic and the meter state it leads to.
/// If the daemon is killed, the database holds the last save, and in the same boot the kernel
/// counters still hold everything after it: the restarted meter counts it, nothing is lost. On
/// power loss (a reboot, so the counters are gone too), the traffic since the last completed
/// save is lost: at most one save interval. `FULL` makes each commit durable when it returns.
public final class Store {
    /// What opening repaired, each with why: said once at start (``repairImportedTimes(_:)``).
    public private(set) var repairs: [String] = []
    public let path: String
    /// Replaced on a config reload; affects buckets written and queries answered from then on.
    public var configuration: HistoryConfiguration
    /// Which of the service's saves it holds, noted by whoever saves through it: what an
    /// answer adds of the unsaved traffic it was given (``UnsavedTraffic``).
    public var ledger = SaveLedger()
    let connection: SQLiteConnection
    private let lock: StoreLock
    let statements: Statements
    /// Counts saves, so a save can tell the epochs it wrote from those it no longer tracks.
    private var saveSequence: Int64

    /// Opens (or creates) the database at `path`, holding `lock` (taken here if not given) so
    /// no second ifmeterd writes it. Refuses, without writing anything, a file that is not an
    /// ifmeter database, fails its integrity check, or has a newer schema.
    public init(
        path: String, configuration: HistoryConfiguration = HistoryConfiguration(), lock: StoreLock? = nil
    ) throws(StoreError) {
        self.path = path
        self.configuration = configuration
        if let lock {
            self.lock = lock
        } else {
            self.lock = try StoreLock(databasePath: path)
        }
        let exists = access(path, F_OK) == 0
        connection = try SQLiteConnection(path: path, create: !exists)
        try Self.check(connection)
        try Self.configure(connection)
        try Self.migrate(connection)
        repairs = try Self.repairImportedTimes(connection)
        statements = try Statements(connection)
        saveSequence = Int64(try connection.scalarText(
            "SELECT value FROM meter WHERE key = 'save_sequence'", "open") ?? "0") ?? 0
    }

    // MARK: Opening

    /// Reads the header and schema before anything is written.
    private static func check(_ connection: SQLiteConnection) throws(StoreError) {
        let application = try connection.scalarInt("PRAGMA application_id", "open")
        let version = Int(try connection.scalarInt("PRAGMA user_version", "open"))
        let objects = try connection.scalarInt("SELECT count(*) FROM sqlite_master", "open")
        if application != Schema.applicationID && !(application == 0 && version == 0 && objects == 0) {
            throw StoreError(kind: .corrupt, path: connection.path, operation: "open",
                             message: "it is not an ifmeter database (application_id \(application)); "
                                 + "it was left untouched")
        }
        if version > Schema.version {
            throw StoreError(kind: .newerSchema(found: version, supported: Schema.version),
                             path: connection.path, operation: "open",
                             message: "it has schema version \(version), written by a newer ifmeter; "
                                 + "this one knows up to \(Schema.version). It was left untouched")
        }
        let integrity = try connection.scalarText("PRAGMA quick_check", "open")
        guard integrity == "ok" else {
            throw StoreError(kind: .corrupt, path: connection.path, operation: "open",
                             message: "integrity check failed (\(integrity ?? "no answer")); "
                                 + "it was left untouched")
        }
    }

    /// Imports before ifmeter checked vnStat's values could write times the store cannot
    /// hold: a vnStat `created` of 1960 became `first_seen`, and rows dated before 1970 became
    /// buckets, and the next start refused the whole store. Those values are the import's (the
    /// daemon writes only its own clock's), so they are repaired in one transaction rather
    /// than stop metering: the buckets are deleted and `first_seen` becomes the name's earliest
    /// remaining bucket (else its `last_seen`, else now). Nothing else is ever rewritten.
    private static func repairImportedTimes(_ connection: SQLiteConnection) throws(StoreError) -> [String] {
        func outOf(_ column: String) -> String { "NOT (\(column) BETWEEN 0 AND \(Int64(Statement.acceptedTimes.upperBound)))" }
        let names = try connection.prepare("SELECT name, first_seen FROM interfaces WHERE \(outOf("first_seen"))", "repair")
        var repairs: [String] = []
        while try names.step() {
            repairs.append("interface \(InterfaceName.printable(names.text(0) ?? "")): first_seen \(names.double(1)) is no time "
                + "from 1970 to 9999 (an unchecked vnStat import wrote it); set to its earliest history")
        }
        let buckets = try connection.scalarInt("SELECT count(*) FROM buckets WHERE \(outOf("start"))", "repair")
        if buckets > 0 { repairs.append("\(buckets) buckets dated outside 1970 to 9999 (an unchecked vnStat import wrote them): deleted") }
        guard !repairs.isEmpty else { return [] }
        try connection.transaction("repair") { () throws(StoreError) in
            try connection.execute("DELETE FROM buckets WHERE \(outOf("start"))", "repair")
            try connection.execute("""
                UPDATE interfaces SET first_seen = COALESCE(
                    (SELECT min(start) FROM buckets WHERE buckets.name = interfaces.name),
                    CASE WHEN \(outOf("last_seen")) THEN NULL ELSE last_seen END,
                    CAST(strftime('%s', 'now') AS REAL))
                WHERE \(outOf("first_seen"))
                """, "repair")
        }
        return repairs
    }

    private static func configure(_ connection: SQLiteConnection) throws(StoreError) {
        let mode = try connection.scalarText("PRAGMA journal_mode = WAL", "configure")
        guard mode == "wal" else {
            throw StoreError(kind: .other, path: connection.path, operation: "configure",
                             message: "cannot switch to WAL journaling (got \(mode ?? "nothing"))")
        }
        try connection.execute("PRAGMA synchronous = FULL", "configure")
        // SQLite's default page cache (2 MB) would be the daemon's largest allocation, growing
        // with the interfaces up to that size; the kernel's page cache holds the file anyway,
        // so a page read again costs a pread, not a disk access. 64 KiB keeps a B-tree's upper
        // levels, which is what a save touches again (ifmeter-bench store measures it).
        try connection.execute("PRAGMA cache_size = -\(Self.pageCacheKiB)", "configure")
    }

    /// The page cache of the store's connection, in KiB.
    static let pageCacheKiB = 64

    private static func migrate(_ connection: SQLiteConnection) throws(StoreError) {
        var version = Int(try connection.scalarInt("PRAGMA user_version", "read"))
        while version < Schema.version {
            let next = version + 1
            try connection.transaction("migrate") { () throws(StoreError) in
                try connection.execute(Schema.migrations[version], "migrate")
                try connection.execute("PRAGMA user_version = \(next)", "migrate")
                try connection.execute("PRAGMA application_id = \(Schema.applicationID)", "migrate")
            }
            version = next
        }
    }

    /// How long a statement waits for another program's lock on the file before failing
    /// with a busy error (10 s at open, for the load). The daemon shortens it once running: a
    /// save that finds the file busy fails fast and is retried with everything kept, instead
    /// of holding the loop for seconds.
    public func waitWhenBusy(milliseconds: Int32) {
        sqlite3_busy_timeout(connection.handle, milliseconds)
    }

    // MARK: Saving

    /// Writes `pending` in one transaction and empties it. On failure nothing is written and
    /// `pending` is kept for the next attempt.
    public func save(_ pending: inout PendingWrites) throws(StoreError) {
        try save(&pending, recording: EmptyCollection())
    }

    /// Writes `pending` and `records` (after pending's own, so theirs win) in one transaction,
    /// and empties `pending`. The records are read as they are written: a save of every present
    /// link never holds thousands of them at once.
    public func save(_ pending: inout PendingWrites, recording records: some Sequence<InterfaceRecord>) throws(StoreError) {
        var records = records.makeIterator()
        var record = records.next()
        guard !pending.isEmpty || record != nil else { return }
        let batch = pending
        try connection.transaction("save to") { () throws(StoreError) in
            try batch.forEachBucket { (name, resolution, start, tally) throws(StoreError) in
                try statements.upsertBucket.run(
                    [.text(name), .text(resolution.rawValue), .int(start)] + TallyColumns.values(tally))
            }
            for (name, entry) in batch.traffic {
                try statements.upsertTotal.run([.text(name)] + TallyColumns.values(entry.total))
            }
            for event in batch.events {
                try insert(event)
            }
            let firstSeen = batch.meterState?.firstSeen ?? [:]
            for noted in batch.interfaces.values {
                try upsert(noted, firstSeen: firstSeen)
            }
            while let present = record {
                try upsert(present, firstSeen: firstSeen)
                record = records.next()
            }
            if let state = batch.meterState {
                try saveMeterState(state, sequence: saveSequence + 1)
            }
            for record in batch.networks.values {
                try upsert(record)
            }
            for (name, state) in batch.planStates {
                try statements.upsertPlan.run([.text(name), .text(state.fingerprint), .int(state.periodStart),
                                               .text(state.firedText)])
            }
        }
        saveSequence += 1
        pending = PendingWrites()
    }

    private func upsert(_ record: InterfaceRecord, firstSeen: DenseTable<String, Double>) throws(StoreError) {
        try statements.upsertInterface.run([
            .text(record.name), .optionalText(record.interfaceClass), .text(record.kind),
            .text(record.mac), .double(firstSeen[record.name] ?? record.lastSeen), .double(record.lastSeen),
        ])
    }

    private func upsert(_ record: NetworkRecord) throws(StoreError) {
        let network = record.network
        try statements.upsertNetwork.run([
            .text(network.uuid), .text(network.id), .text(network.type), .optionalText(network.ssid.map(Hex.encode)),
            .text(network.metered.rawValue), .optionalText(network.apn), .optionalText(network.operatorName),
            .optionalText(record.interface), .int(record.active ? 1 : 0), .double(record.firstSeen), .double(record.lastSeen),
        ])
    }

    /// Every network as last saved. A row that does not read (edited by hand: no UUID, an SSID
    /// that is not hex or longer than 32 bytes) is left out, and its traffic stays under its subject.
    public func networks() throws(StoreError) -> [NetworkRecord] {
        let query = statements.networks.bind([])
        var records: [NetworkRecord] = []
        while try query.step() {
            guard let uuid = query.text(0), Network.isUUID(uuid), let id = query.text(1), let type = query.text(2),
                  let metered = query.text(4).flatMap(Metered.init(rawValue:)) else { continue }
            let ssid = query.text(3).map(Hex.decode)
            if let ssid, ssid == nil || ssid!.count > 32 { continue }
            records.append(NetworkRecord(
                network: Network(uuid: uuid, id: id, type: type, ssid: ssid ?? nil, metered: metered,
                                 apn: query.text(5), operatorName: query.text(6)),
                firstSeen: query.double(9), lastSeen: query.double(10), interface: query.text(7), active: query.int64(8) != 0))
        }
        return records
    }

    private func insert(_ event: CounterEvent) throws(StoreError) {
        try statements.insertEvent.run([
            .double(event.at), .text(event.kind.rawValue), .optionalText(event.interface),
            event.ifindex.map { .int(Int64($0)) } ?? .null,
            .optionalText(Self.json(event.previous)), .optionalText(Self.json(event.current)),
            .optionalText(Self.json(event.delta)), .text(event.detail),
            .optionalText(event.plan.map(PlanColumn.text)),
        ])
    }

    /// Upserts the tracked epochs as open, then closes those this save did not mention.
    /// Names are written only when new or earlier, so a steady save writes one row per interface.
    private func saveMeterState(_ state: MeterState, sequence: Int64) throws(StoreError) {
        for interface in state.interfaces {
            let last = interface.last
            try statements.upsertEpoch.run([
                .text(interface.epoch.bootID), .int(Int64(interface.ifindex)),
                .int(Int64(interface.epoch.generation)), .text(interface.name), .text(interface.kind),
                .double(interface.epoch.since), .uint(last.rxBytes), .uint(last.txBytes),
                .uint(last.rxPackets), .uint(last.txPackets), .double(interface.lastInstant.wall),
                .uint(interface.lastInstant.sinceBootNanoseconds), .int(interface.countersAre32Bit ? 1 : 0),
                interface.speedBitsPerSecond.map { .uint($0) } ?? .null, .int(sequence),
                .int(Int64(interface.namespace.rawValue)),
            ])
        }
        try statements.closeEpochs.run([.int(sequence)])
        // Every name, every save: a row that has it already is looked up, not written. A copy of
        // what was saved, to skip the lookups, would cost memory per name for the whole run.
        for (name, since) in state.firstSeen {
            try statements.recordName.run([.text(name), .double(since)])
        }
        try statements.setMeter.run([.text("boot_id"), .text(state.bootID)])
        try statements.setMeter.run([.text("save_sequence"), .text(String(sequence))])
        if let instant = state.lastInstant {
            try statements.setMeter.run([.text("last_wall"), .text(String(instant.wall))])
            try statements.setMeter.run([.text("last_boot_ns"), .text(String(instant.sinceBootNanoseconds))])
        }
    }

    static func json(_ traffic: Traffic?) -> String? {
        traffic.map { String(decoding: TrafficColumn.bytes($0), as: UTF8.self) }
    }

    // MARK: Loading

    /// What the meter needs at start: the saved state (nil if there is none) and every name with
    /// history, with when its counting began.
    public func loadMeter() throws(StoreError) -> (state: MeterState?, knownNames: [String: Double]) {
        var names: [String: Double] = [:]
        let namesQuery = statements.allNames.bind([])
        while try namesQuery.step() {
            names[namesQuery.text(0) ?? ""] = try namesQuery.time(1)
        }
        let meta = statements.meterValues.bind([])
        var values: [String: String] = [:]
        while try meta.step() {
            values[meta.text(0) ?? ""] = meta.text(1)
        }
        guard let bootID = values["boot_id"] else { return (nil, names) }
        var interfaces: [TrackedInterface] = []
        let epochs = statements.openEpochs.bind([])
        while try epochs.step() {
            let ifindex = try epochs.int32(1)
            interfaces.append(TrackedInterface(
                name: epochs.text(3) ?? "", namespace: try epochs.namespace(14), ifindex: ifindex, kind: epochs.text(4) ?? "",
                epoch: Epoch(bootID: epochs.text(0) ?? "", ifindex: ifindex,
                             generation: Int(epochs.int64(2)), since: try epochs.time(5)),
                last: Traffic(rxBytes: epochs.uint64(6), txBytes: epochs.uint64(7),
                              rxPackets: epochs.uint64(8), txPackets: epochs.uint64(9)),
                lastInstant: MeterInstant(wall: try epochs.time(10), sinceBootNanoseconds: epochs.uint64(11)),
                countersAre32Bit: epochs.int64(12) != 0,
                speedBitsPerSecond: epochs.isNull(13) ? nil : epochs.uint64(13)))
        }
        // A last_wall outside 1970…9999 (hand-edited) is as good as none: the meter resumes
        // without a clock check rather than trapping on the difference.
        let lastInstant = values["last_wall"].flatMap(Double.init).flatMap { Statement.acceptedTimes.contains($0) ? $0 : nil }.flatMap { wall in
            values["last_boot_ns"].flatMap(UInt64.init).map {
                MeterInstant(wall: wall, sinceBootNanoseconds: $0)
            }
        }
        let state = MeterState(bootID: bootID, interfaces: interfaces, firstSeen: DenseTable(names),
                               lastInstant: lastInstant)
        return (state, names)
    }

    /// Deletes everything stored about `name`: buckets, total, closed epochs, events and its
    /// record. Returns false if the name had no history. The meter's open epochs stay.
    @discardableResult
    public func forget(_ name: String) throws(StoreError) -> Bool {
        try connection.transaction("forget in") { () throws(StoreError) -> Bool in
            var removed = 0
            for sql in ["DELETE FROM buckets WHERE name = ?1", "DELETE FROM totals WHERE name = ?1",
                        "DELETE FROM epochs WHERE name = ?1 AND open = 0",
                        "DELETE FROM events WHERE interface = ?1", "DELETE FROM interfaces WHERE name = ?1",
                        // What was imported for it goes too: a later import brings it back.
                        "DELETE FROM imports WHERE name = ?1",
                        "DELETE FROM networks WHERE 'network:' || uuid = ?1"] {
                try connection.prepare(sql, "forget in").run([.text(name)])
                removed += Int(sqlite3_changes(connection.handle))
            }
            return removed > 0
        }
    }
}

extension Store {
    /// Everything the meter service starts from: the meter state, every name's total and
    /// record, and when link events were lost.
    public func loadHistory() throws(StoreError) -> ServiceHistory {
        let meter = try loadMeter()
        return ServiceHistory(
            meterState: meter.state, knownNames: meter.knownNames, totals: try totals().mapValues(\.tally),
            interfaces: try interfaces(), eventsLost: try lostEventTimes(limit: 100_000),
            planStates: try planStates(), networks: try networks())
    }

    /// Each plan's watch as last saved; a row that does not read (edited by hand) is left out,
    /// so that plan starts its watch afresh.
    public func planStates() throws(StoreError) -> [String: PlanState] {
        let query = statements.planStates.bind([])
        var states: [String: PlanState] = [:]
        while try query.step() {
            guard let name = query.text(0), let fingerprint = query.text(1),
                  let fired = query.text(3).flatMap(PlanState.fired(parsing:)) else { continue }
            states[name] = PlanState(fingerprint: fingerprint, periodStart: query.int64(2), fired: fired)
        }
        return states
    }
}
