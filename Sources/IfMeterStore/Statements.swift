import IfMeterHistory
/// The statements a save and a load use, prepared once.
struct Statements {
    let upsertBucket, upsertTotal, insertEvent, upsertInterface, closeEpochs, upsertEpoch: Statement
    let recordName, setMeter, allNames, meterValues, openEpochs, pruneBuckets, pruneEvents: Statement
    let importBucket, importTotal, importInterface, recordImport, importedStart, firstSeen: Statement
    let upsertPlan, planStates, upsertNetwork, networks: Statement

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
        planStates = try connection.prepare("SELECT name, fingerprint, period_start, fired FROM plans", "read")
        upsertNetwork = try connection.prepare("""
            INSERT INTO networks (uuid, id, type, ssid_hex, metered, apn, operator, interface, active, first_seen, last_seen)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
            ON CONFLICT (uuid) DO UPDATE SET id = excluded.id, type = excluded.type, ssid_hex = excluded.ssid_hex,
                metered = excluded.metered, apn = excluded.apn, operator = excluded.operator,
                interface = excluded.interface, active = excluded.active,
                first_seen = min(first_seen, excluded.first_seen), last_seen = max(last_seen, excluded.last_seen)
            """, "save to")
        networks = try connection.prepare("""
            SELECT uuid, id, type, ssid_hex, metered, apn, operator, interface, active, first_seen, last_seen
            FROM networks ORDER BY uuid
            """, "read")
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
        allNames = try connection.prepare("SELECT name, first_seen FROM interfaces", "read")
        meterValues = try connection.prepare("SELECT key, value FROM meter", "read")
        openEpochs = try connection.prepare("""
            SELECT boot_id, ifindex, generation, name, kind, since, last_rx_bytes, last_tx_bytes,
                   last_rx_packets, last_tx_packets, last_wall, last_boot_ns, counters_32bit, speed_bps, namespace
            FROM epochs WHERE open = 1 ORDER BY namespace, ifindex
            """, "read")
        pruneBuckets = try connection.prepare("""
            DELETE FROM buckets WHERE (name, resolution, start) IN
                (SELECT name, resolution, start FROM buckets
                 WHERE resolution = ?1 AND start < ?2 LIMIT ?3)
            """, "prune")
        pruneEvents = try connection.prepare("""
            DELETE FROM events WHERE id IN (SELECT id FROM events WHERE at < ?1 LIMIT ?2)
            """, "prune")
        // vnStat imports (VnStatImport): added to what the bucket or total holds, marked imported.
        importBucket = try connection.prepare("""
            INSERT INTO buckets (name, resolution, start, rx_bytes, tx_bytes, imported) VALUES (?1, ?2, ?3, ?4, ?5, 1)
            ON CONFLICT (name, resolution, start) DO UPDATE SET rx_bytes = ifm_add(rx_bytes, excluded.rx_bytes),
                tx_bytes = ifm_add(tx_bytes, excluded.tx_bytes), imported = 1
            """, "import into")
        importTotal = try connection.prepare("""
            INSERT INTO totals (name, rx_bytes, tx_bytes, imported) VALUES (?1, ?2, ?3, 1)
            ON CONFLICT (name) DO UPDATE SET rx_bytes = ifm_add(rx_bytes, excluded.rx_bytes),
                tx_bytes = ifm_add(tx_bytes, excluded.tx_bytes), imported = 1
            """, "import into")
        importInterface = try connection.prepare("""
            INSERT INTO interfaces (name, kind, mac, first_seen, last_seen) VALUES (?1, '', '', ?2, ?3)
            ON CONFLICT (name) DO UPDATE SET first_seen = excluded.first_seen
            WHERE excluded.first_seen < first_seen
            """, "import into")
        recordImport = try connection.prepare("""
            INSERT OR IGNORE INTO imports (source, name, resolution, start, rx_bytes, tx_bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
            """, "import into")
        importedStart = try connection.prepare(
            "SELECT start FROM imports WHERE source = ?1 AND name = ?2 AND resolution = ?3", "import into")
        firstSeen = try connection.prepare("SELECT first_seen FROM interfaces WHERE name = ?1", "import into")
    }
}
