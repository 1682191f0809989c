import IfMeterCore
import IfMeterHistory

/// Writes the meter's output: each save is one transaction holding the traffic, events,
/// records, plans' and networks' states, and the meter state they lead to (the loss bound,
/// ``Store``). A class because it counts the saves it made.
public final class StoreWriter {
    private let connection: SQLiteConnection
    private let statements: Statements
    private let appRows: AppCounterRows
    /// Counts saves, so a save can tell the epochs it wrote from those it no longer tracks.
    private var saveSequence: Int64

    init(_ connection: SQLiteConnection, appRows: AppCounterRows) throws(StoreError) {
        self.connection = connection
        statements = try Statements(connection)
        self.appRows = appRows
        saveSequence = Int64(try connection.scalarText(
            "SELECT value FROM meter WHERE key = 'save_sequence'", "open") ?? "0") ?? 0
    }

    /// The saves made into this database so far (kept with the meter state): the save journal
    /// names the one its records follow.
    public var sequence: Int64 { saveSequence }

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
            if let apps = batch.apps {
                try appRows.write(apps)
            }
            if let scopes = batch.scopes {
                try appRows.scopes.write(scopes)
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
        if let anchor = state.clockAnchor {
            try statements.setMeter.run([.text("clock_anchor_wall"), .text(String(anchor.wall))])
            try statements.setMeter.run([.text("clock_anchor_boot_ns"), .text(String(anchor.sinceBootNanoseconds))])
        }
    }

    static func json(_ traffic: Traffic?) -> String? {
        traffic.map { String(decoding: TrafficColumn.bytes($0), as: UTF8.self) }
    }
}

extension StoreWriter {
    /// The statements a save uses, prepared once.
    private struct Statements {
        let upsertBucket, upsertTotal, insertEvent, upsertInterface, closeEpochs, upsertEpoch: Statement
        let recordName, setMeter, upsertPlan, upsertNetwork: Statement

        init(_ connection: SQLiteConnection) throws(StoreError) {
            upsertBucket = try connection.prepare("""
                INSERT INTO buckets (name, resolution, start, \(TallyColumns.names.joined(separator: ", ")))
                VALUES (?1, ?2, ?3, \(TallyColumns.placeholders(from: 4)))
                ON CONFLICT (name, resolution, start) DO UPDATE SET \(TallyColumns.sums)
                """, "save to")
            upsertTotal = try connection.prepare("""
                INSERT INTO totals (name, \(TallyColumns.names.joined(separator: ", ")))
                VALUES (?1, \(TallyColumns.placeholders(from: 2)))
                ON CONFLICT (name) DO UPDATE SET \(TallyColumns.sums)
                """, "save to")
            insertEvent = try connection.prepare("""
                INSERT INTO events (at, kind, interface, ifindex, previous, current, delta, detail, plan)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                """, "save to")
            upsertPlan = try connection.prepare("""
                INSERT INTO plans (name, fingerprint, period_start, fired) VALUES (?1, ?2, ?3, ?4)
                ON CONFLICT (name) DO UPDATE SET
                    fingerprint = excluded.fingerprint, period_start = excluded.period_start, fired = excluded.fired
                """, "save to")
            upsertNetwork = try connection.prepare("""
                INSERT INTO networks (uuid, id, type, ssid_hex, metered, apn, operator, interface, active, first_seen, last_seen)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
                ON CONFLICT (uuid) DO UPDATE SET id = excluded.id, type = excluded.type, ssid_hex = excluded.ssid_hex,
                    metered = excluded.metered, apn = excluded.apn, operator = excluded.operator,
                    interface = excluded.interface, active = excluded.active,
                    first_seen = min(first_seen, excluded.first_seen), last_seen = max(last_seen, excluded.last_seen)
                """, "save to")
            upsertInterface = try connection.prepare("""
                INSERT INTO interfaces (name, class, kind, mac, first_seen, last_seen)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                ON CONFLICT (name) DO UPDATE SET class = coalesce(excluded.class, class),
                    kind = excluded.kind, mac = excluded.mac,
                    first_seen = min(first_seen, excluded.first_seen),
                    last_seen = max(last_seen, excluded.last_seen)
                """, "save to")
            recordName = try connection.prepare("""
                INSERT INTO interfaces (name, kind, mac, first_seen, last_seen) VALUES (?1, '', '', ?2, ?2)
                ON CONFLICT (name) DO UPDATE SET first_seen = excluded.first_seen
                WHERE excluded.first_seen < first_seen
                """, "save to")
            closeEpochs = try connection.prepare(
                "UPDATE epochs SET open = 0 WHERE open = 1 AND saved_in < ?1", "save to")
            upsertEpoch = try connection.prepare("""
                INSERT INTO epochs (boot_id, ifindex, generation, name, kind, since, open,
                                    last_rx_bytes, last_tx_bytes, last_rx_packets, last_tx_packets,
                                    last_wall, last_boot_ns, counters_32bit, speed_bps, saved_in, namespace)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)
                ON CONFLICT (boot_id, namespace, ifindex, generation) DO UPDATE SET
                    name = excluded.name, kind = excluded.kind, open = 1, saved_in = excluded.saved_in,
                    last_rx_bytes = excluded.last_rx_bytes, last_tx_bytes = excluded.last_tx_bytes,
                    last_rx_packets = excluded.last_rx_packets, last_tx_packets = excluded.last_tx_packets,
                    last_wall = excluded.last_wall, last_boot_ns = excluded.last_boot_ns,
                    counters_32bit = excluded.counters_32bit, speed_bps = excluded.speed_bps
                """, "save to")
            setMeter = try connection.prepare("""
                INSERT INTO meter (key, value) VALUES (?1, ?2)
                ON CONFLICT (key) DO UPDATE SET value = excluded.value
                """, "save to")
        }
    }
}
