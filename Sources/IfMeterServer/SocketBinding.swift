import IfMeterPlatform
import IfMeterCore
import CSystemd
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// Binds the daemon's own listening socket. The socket's directory is trusted first
/// (the daemon's `DirectoryTrust`), so nobody else can swap the path between the steps here.
public enum SocketBinding {
    /// A socket listening at a path, and the inode the path named then.
    public struct Bound: ~Copyable {
        public let fd: FileDescriptor
        public let inode: ino_t
    }

    /// Binds and listens at `path` with `mode` and `group` set before anyone can connect.
    /// Something live at `path` is never unlinked: only a socket nobody answers on (a crashed
    /// ifmeterd's; we hold the state lock, so it is no running instance's) is replaced.
    public static func bind(path: String, mode: mode_t, group: gid_t?) throws(PlatformError) -> Bound {
        guard let address = UnixSocketAddress(path: path) else {
            throw PlatformError(.configuration, "socket path \(path) is longer than \(UnixSocketAddress.maximumPathLength) bytes")
        }
        var existing = stat()
        if lstat(path, &existing) == 0 {
            guard existing.st_mode & S_IFMT == S_IFSOCK else {
                throw PlatformError(.cannotCreate, "\(path) exists and is not a socket; remove it or choose another --socket")
            }
            if answers(address) {
                throw PlatformError(.unavailable, "another process (another ifmeterd?) is listening on \(path); stop it or choose another --socket")
            }
            unlink(path)
        }
        guard let fd = FileDescriptor(adopting: socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)) else {
            throw PlatformError.system("socket", errno)
        }
        let bound = address.withSockaddr { Glibc.bind(fd.rawValue, $0, $1) }
        let bindError = errno
        guard bound == 0 else {
            throw PlatformError(.cannotCreate, "cannot bind \(path): \(Errno(bindError).description)",
                              call: "bind", errno: bindError)
        }
        // Mode and group are set before listen: until then nobody can connect, whatever the file
        // allows. Not through the umask around bind: the umask is the whole process's, and a
        // file another thread created meanwhile would get the socket's mode (in the test
        // process, whose tests run the server beside others, directories came out 0600).
        guard chmod(path, mode) == 0 else {
            let error = errno
            unlink(path)
            throw PlatformError(.noPermission, "cannot set the mode of \(path): \(Errno(error).description)",
                              call: "chmod", errno: error)
        }
        var info = stat()
        // lchown never follows a link (the directory is trusted, so the socket is ours).
        guard lstat(path, &info) == 0, (group.map { lchown(path, uid_t.max, $0) } ?? 0) == 0 else {
            let error = errno
            unlink(path)
            throw PlatformError(.noPermission, "cannot set the group of \(path): \(Errno(error).description)",
                              call: "lchown", errno: error)
        }
        guard listen(fd.rawValue, 128) == 0 else {
            let error = errno
            unlink(path)
            throw PlatformError.system("listen", error)
        }
        return Bound(fd: fd, inode: info.st_ino)
    }

    /// Whether a process accepts connections at `address` now.
    private static func answers(_ address: UnixSocketAddress) -> Bool {
        guard let probe = FileDescriptor(adopting: socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)) else {
            return false
        }
        let connected = address.withSockaddr { connect(probe.rawValue, $0, $1) }
        // EAGAIN: the backlog is full, so someone is listening.
        return connected == 0 || errno == EAGAIN
    }
}
