#if canImport(Glibc)
import IfMeterHTTP
import IfMeterPlatform
import IfMeterServer
import IfMeterCore
import Glibc
#endif

/// OpenSSH's StrictModes for the daemon's directories: a state, log or socket directory
/// another user could write to (or swap) is refused, never used, because whoever can write
/// there can point the daemon's lock, database, log or socket at a file of their choosing.
enum DirectoryTrust {
    /// Throws unless `path` and every directory above it are owned by root or by this
    /// process's user and writable by no one else. Above `path`, a directory writable by
    /// others is accepted only with the sticky bit (`/tmp`): nobody else can rename within it.
    /// Symlinks on the way are followed (systemd's `DynamicUser` makes `/var/lib/ifmeter`
    /// one) and the directories they lead to are the ones checked. Returns the real path.
    @discardableResult
    static func check(_ path: String, role: String) throws(DaemonError) -> String {
        guard let resolved = realpath(path, nil) else {
            throw DaemonError(.cannotCreate, "cannot resolve the \(role) directory \(path): \(Errno(errno).description)")
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
                throw DaemonError(.cannotCreate, "cannot check the \(role) directory \(directory): \(Errno(errno).description)")
            }
            let isTarget = index == prefixes.count
            if info.st_uid != 0 && info.st_uid != user {
                throw DaemonError(.configuration, "refusing the \(role) directory \(path): \(directory) belongs to uid \(info.st_uid), "
                    + "not to root or ifmeterd's user (uid \(user)); another user could replace what ifmeterd writes there")
            }
            let othersWrite = info.st_mode & (S_IWGRP | S_IWOTH) != 0
            let sticky = info.st_mode & S_ISVTX != 0
            if othersWrite && (isTarget || !sticky) {
                throw DaemonError(.configuration, "refusing the \(role) directory \(path): \(directory) is writable by group or others "
                    + "(mode \(String(info.st_mode & 0o7777, radix: 8))); chmod go-w \(directory)")
            }
        }
        return real
    }

}
