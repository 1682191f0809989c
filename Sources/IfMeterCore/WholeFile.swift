#if canImport(Glibc)
import Glibc
#endif

/// Reading a whole file into memory, bounded: the one read loop (an interrupted read is
/// retried by ``valueOrErrno(retryOnInterrupt:_:)``), for config files, state files, sysfs and
/// /proc. /proc files report size 0, so the file is read to its end, never by its size.
public enum WholeFile {
    /// Why a file was not read.
    public struct Failure: Error, Hashable, Sendable, CustomStringConvertible {
        public enum Reason: Hashable, Sendable {
            case open(Errno)
            case read(Errno)
            /// More than the limit the caller set.
            case tooLarge(limit: Int)
            /// A directory, FIFO, device or socket where a regular file was asked for.
            case notRegularFile
        }

        public var reason: Reason

        /// The file does not exist.
        public var isMissing: Bool { reason == .open(Errno(ENOENT)) }

        public var description: String {
            switch reason {
            case .open(let error), .read(let error): error.description
            case .tooLarge(let limit): "larger than \(limit) bytes"
            case .notRegularFile: "not a regular file"
            }
        }
    }

    /// The bytes of `path`, at most `limit` of them.
    /// - Parameter regularOnly: refuse anything but a regular file, and a symbolic link as the
    ///   last component (a file another user may write to, such as a runtime's state): opened
    ///   without following it and without blocking, so a FIFO planted there cannot hold the reader.
    public static func read(_ path: String, limit: Int, regularOnly: Bool = false) throws(Failure) -> [UInt8] {
        let flags = O_RDONLY | O_CLOEXEC | (regularOnly ? O_NOFOLLOW | O_NONBLOCK : 0)
        guard let fd = FileDescriptor(adopting: retryingEINTR { open(path, flags) }) else {
            throw Failure(reason: .open(.current))
        }
        if regularOnly {
            var status = stat()
            guard fstat(fd.rawValue, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { throw Failure(reason: .notRegularFile) }
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: min(limit + 1, 64 * 1024))
        while true {
            let count = try valueOrErrno { Glibc.read(fd.rawValue, &chunk, chunk.count) }.mapError { Failure(reason: .read($0)) }.get()
            if count == 0 { return bytes }
            bytes += chunk[..<count]
            guard bytes.count <= limit else { throw Failure(reason: .tooLarge(limit: limit)) }
        }
    }
}
