import IfMeterCore
import IfMeterHistory

/// The interface scope program's map as last read (schema 7, docs/SCOPES.md): its boot and
/// map id in `meter`, its entries in `scope_counters`. Written whole by a save that changed it
/// (a few rows), read at start.
struct ScopeCounterRows {
    private let insert, clear, setMeter, rows, meterValue: Statement

    init(_ connection: SQLiteConnection) throws(StoreError) {
        insert = try connection.prepare("""
            INSERT INTO scope_counters (ifindex, scope, rx_bytes, tx_bytes, rx_packets, tx_packets)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6)
            """, "save to")
        clear = try connection.prepare("DELETE FROM scope_counters", "save to")
        setMeter = try connection.prepare("""
            INSERT INTO meter (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value
            """, "save to")
        rows = try connection.prepare("""
            SELECT ifindex, scope, rx_bytes, tx_bytes, rx_packets, tx_packets FROM scope_counters
            """, "read")
        meterValue = try connection.prepare("SELECT value FROM meter WHERE key = ?1", "read")
    }

    /// Replaces the rows with `state`'s; inside the save's transaction.
    func write(_ state: ScopeCounterState) throws(StoreError) {
        try clear.run([])
        for (key, traffic) in state.counters {
            try insert.run([.int(Int64(key.ifindex)), .int(Int64(key.scope.rawValue)), .uint(traffic.rxBytes),
                            .uint(traffic.txBytes), .uint(traffic.rxPackets), .uint(traffic.txPackets)])
        }
        try setMeter.run([.text("scopes_boot_id"), .text(state.bootID)])
        try setMeter.run([.text("scopes_map_id"), .text(String(state.mapID))])
    }

    /// What the last save kept; nil when none did (a database from before schema 7, or a
    /// daemon that never read the map). A row no scope names (edited by hand) is left out: that
    /// link's next interval is counted as one not covered before.
    func read() throws(StoreError) -> ScopeCounterState? {
        let boot = meterValue.bind([.text("scopes_boot_id")])
        guard try boot.step(), let bootID = boot.text(0) else { return nil }
        let map = meterValue.bind([.text("scopes_map_id")])
        guard try map.step(), let mapID = map.text(0).flatMap({ UInt32($0) }) else { return nil }
        var state = ScopeCounterState(bootID: bootID, mapID: mapID)
        let read = rows.bind([])
        while try read.step() {
            guard let ifindex = Int32(exactly: read.int64(0)), let raw = UInt32(exactly: read.int64(1)),
                  let scope = TrafficScope(rawValue: raw) else { continue }
            state.counters[ScopeCounterKey(ifindex: ifindex, scope: scope)] = Traffic(
                rxBytes: read.uint64(2), txBytes: read.uint64(3), rxPackets: read.uint64(4), txPackets: read.uint64(5))
        }
        return state
    }
}
