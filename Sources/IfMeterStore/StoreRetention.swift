import CSQLite
import IfMeterHistory
import IfMeterCore

/// What leaves the database: by retention (`retention_*`, docs/CONFIG.md) what expired, a
/// little at a time; by `forget` or `retention_owners`, everything about a name.
public struct StoreRetention {
    let connection: SQLiteConnection
    let statements: Statements
    let retention: Retention
    let calendar: BucketCalendar

    /// Deletes at most `limit` expired rows, oldest resolution first, in a short transaction of
    /// its own so a large backlog never holds up a save. Returns how many were deleted; call
    /// again while it returns `limit`.
    @discardableResult
    public func prune(now: Int64, limit: Int = 5000) throws(StoreError) -> Int {
        var deleted = 0
        for (resolution, cutoff) in cutoffs(now: now) where deleted < limit {
            deleted += try connection.transaction("prune") { () throws(StoreError) -> Int in
                try statements.pruneBuckets.run([.text(resolution.rawValue), .int(cutoff), .int(Int64(limit - deleted))])
                return Int(sqlite3_changes(connection.handle))
            }
        }
        if let age = retention.events, deleted < limit {
            deleted += try connection.transaction("prune") { () throws(StoreError) -> Int in
                try statements.pruneEvents.run([.double(Double(now - age)), .int(Int64(limit - deleted))])
                return Int(sqlite3_changes(connection.handle))
            }
        }
        return deleted
    }

    /// For each resolution with a limit, the bucket start before which rows expire.
    func cutoffs(now: Int64) -> [(Resolution, Int64)] {
        var result: [(Resolution, Int64)] = []
        if let age = retention.fiveMinutes { result.append((.fiveMinutes, now - age)) }
        if let age = retention.hours { result.append((.hour, now - age)) }
        if let age = retention.days { result.append((.day, now - age)) }
        // Calendar units: keep the current period and the `count - 1` before it. Month starts
        // differ per interface by at most 27 days, so step from the calendar month.
        if let count = retention.months {
            var start = calendar.start(of: .month, containing: now)
            for _ in 1..<max(count, 1) { start = calendar.start(of: .month, containing: start - 1) }
            result.append((.month, start - 28 * 86400))
        }
        if let count = retention.years {
            var start = calendar.start(of: .year, containing: now)
            for _ in 1..<max(count, 1) { start = calendar.start(of: .year, containing: start - 1) }
            result.append((.year, start))
        }
        return result
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

extension StoreRetention {
    /// Keeps `alias` (nil: none) as `name`'s, for `ifmeter alias`: in its record, made now
    /// (`at`) if it has none yet; the next save fills in the rest. `forget` deletes it with the
    /// record.
    public func setAlias(_ alias: String?, of name: String, at now: Double) throws(StoreError) {
        try connection.prepare("""
            INSERT INTO interfaces (name, kind, mac, first_seen, last_seen, alias) VALUES (?1, '', '', ?2, ?2, ?3)
            ON CONFLICT (name) DO UPDATE SET alias = excluded.alias
            """, "alias in").run([.text(name), .double(now), .optionalText(alias)])
    }
}

extension StoreRetention {
    /// The statements pruning uses, prepared at open.
    struct Statements {
        let pruneBuckets, pruneEvents: Statement

        init(_ connection: SQLiteConnection) throws(StoreError) {
            pruneBuckets = try connection.prepare("""
                DELETE FROM buckets WHERE (name, resolution, start) IN
                    (SELECT name, resolution, start FROM buckets
                     WHERE resolution = ?1 AND start < ?2 LIMIT ?3)
                """, "prune")
            pruneEvents = try connection.prepare("""
                DELETE FROM events WHERE id IN (SELECT id FROM events WHERE at < ?1 LIMIT ?2)
                """, "prune")
        }
    }
}
