import IfMeterCore
import IfMeterHistory

/// The counting map's entries as last read and each cgroup id's subject (schema 6; the scope
/// in the key since 7, docs/APPS.md), and the interface scope program's (``scopes``): written
/// by a save in its transaction, read at start.
struct AppCounterRows {
    let scopes: ScopeCounterRows
    private let upsertCounter, deleteCounter, clearCounters, upsertName, deleteName, clearNames, setMeter: Statement
    private let recordSubject: Statement
    private let counters, names, subjects, meterValue: Statement

    init(_ connection: SQLiteConnection) throws(StoreError) {
        upsertCounter = try connection.prepare("""
            INSERT INTO app_counters (cgroup_id, ifindex, scope, rx_bytes, tx_bytes, rx_packets, tx_packets)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
            ON CONFLICT (cgroup_id, ifindex, scope) DO UPDATE SET rx_bytes = excluded.rx_bytes, tx_bytes = excluded.tx_bytes,
                rx_packets = excluded.rx_packets, tx_packets = excluded.tx_packets
            """, "save to")
        deleteCounter = try connection.prepare("DELETE FROM app_counters WHERE cgroup_id = ?1 AND ifindex = ?2 AND scope = ?3", "save to")
        clearCounters = try connection.prepare("DELETE FROM app_counters", "save to")
        upsertName = try connection.prepare("""
            INSERT INTO app_names (cgroup_id, subject) VALUES (?1, ?2)
            ON CONFLICT (cgroup_id) DO UPDATE SET subject = excluded.subject
            """, "save to")
        deleteName = try connection.prepare("DELETE FROM app_names WHERE cgroup_id = ?1", "save to")
        clearNames = try connection.prepare("DELETE FROM app_names", "save to")
        setMeter = try connection.prepare("""
            INSERT INTO meter (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value
            """, "save to")
        recordSubject = try connection.prepare("""
            INSERT INTO app_subjects (subject, first_seen) VALUES (?1, ?2)
            ON CONFLICT (subject) DO UPDATE SET first_seen = excluded.first_seen WHERE excluded.first_seen < first_seen
            """, "save to")
        counters = try connection.prepare("""
            SELECT cgroup_id, ifindex, scope, rx_bytes, tx_bytes, rx_packets, tx_packets FROM app_counters
            """, "read")
        names = try connection.prepare("SELECT cgroup_id, subject FROM app_names", "read")
        subjects = try connection.prepare("SELECT subject, first_seen FROM app_subjects", "read")
        meterValue = try connection.prepare("SELECT value FROM meter WHERE key = ?1", "read")
        scopes = try ScopeCounterRows(connection)
    }

    /// Writes `write`'s rows; inside the save's transaction.
    func write(_ write: AppCounterWrite) throws(StoreError) {
        if write.replaceAll {
            try clearCounters.run([])
            try clearNames.run([])
        }
        for key in write.removedCounters {
            try deleteCounter.run([.uint(key.cgroupID), .int(Int64(key.ifindex)), .int(Int64(key.scope.rawValue))])
        }
        for (key, traffic) in write.counters {
            try upsertCounter.run([.uint(key.cgroupID), .int(Int64(key.ifindex)), .int(Int64(key.scope.rawValue)), .uint(traffic.rxBytes),
                                   .uint(traffic.txBytes), .uint(traffic.rxPackets), .uint(traffic.txPackets)])
        }
        for id in write.removedNames {
            try deleteName.run([.uint(id)])
        }
        for (id, subject) in write.names {
            try upsertName.run([.uint(id), .text(subject)])
        }
        for (subject, since) in write.subjects {
            try recordSubject.run([.text(subject), .double(since)])
        }
        try setMeter.run([.text("apps_boot_id"), .text(write.bootID)])
        try setMeter.run([.text("apps_map_id"), write.mapID.map { .text(String($0)) } ?? .text("")])
    }

    /// What the last save kept; nil when none kept any (a database from before schema 6, or
    /// a daemon that never counted applications). A row whose subject its kind would refuse
    /// (edited by hand) is left out: that cgroup is named again, or counted in its remainder.
    func read() throws(StoreError) -> AppCounterState? {
        let boot = meterValue.bind([.text("apps_boot_id")])
        guard try boot.step(), let bootID = boot.text(0) else { return nil }
        var seen: [String: Double] = [:]
        let subjectRows = subjects.bind([])
        while try subjectRows.step() {
            guard let subject = subjectRows.text(0), SubjectKinds.kind(of: subject) != nil else { continue }
            seen[subject] = try subjectRows.time(1)
        }
        let map = meterValue.bind([.text("apps_map_id")])
        let mapID = try map.step() ? map.text(0).flatMap { UInt32($0) } : nil
        var state = AppCounterState(bootID: bootID, mapID: mapID, subjects: seen)
        let rows = counters.bind([])
        while try rows.step() {
            guard let ifindex = Int32(exactly: rows.int64(1)), let raw = UInt32(exactly: rows.int64(2)),
                  let scope = TrafficScope(rawValue: raw) else { continue }
            state.counters[AppCounterKey(cgroupID: rows.uint64(0), ifindex: ifindex, scope: scope)] = Traffic(
                rxBytes: rows.uint64(3), txBytes: rows.uint64(4), rxPackets: rows.uint64(5), txPackets: rows.uint64(6))
        }
        let named = names.bind([])
        while try named.step() {
            guard let subject = named.text(1), SubjectKinds.kind(of: subject) != nil else { continue }
            state.names[named.uint64(0)] = subject
        }
        return state
    }
}
