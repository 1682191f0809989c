#if canImport(Glibc)
import IfMeterCore
import IfMeterHistory
import Glibc
#endif

/// The writer's lock: an exclusive `flock` on `DATABASE.lock`, which holds the owner's pid for
/// the error a second writer gets. Released when the value is. The file is never deleted
/// (deleting lock files races with the next taker).
public final class StoreLock: @unchecked Sendable {
    private let fd: FileDescriptor

    public init(databasePath path: String) throws(StoreError) {
        let lockPath = path + ".lock"
        // O_NOFOLLOW: a symlink planted as the lock file would have the daemon truncate and
        // overwrite its target with a pid.
        guard let fd = FileDescriptor(adopting: open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)) else {
            throw StoreError(kind: errno == EACCES || errno == EROFS ? .readOnly : .cannotOpen,
                             path: path, operation: "open",
                             message: "cannot create lock file \(lockPath): \(Errno(errno).description)")
        }
        guard flock(fd.rawValue, LOCK_EX | LOCK_NB) == 0 else {
            let error = errno
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = read(fd.rawValue, &buffer, buffer.count)
            let pid = count > 0 ? Int32(String(decoding: buffer[..<count], as: UTF8.self)
                .filter(\.isNumber)) : nil
            guard error == EWOULDBLOCK else {
                throw StoreError(kind: .io, path: path, operation: "lock",
                                 message: "flock \(lockPath): \(Errno(error).description)")
            }
            let owner = pid.map { " (pid \($0))" } ?? ""
            throw StoreError(kind: .locked(byPID: pid), path: path, operation: "open",
                             message: "it is in use by another ifmeterd\(owner); only one may write it")
        }
        let pid = "\(getpid())\n"
        _ = ftruncate(fd.rawValue, 0)
        _ = pid.withCString { pwrite(fd.rawValue, $0, strlen($0), 0) }
        self.fd = fd
    }


    deinit {
        // Unlocked before the close (`fd`'s, after this): the lock belongs to the open file, and a
        // child being spawned on another thread holds a copy of the descriptor until its exec
        // closes it (O_CLOEXEC), so a close alone could leave the database locked against the
        // next opener a moment.
        flock(fd.rawValue, LOCK_UN)
    }
}
