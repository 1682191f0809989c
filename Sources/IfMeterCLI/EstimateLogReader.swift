import IfMeterCore
import IfMeterJSON
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// One estimate-log line as read: the record, and the line byte for byte for `--json`.
package struct LogRecord {
    var record: EstimateLogRecord
    var line: [UInt8]

    var interface: String? { record.interface }
    var time: Double { record.time }
    /// The estimate's class; an event carries none.
    var `class`: String? {
        if case .estimate(let window) = record { return window.class }
        return nil
    }
}

/// What `log` shows: records matching all of these.
struct LogFilter {
    var interfaces: [String] = []
    var interfaceClass: String?
    var from: Double?
    var to: Double?
    /// `estimate`, `event`, or an event kind (`reset`, `gap`, …).
    var kind: String?
    /// Classes learnt from estimate records, so an event (which carries none) can match `--class`.
    var classes: [String: String] = [:]

    mutating func matches(_ record: LogRecord) -> Bool {
        if let name = record.interface, let interfaceClass = record.class { classes[name] = interfaceClass }
        if !interfaces.isEmpty && !interfaces.contains(record.interface ?? "") { return false }
        if let interfaceClass, (record.class ?? record.interface.flatMap { classes[$0] }) != interfaceClass { return false }
        if let from, record.time < from { return false }
        if let to, record.time >= to { return false }
        if let kind {
            switch kind {
            case "estimate", "event": if record.record.type != kind { return false }
            default:
                guard case .event(let event) = record.record, event.kind.rawValue == kind else { return false }
            }
        }
        return true
    }
}

/// Reads the estimate log straight from its files, daemon running or not: the rotated files
/// oldest first (`estimates.jsonl.N` … `.1`), then the current one. A last line without its
/// newline is a record being written or torn by a crash: skipped (and, when following, read
/// once it is complete). Lines that are not records are counted and reported, never fatal.
package struct EstimateLogReader {
    /// The log's files in `directory`, oldest first.
    static func files(in directory: String) -> [String] {
        let name = Paths.estimateLogName
        var rotated: [Int] = []
        if let handle = opendir(directory) {
            defer { closedir(handle) }
            while let entry = readdir(handle) {
                let entryName = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                }
                if entryName.hasPrefix(name + "."), let number = Int(entryName.dropFirst(name.count + 1)), number > 0 {
                    rotated.append(number)
                }
            }
        }
        let current = directory + "/" + name
        return rotated.sorted(by: >).map { "\(current).\($0)" } + (exists(current) ? [current] : [])
    }

    private(set) var unreadable = 0

    package init() {}

    /// Splits `bytes` into complete lines, returning the records and how many bytes were used
    /// (an incomplete last line is left for later).
    package mutating func records(in bytes: [UInt8]) -> (records: [LogRecord], consumed: Int) {
        var records: [LogRecord] = []
        var lineStart = 0
        var index = 0
        while let newline = bytes[index...].firstIndex(of: UInt8(ascii: "\n")) {
            let line = Array(bytes[lineStart..<newline])
            if !line.isEmpty {
                var reader = JSONReader(line)
                if let decoded = try? EstimateLogRecord(reading: &reader), (try? reader.isAtEnd()) == true {
                    let record = LogRecord(record: decoded, line: line)
                    records.append(record)
                } else {
                    unreadable += 1
                }
            }
            index = newline + 1
            lineStart = index
        }
        return (records, lineStart)
    }

    /// Opens `paths` (a directory's files, oldest first) so that a rotation while they are
    /// being opened neither repeats nor skips a file: newest first, each file once by inode,
    /// then oldest first by modification time (a rotated file is no longer written). Files
    /// that vanish meanwhile are skipped; the rest are read from their open descriptors.
    static func open(rotated paths: [String]) throws(CLIError) -> [LogFile] {
        var files: [(file: LogFile, position: Int)] = []
        var inodes = Set<ino_t>()
        for (position, path) in paths.enumerated().reversed() {
            let file: LogFile
            do {
                file = try LogFile(path: path)
            } catch where error.status == .noInput {
                continue  // rotated away between the listing and the open
            }
            if inodes.insert(file.inode).inserted { files.append((file, position)) }
        }
        // Modification times are coarse (a clock tick): files written in the same tick keep
        // the listing's order.
        return files.sorted { ($0.file.modified, $0.position) < ($1.file.modified, $1.position) }.map(\.file)
    }

    /// Every complete record of `file`.
    mutating func read(_ file: LogFile) throws(CLIError) -> [LogRecord] {
        records(in: try file.readToEnd()).records
    }
}

/// An open log file, read incrementally; knows whether its path now names another file (rotated).
final class LogFile {
    let path: String
    let fd: FileDescriptor
    let inode: ino_t
    /// When it was last written, in nanoseconds.
    let modified: Int64

    init(path: String) throws(CLIError) {
        self.path = path
        guard let fd = FileDescriptor(adopting: open(path, O_RDONLY | O_CLOEXEC)) else {
            let code = errno
            throw CLIError(code == EACCES ? .noPermission : .noInput, "cannot read estimate log \(path): \(Errno(code).description)")
        }
        var info = stat()
        fstat(fd.rawValue, &info)
        inode = info.st_ino
        modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        self.fd = fd
    }

    /// What has been appended since the last read.
    func readToEnd() throws(CLIError) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = try valueOrErrno { read(fd.rawValue, &chunk, chunk.count) }
                .mapError { CLIError(.failure, "cannot read estimate log \(path): \($0)") }.get()
            if count == 0 { return bytes }
            bytes += chunk[..<count]
        }
    }

    /// True once the path names a different file (or none): the daemon rotated it away.
    var isReplaced: Bool {
        var info = stat()
        return stat(path, &info) != 0 || info.st_ino != inode
    }
}
