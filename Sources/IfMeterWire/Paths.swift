#if canImport(Glibc)
import Glibc
#endif

/// Where the daemon keeps (and the client finds) its config, database, socket and estimate log.
///
/// Precedence: command-line flags; systemd's `STATE_DIRECTORY`, `RUNTIME_DIRECTORY`,
/// `LOGS_DIRECTORY`, `CONFIGURATION_DIRECTORY`; then for root `/var/lib/ifmeter`,
/// `/run/ifmeter`, `/var/log/ifmeter`, `/etc/ifmeter`; for anyone else the XDG directories
/// (`$XDG_STATE_HOME/ifmeter`, `$XDG_RUNTIME_DIR/ifmeter`, `$XDG_CONFIG_HOME/ifmeter`, with the
/// log under the state directory and the socket there too when there is no runtime directory).
public struct Paths: Hashable, Sendable {
    public init(config: String, configRequired: Bool, stateDirectory: String, socket: String, logDirectory: String) {
        self.config = config
        self.configRequired = configRequired
        self.stateDirectory = stateDirectory
        self.socket = socket
        self.logDirectory = logDirectory
    }

    public var config: String
    /// False when the config path is only the default: a missing file then means defaults.
    public var configRequired: Bool
    public var stateDirectory: String
    public var socket: String
    public var logDirectory: String

    public var database: String { stateDirectory + "/" + Self.databaseName }
    /// The database's file name in the state directory.
    public static let databaseName = "ifmeter.db"
    public var log: String { logDirectory + "/" + Self.estimateLogName }
    /// The estimate log's file name; rotated files add `.1` … `.N`.
    public static let estimateLogName = "estimates.jsonl"

    /// Every environment variable the paths (and the client's socket) are found by.
    public static let environmentNames = [
        "HOME", "STATE_DIRECTORY", "RUNTIME_DIRECTORY", "LOGS_DIRECTORY", "CONFIGURATION_DIRECTORY",
        "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "IFMETER_SOCKET",
    ]

    /// The paths for `uid` in `environment`, each given path taking precedence.
    public static func resolve(
        config: String? = nil, socket: String? = nil, stateDirectory: String? = nil,
        logDirectory: String? = nil, environment: [String: String], uid: uid_t
    ) -> Paths {
        let first = { (name: String) in
            environment[name].flatMap { $0.split(separator: ":").first.map(String.init) }
        }
        let home = environment["HOME"] ?? "/"
        let root = uid == 0
        let state = stateDirectory ?? first("STATE_DIRECTORY")
            ?? (root ? "/var/lib/ifmeter" : (environment["XDG_STATE_HOME"] ?? home + "/.local/state") + "/ifmeter")
        let runtime = first("RUNTIME_DIRECTORY")
            ?? (root ? "/run/ifmeter" : environment["XDG_RUNTIME_DIR"].map { $0 + "/ifmeter" } ?? state)
        let logs = logDirectory ?? first("LOGS_DIRECTORY") ?? (root ? "/var/log/ifmeter" : state + "/log")
        let configDirectory = first("CONFIGURATION_DIRECTORY")
            ?? (root ? "/etc/ifmeter" : (environment["XDG_CONFIG_HOME"] ?? home + "/.config") + "/ifmeter")
        return Paths(
            config: config ?? configDirectory + "/ifmeterd.conf",
            configRequired: config != nil,
            stateDirectory: state,
            socket: socket ?? runtime + "/ifmeterd.sock",
            logDirectory: logs)
    }
}

/// The variables of this process's environment ifmeter reads (``Paths/environmentNames``): a
/// client starts on every command, and copying the whole environment was a tenth of its start.
public func processEnvironment() -> [String: String] {
    var result: [String: String] = [:]
    for name in Paths.environmentNames {
        if let value = getenv(name) { result[name] = String(cString: value) }
    }
    return result
}
