import IfMeterCore
#if canImport(Glibc)
import Glibc
#endif

/// OpenSSH's StrictModes for the directories ifmeter writes in: ifmeterd's state, log and
/// socket directories, and `ifmeter notify`'s state directory. One another user could write
/// to (or swap) is refused, never used, because whoever can write there can point what is
/// written (a lock, a database, a log, a socket, a state file) at a file of their choosing.
public enum DirectoryTrust {
    /// Why a directory was not used.
    public struct Refusal: Error, Sendable {
        public enum Kind: Sendable {
            /// It could not be resolved or looked at.
            case unchecked
            /// Another user could write to it, or to a directory above it.
            case untrusted
        }
        public var kind: Kind
        public var message: String
    }

    /// Throws unless `path` and every directory above it are owned by root or by this
    /// process's user and writable by no one else. Above `path`, a directory writable by
    /// others is accepted only with the sticky bit (`/tmp`): nobody else can rename within it.
    /// Symlinks on the way are followed (systemd's `DynamicUser` makes `/var/lib/ifmeter`
    /// one) and the directories they lead to are the ones checked. `role` names the directory
    /// in messages ("state", "log") and `program` the one that writes there. Returns the real
    /// path.
    @discardableResult
    public static func check(_ path: String, role: String, program: String) throws(Refusal) -> String {
        guard let resolved = realpath(path, nil) else {
            throw Refusal(kind: .unchecked, message: "cannot resolve the \(role) directory \(path): \(Errno(errno).description)")
        }
        let real = String(cString: resolved)
        free(resolved)
        let user = geteuid()
        var prefixes: [String] = []
        var current = ""
        for component in real.split(separator: "/") {
            current += "/" + component
            prefixes.append(current)
        }
        for (index, directory) in (["/"] + prefixes).enumerated() {
            var info = stat()
            guard stat(directory, &info) == 0 else {
                throw Refusal(kind: .unchecked, message: "cannot check the \(role) directory \(directory): \(Errno(errno).description)")
            }
            let isTarget = index == prefixes.count
            if info.st_uid != 0 && info.st_uid != user {
                throw Refusal(kind: .untrusted, message: "refusing the \(role) directory \(path): \(directory) belongs to uid "
                    + "\(info.st_uid), not to root or \(program)'s user (uid \(user)); another user could replace what \(program) "
                    + "writes there")
            }
            let othersWrite = info.st_mode & (S_IWGRP | S_IWOTH) != 0
            let sticky = info.st_mode & S_ISVTX != 0
            if othersWrite && (isTarget || !sticky) {
                throw Refusal(kind: .untrusted, message: "refusing the \(role) directory \(path): \(directory) is writable by group "
                    + "or others (mode \(String(info.st_mode & 0o7777, radix: 8))); chmod go-w \(directory)")
            }
        }
        return real
    }
}
