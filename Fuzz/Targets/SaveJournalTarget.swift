import IfMeterHistory
import IfMeterStore

extension FuzzTargets {
    // MARK: save-journal

    /// The save journal as a crash or a hand may have left it (docs/CONFIG.md, `fold_interval`):
    /// the whole file, following the save its header names, and the bytes as one record.
    /// Invariants: no trap; every record read writes back and reads back the same; no more
    /// records than the file has room for.
    public static func saveJournal(_ bytes: [UInt8]) {
        var sequence: UInt64 = 0
        if bytes.count >= 16 {
            for index in 0..<8 { sequence |= UInt64(bytes[8 + index]) << (8 * UInt64(index)) }
        }
        let reading = SaveJournal.parse(bytes, following: Int64(bitPattern: sequence))
        guard reading.records.count <= bytes.count / 8 else { fatalError("more records than the file has room for") }
        for record in reading.records { roundTrip(record) }
        if let record = try? JournalRecord(decoding: bytes[...]) { roundTrip(record) }
    }

    private static func roundTrip(_ record: JournalRecord) {
        guard (try? JournalRecord(decoding: record.encoded()[...])) == record else { fatalError("a record does not read back") }
    }
}
