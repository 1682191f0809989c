import IfMeterHTTP
import IfMeterPlatform
import IfMeterServer
import IfMeterCore
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

extension Paths {
    /// The daemon's paths: its flags first, then the environment (``Paths/resolve(config:socket:stateDirectory:logDirectory:environment:uid:)``).
    public static func resolve(options: DaemonOptions, environment: [String: String], uid: uid_t) -> Paths {
        resolve(config: options.configPath, socket: options.socketPath, stateDirectory: options.stateDirectory,
                logDirectory: options.logDirectory, environment: environment, uid: uid)
    }
}

/// Creates `path` and its missing parents with `mode`; an existing directory is fine.
func makeDirectories(_ path: String, mode: mode_t) throws(PlatformError) {
    var current = path.hasPrefix("/") ? "" : "."
    for component in path.split(separator: "/") {
        current += "/" + component
        if mkdir(current, mode) != 0 && errno != EEXIST {
            throw PlatformError(.cannotCreate, "cannot create directory \(current): \(Errno(errno).description)")
        }
    }
    var info = stat()
    guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
        throw PlatformError(.cannotCreate, "\(path) exists but is not a directory")
    }
}
