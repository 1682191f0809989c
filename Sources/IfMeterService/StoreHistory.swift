import IfMeterCore
import IfMeterStore

extension Store {
    /// Everything the meter service starts from: the meter state, every name's total and
    /// record, and when link events were lost.
    public func loadHistory() throws(StoreError) -> ServiceHistory {
        let meter = try loadMeter()
        return ServiceHistory(
            meterState: meter.state, knownNames: meter.knownNames, totals: try totals().mapValues(\.tally),
            interfaces: try interfaces(), eventsLostAt: try events(kind: .eventsLost, limit: 100_000).map(\.at))
    }
}

extension Store {
    /// Writes `batch` (its pending writes and every present link's record) in one transaction.
    public func save(_ batch: inout SaveBatch) throws(StoreError) {
        let records = batch.presentRecords
        try save(&batch.writes, recording: records)
    }
}
