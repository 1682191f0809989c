import CSQLite
import IfMeterCore

/// Retention (`retention_*`, docs/CONFIG.md): what expired leaves the database a little at a time.
extension Store {
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
        if let age = configuration.retention.events, deleted < limit {
            deleted += try connection.transaction("prune") { () throws(StoreError) -> Int in
                try statements.pruneEvents.run([.double(Double(now - age)), .int(Int64(limit - deleted))])
                return Int(sqlite3_changes(connection.handle))
            }
        }
        return deleted
    }

    /// For each resolution with a limit, the bucket start before which rows expire.
    func cutoffs(now: Int64) -> [(Resolution, Int64)] {
        let retention = configuration.retention
        let calendar = configuration.calendar
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
}
