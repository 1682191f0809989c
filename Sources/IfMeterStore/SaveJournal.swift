import CZlib
import IfMeterCore
import IfMeterHistory
#if canImport(Glibc)
import Glibc
#endif

/// The file beside the database that keeps the loss bound between folds (docs/CONFIG.md,
/// `fold_interval`): a save that only carries traffic appends the meter's deltas here
/// (``JournalRecord``, a few dozen bytes a link, made durable with `fdatasync`) instead of
/// rewriting every link's buckets in the database; a full save folds everything into the
/// buckets and then starts the file afresh. A daemon killed between two folds reads the records
/// back at start and counts them again.
///
/// Layout: `IFMJRNL1`, then the database's save sequence the records follow (8 bytes, little
/// endian); then records, each its length and zlib's crc32 of it (4 bytes each) and its bytes.
/// Records that follow another save (the database moved on, a crash came before the file was
/// started afresh) are not read; a record cut short or whose sum is wrong ends the reading
/// (a crash during an append).
public final class SaveJournal {
    public let path: String
    private let fd: Int32
    /// The database save the records follow.
    public private(set) var sequence: Int64
    /// The file's length: where the next record goes.
    private var end: Int

    static let magic = Array("IFMJRNL1".utf8)
    static let headerBytes = 16
    /// Longest record read back: a save of 100,000 links is a few MB.
    static let maximumRecordBytes = 64 << 20
    /// Longest file read back; a longer one (not ours) is started afresh.
    static let maximumFileBytes = 1 << 30

    /// What reading the file at start found.
    public struct Reading: Sendable {
        /// The records that follow the database's last save, in order.
        public var records: [JournalRecord]
        /// What was left out and why, for the journal of the daemon; nil when nothing was.
        public var note: String?
    }

    /// Opens (creating, mode 0600, never through a symbolic link) the journal at `path` and
    /// reads the records that follow database save `sequence`.
    public static func open(path: String, sequence: Int64) throws(StoreError) -> (SaveJournal, Reading) {
        let fd = retryingEINTR { Glibc.open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600) }
        guard fd >= 0 else { throw failure(path, "open", errno) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            Glibc.close(fd)
            throw StoreError(kind: .cannotOpen, path: path, operation: "open", message: "not a regular file")
        }
        let journal = SaveJournal(path: path, fd: fd, sequence: -1, end: Int(status.st_size))
        var reading = Reading(records: [], note: nil)
        guard status.st_size > 0 else { return (journal, reading) }
        guard status.st_size <= maximumFileBytes else {
            reading.note = "\(path): larger than 1 GiB, not read"
            return (journal, reading)
        }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        let read = bytes.withUnsafeMutableBytes { buffer in retryingEINTR { pread(fd, buffer.baseAddress, buffer.count, 0) } }
        guard read == bytes.count else { throw failure(path, "read", read < 0 ? errno : EIO) }
        reading = parse(bytes, following: sequence, path: path)
        return (journal, reading)
    }

    private init(path: String, fd: Int32, sequence: Int64, end: Int) {
        (self.path, self.fd, self.sequence, self.end) = (path, fd, sequence, end)
    }

    deinit { Glibc.close(fd) }

    /// The records of `bytes` that follow save `sequence`; pure, for tests and fuzzing.
    public static func parse(_ bytes: [UInt8], following sequence: Int64, path: String = "journal") -> Reading {
        guard bytes.count >= headerBytes, Array(bytes[0..<8]) == magic else {
            return Reading(records: [], note: "\(path): not a save journal, not read")
        }
        guard littleEndian(bytes, at: 8, count: 8) == UInt64(bitPattern: sequence) else {
            // Written before the database's last save: all of it is in the database already.
            return Reading(records: [], note: nil)
        }
        var records: [JournalRecord] = []
        var offset = headerBytes
        while offset < bytes.count {
            guard bytes.count - offset >= 8 else { return cut(records, path, offset, "a record's header cut short") }
            let length = Int(littleEndian(bytes, at: offset, count: 4))
            let sum = UInt32(littleEndian(bytes, at: offset + 4, count: 4))
            let start = offset + 8
            guard length <= maximumRecordBytes, bytes.count - start >= length else {
                return cut(records, path, offset, "a record cut short")
            }
            guard checksum(bytes[start..<start + length]) == sum else { return cut(records, path, offset, "a record's checksum is wrong") }
            do {
                records.append(try JournalRecord(decoding: bytes[start..<start + length]))
            } catch {
                return cut(records, path, offset, "a record does not read: \(error)")
            }
            offset = start + length
        }
        return Reading(records: records, note: nil)
    }

    private static func cut(_ records: [JournalRecord], _ path: String, _ offset: Int, _ why: String) -> Reading {
        Reading(records: records, note: "\(path): \(why) at byte \(offset); the \(records.count) record(s) before it are counted")
    }

    /// Starts the file afresh after database save `sequence`, durably: what it held is in the
    /// database now.
    public func reset(sequence: Int64) throws(StoreError) {
        var header = Self.magic
        withUnsafeBytes(of: UInt64(bitPattern: sequence).littleEndian) { header.append(contentsOf: $0) }
        guard retryingEINTR({ ftruncate(fd, 0) }) == 0 else { throw Self.failure(path, "truncate", errno) }
        end = 0
        self.sequence = -1
        try write(header, at: 0)
        end = header.count
        self.sequence = sequence
    }

    /// Appends `record`, durably; it follows the save the file was last started after. On a
    /// failure the file is cut back to what it held.
    public func append(_ record: JournalRecord) throws(StoreError) {
        let payload = record.encoded()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(payload.count + 8)
        withUnsafeBytes(of: UInt32(payload.count).littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: Self.checksum(payload[...]).littleEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: payload)
        do {
            try write(bytes, at: end)
        } catch {
            _ = retryingEINTR { ftruncate(fd, off_t(end)) }
            throw error
        }
        end += bytes.count
    }

    private func write(_ bytes: [UInt8], at offset: Int) throws(StoreError) {
        var done = 0
        while done < bytes.count {
            let wrote = bytes.withUnsafeBytes { buffer in
                retryingEINTR { pwrite(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done)) }
            }
            guard wrote > 0 else { throw Self.failure(path, "write", wrote < 0 ? errno : EIO) }
            done += wrote
        }
        guard retryingEINTR({ fdatasync(fd) }) == 0 else { throw Self.failure(path, "write", errno) }
    }

    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.withUnsafeBufferPointer { buffer in UInt32(crc32(0, buffer.baseAddress, uInt(buffer.count))) }
    }

    private static func littleEndian(_ bytes: [UInt8], at offset: Int, count: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<count { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
        return value
    }

    private static func failure(_ path: String, _ operation: String, _ code: Int32) -> StoreError {
        let kind: StoreError.Kind = switch code {
        case ENOSPC, EDQUOT: .full
        case EROFS, EACCES, EPERM: .readOnly
        case EIO: .io
        default: .other
        }
        return StoreError(kind: kind, path: path, operation: operation, message: String(cString: strerror(code)))
    }
}
