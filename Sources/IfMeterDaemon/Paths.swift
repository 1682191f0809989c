#if canImport(Glibc)
import Glibc
#endif

/// Where the daemon keeps its config, database, socket and estimate log.
///
/// Precedence: command-line flags; systemd's `STATE_DIRECTORY`, `RUNTIME_DIRECTORY`,
/// `LOGS_DIRECTORY`, `CONFIGURATION_DIRECTORY`; then for root `/var/lib/ifmeter`,
/// `/run/ifmeter`, `/var/log/ifmeter`, `/etc/ifmeter`; for anyone else the XDG directories
/// (`$XDG_STATE_HOME/ifmeter`, `$XDG_RUNTIME_DIR/ifmeter`, `$XDG_CONFIG_HOME/ifmeter`, with the
/// log under the state directory and the socket there too when there is no runtime directory).
public struct Paths: Hashable, Sendable {
    public var config: String
    /// False when the config path is only the default: a missing file then means defaults.
    public var configRequired: Bool
    public var stateDirectory: String
    public var socket: String
    public var logDirectory: String

    public var database: String { stateDirectory + "/ifmeter.db" }
    public var log: String { logDirectory + "/estimates.jsonl" }

    public static func resolve(
        options: DaemonOptions, environment: [String: String], uid: uid_t
    ) -> Paths {
        let first = { (name: String) in
            environment[name].flatMap { $0.split(separator: ":").first.map(String.init) }
        }
        let home = environment["HOME"] ?? "/"
        let root = uid == 0
        let state = options.stateDirectory ?? first("STATE_DIRECTORY")
            ?? (root ? "/var/lib/ifmeter" : (environment["XDG_STATE_HOME"] ?? home + "/.local/state") + "/ifmeter")
        let runtime = first("RUNTIME_DIRECTORY")
            ?? (root ? "/run/ifmeter" : environment["XDG_RUNTIME_DIR"].map { $0 + "/ifmeter" } ?? state)
        let logs = options.logDirectory ?? first("LOGS_DIRECTORY") ?? (root ? "/var/log/ifmeter" : state + "/log")
        let configDirectory = first("CONFIGURATION_DIRECTORY")
            ?? (root ? "/etc/ifmeter" : (environment["XDG_CONFIG_HOME"] ?? home + "/.config") + "/ifmeter")
        return Paths(
            config: options.configPath ?? configDirectory + "/ifmeterd.conf",
            configRequired: options.configPath != nil,
            stateDirectory: state,
            socket: options.socketPath ?? runtime + "/ifmeterd.sock",
            logDirectory: logs)
    }
}

/// Creates `path` and its missing parents with `mode`; an existing directory is fine.
func makeDirectories(_ path: String, mode: mode_t) throws(DaemonError) {
    var current = path.hasPrefix("/") ? "" : "."
    for component in path.split(separator: "/") {
        current += "/" + component
        if mkdir(current, mode) != 0 && errno != EEXIST {
            throw DaemonError("cannot create directory \(current): \(String(cString: strerror(errno)))")
        }
    }
    var info = stat()
    guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
        throw DaemonError("\(path) exists but is not a directory")
    }
}
