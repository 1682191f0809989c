import IfMeterHistory
/// The database layout, as forward migrations: migration `n` takes `PRAGMA user_version` from
/// `n` to `n + 1`. Never edit a released migration; append a new one. The bucket and total
/// columns come from ``TallyColumns``, so the two tables and every statement agree.
enum Schema {
    /// `PRAGMA application_id`: "ifmt". Marks the file as ifmeter's.
    static let applicationID: Int64 = 0x6966_6D74

    static var version: Int { migrations.count }

    static let migrations: [String] = [
        """
        CREATE TABLE interfaces (
            name TEXT PRIMARY KEY,
            class TEXT,
            kind TEXT,
            mac TEXT,
            alias TEXT,
            first_seen REAL NOT NULL,
            last_seen REAL NOT NULL
        );
        CREATE TABLE buckets (
            name TEXT NOT NULL,
            resolution TEXT NOT NULL,
            start INTEGER NOT NULL,
        \(TallyColumns.definitions),
            PRIMARY KEY (name, resolution, start)
        ) WITHOUT ROWID;
        CREATE INDEX buckets_by_age ON buckets (resolution, start);
        CREATE TABLE totals (
            name TEXT PRIMARY KEY,
        \(TallyColumns.definitions)
        );
        CREATE TABLE epochs (
            boot_id TEXT NOT NULL,
            ifindex INTEGER NOT NULL,
            generation INTEGER NOT NULL,
            name TEXT NOT NULL,
            kind TEXT NOT NULL,
            since REAL NOT NULL,
            open INTEGER NOT NULL,
            last_rx_bytes INTEGER NOT NULL,
            last_tx_bytes INTEGER NOT NULL,
            last_rx_packets INTEGER NOT NULL,
            last_tx_packets INTEGER NOT NULL,
            last_wall REAL NOT NULL,
            last_boot_ns INTEGER NOT NULL,
            counters_32bit INTEGER NOT NULL,
            speed_bps INTEGER,
            saved_in INTEGER NOT NULL,
            PRIMARY KEY (boot_id, ifindex, generation)
        );
        CREATE INDEX epochs_open ON epochs (open);
        CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            at REAL NOT NULL,
            kind TEXT NOT NULL,
            interface TEXT,
            ifindex INTEGER,
            previous TEXT,
            current TEXT,
            delta TEXT,
            detail TEXT NOT NULL
        );
        CREATE INDEX events_by_time ON events (at);
        CREATE TABLE meter (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
        """,
        // 1 → 2: traffic imported from vnStat is marked (imported-vnstat), and each imported
        // bucket and total is remembered so a second import adds nothing.
        """
        ALTER TABLE buckets ADD COLUMN imported INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE totals ADD COLUMN imported INTEGER NOT NULL DEFAULT 0;
        CREATE TABLE imports (
            source TEXT NOT NULL,
            name TEXT NOT NULL,
            resolution TEXT NOT NULL,
            start INTEGER NOT NULL,
            rx_bytes INTEGER NOT NULL,
            tx_bytes INTEGER NOT NULL,
            PRIMARY KEY (source, name, resolution, start)
        ) WITHOUT ROWID;
        """,
        // 2 → 3: a link's identity is (namespace, ifindex), so an epoch is keyed by its boot,
        // namespace, ifindex and generation. Every epoch written before is the daemon's own
        // namespace's (0). SQLite cannot change a primary key in place: the table is rebuilt.
        """
        CREATE TABLE epochs_keyed (
            boot_id TEXT NOT NULL,
            namespace INTEGER NOT NULL,
            ifindex INTEGER NOT NULL,
            generation INTEGER NOT NULL,
            name TEXT NOT NULL,
            kind TEXT NOT NULL,
            since REAL NOT NULL,
            open INTEGER NOT NULL,
            last_rx_bytes INTEGER NOT NULL,
            last_tx_bytes INTEGER NOT NULL,
            last_rx_packets INTEGER NOT NULL,
            last_tx_packets INTEGER NOT NULL,
            last_wall REAL NOT NULL,
            last_boot_ns INTEGER NOT NULL,
            counters_32bit INTEGER NOT NULL,
            speed_bps INTEGER,
            saved_in INTEGER NOT NULL,
            PRIMARY KEY (boot_id, namespace, ifindex, generation)
        );
        INSERT INTO epochs_keyed
            SELECT boot_id, 0, ifindex, generation, name, kind, since, open, last_rx_bytes, last_tx_bytes,
                   last_rx_packets, last_tx_packets, last_wall, last_boot_ns, counters_32bit, speed_bps, saved_in
            FROM epochs;
        DROP TABLE epochs;
        ALTER TABLE epochs_keyed RENAME TO epochs;
        CREATE INDEX epochs_open ON epochs (open);
        """,
        // 3 → 4: data plans. A plan event's figures are in `plan`; each plan's watch (the
        // period and the thresholds fired in it) in `plans`, so a restart fires nothing again.
        """
        ALTER TABLE events ADD COLUMN plan TEXT;
        CREATE TABLE plans (
            name TEXT PRIMARY KEY,
            fingerprint TEXT NOT NULL,
            period_start INTEGER NOT NULL,
            fired TEXT NOT NULL
        );
        """,
        // 4 → 5: networks (docs/NETWORKS.md). Their traffic is kept in `buckets` and `totals`
        // under `network:UUID`; what NetworkManager said of each is here. An SSID is up to 32
        // bytes of anything, so it is kept as hex.
        """
        CREATE TABLE networks (
            uuid TEXT PRIMARY KEY,
            id TEXT NOT NULL,
            type TEXT NOT NULL,
            ssid_hex TEXT,
            metered TEXT NOT NULL,
            apn TEXT,
            operator TEXT,
            interface TEXT,
            active INTEGER NOT NULL,
            first_seen REAL NOT NULL,
            last_seen REAL NOT NULL
        );
        """,
        // 5 → 6: applications (docs/APPS.md). Their traffic is kept in `buckets` and
        // `totals` under their subjects, and when each was first seen is here (they have no
        // interface record); so are the counting map's entries as last read and the subject
        // each cgroup id was named, so a start resumes the map's counting.
        """
        CREATE TABLE app_counters (
            cgroup_id INTEGER NOT NULL,
            ifindex INTEGER NOT NULL,
            rx_bytes INTEGER NOT NULL,
            tx_bytes INTEGER NOT NULL,
            rx_packets INTEGER NOT NULL,
            tx_packets INTEGER NOT NULL,
            PRIMARY KEY (cgroup_id, ifindex)
        );
        CREATE TABLE app_names (
            cgroup_id INTEGER PRIMARY KEY,
            subject TEXT NOT NULL
        );
        CREATE TABLE app_subjects (
            subject TEXT PRIMARY KEY,
            first_seen REAL NOT NULL
        );
        """,
        // 6 → 7: traffic scopes (docs/SCOPES.md). The counting program keeps an entry per
        // cgroup, link and scope, so the scope joins app_counters' key; an entry saved before
        // had the key's padding there, 0, and a program still running from then reads so too:
        // 0 keeps a start on that map counting on from its rows rather than counting them again.
        // The interface scope program's map as last read is in scope_counters.
        """
        CREATE TABLE app_counters_scoped (
            cgroup_id INTEGER NOT NULL,
            ifindex INTEGER NOT NULL,
            scope INTEGER NOT NULL,
            rx_bytes INTEGER NOT NULL,
            tx_bytes INTEGER NOT NULL,
            rx_packets INTEGER NOT NULL,
            tx_packets INTEGER NOT NULL,
            PRIMARY KEY (cgroup_id, ifindex, scope)
        );
        INSERT INTO app_counters_scoped
            SELECT cgroup_id, ifindex, 0, rx_bytes, tx_bytes, rx_packets, tx_packets FROM app_counters;
        DROP TABLE app_counters;
        ALTER TABLE app_counters_scoped RENAME TO app_counters;
        CREATE TABLE scope_counters (
            ifindex INTEGER NOT NULL,
            scope INTEGER NOT NULL,
            rx_bytes INTEGER NOT NULL,
            tx_bytes INTEGER NOT NULL,
            rx_packets INTEGER NOT NULL,
            tx_packets INTEGER NOT NULL,
            PRIMARY KEY (ifindex, scope)
        );
        """,
    ]
}
