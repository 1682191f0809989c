import IfMeterCore
#if canImport(Glibc)
import Glibc
#endif

/// A state file read again only when it changed (inode, size or modification time).
struct CachedFile<Value> {
    private var stamp: (UInt64, Int64, Int64, Int)?
    private(set) var value: Value?

    /// The file's value, parsed again only when it changed; nil when it is not there, or when
    /// `rootOwned` and it is not a regular file root owns (not followed if it is a link).
    mutating func read(_ path: String, limit: Int = StateFile.limit, rootOwned: Bool = false, _ parse: ([UInt8]) -> Value) -> Value? {
        var status = stat()
        guard rootOwned ? lstat(path, &status) == 0 && status.st_uid == 0 && status.st_mode & S_IFMT == S_IFREG
                        : stat(path, &status) == 0 else {
            (stamp, value) = (nil, nil)
            return nil
        }
        let now = (UInt64(status.st_ino), Int64(status.st_size), Int64(status.st_mtim.tv_sec), status.st_mtim.tv_nsec)
        if let stamp, stamp == now, let value { return value }
        guard let bytes = StateFile.read(path, limit: limit) else { return nil }
        (stamp, value) = (now, parse(bytes))
        return value
    }
}

/// Reading a runtime's state file: a regular file only, at most `limit` bytes.
enum StateFile {
    static let limit = 16 << 20

    static func read(_ path: String, limit: Int = limit) -> [UInt8]? {
        try? WholeFile.read(path, limit: limit, regularOnly: true)
    }
}
