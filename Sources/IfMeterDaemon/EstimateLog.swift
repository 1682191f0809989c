#if canImport(Glibc)
import IfMeterHTTP
import IfMeterPlatform
import IfMeterServer
import IfMeterCore
import Glibc
#endif

/// The estimate log: JSON Lines appended with one `write(2)` per record (so a reader never sees
/// half of one, and a crash leaves at most a torn last line), rotated by size keeping `keep`
/// older files (`estimates.jsonl.1` newest), reopened on SIGHUP for external rotation.
final class EstimateLog {
    let path: String
    var maxSize: UInt64
    var keep: Int
    private var fd: FileDescriptor?
    private var size: UInt64 = 0
    /// The last failure, reported once until writing works again.
    private(set) var failure: String?

    init(path: String, maxSize: UInt64, keep: Int) {
        self.path = path
        self.maxSize = maxSize
        self.keep = keep
        reopen()
    }

    /// Opens (again) the file at `path`, as after an external rotation.
    func reopen() {
        fd.take()?.close()
        // O_NOFOLLOW: the directory is trusted (DirectoryTrust), and a symlink left in it is
        // never a reason to append somewhere else.
        fd = FileDescriptor(adopting: open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644))
        guard let raw = fd?.rawValue else {
            report("cannot open estimate log \(path): \(Errno(errno).description)")
            return
        }
        var info = stat()
        fstat(raw, &info)
        size = UInt64(info.st_size)
        // Readable by every user (`ifmeter log` reads it directly) whatever the umask: the
        // service's UMask=0077 keeps the database and everything else private.
        if info.st_uid == geteuid() && info.st_mode & 0o777 != 0o644 { fchmod(raw, 0o644) }
        failure = nil
    }

    /// Appends one record (a complete line).
    func append(_ record: [UInt8]) {
        if size > 0 && size + UInt64(record.count) > maxSize { rotate() }
        guard let raw = fd?.rawValue else { return }
        let written = record.withUnsafeBytes { write(raw, $0.baseAddress, $0.count) }
        if written == record.count {
            size += UInt64(written)
            failure = nil
        } else {
            report("cannot write estimate log \(path): \(written < 0 ? Errno(errno).description : "short write")")
        }
    }

    private func rotate() {
        if keep == 0 {
            unlink(path)
        } else {
            unlink("\(path).\(keep)")
            for index in stride(from: keep - 1, through: 1, by: -1) {
                rename("\(path).\(index)", "\(path).\(index + 1)")
            }
            rename(path, "\(path).1")
        }
        reopen()
    }

    private func report(_ message: String) {
        if failure != message { Diagnostics.error(message) }
        failure = message
    }
}
