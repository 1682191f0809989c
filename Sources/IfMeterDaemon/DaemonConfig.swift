import IfMeterPlans
import IfMeterHTTP
import IfMeterPlatform
import IfMeterServer
import IfMeterCore
import IfMeterHistory
import IfMeterOwners
import IfMeterService
import IfMeterStore
#if canImport(Glibc)
import Glibc
#endif

/// Everything `ifmeterd.conf` can set, with its defaults (docs/CONFIG.md lists each key).
public struct DaemonConfig: Hashable, Sendable {
    /// Where `/metrics` listens; nil: no HTTP endpoint unless systemd passes one.
    public var metricsListen: MetricsAddress?
    /// `Host` names the HTTP listener answers besides its own name, `localhost` and addresses
    /// (``HostAllowList``); `*`: any.
    public var httpAllowedHosts: [String] = []
    /// Seconds a name absent from the system stays in the metrics exposition.
    public var metricsKeepAbsent: UInt64 = 86400
    public var interval: UInt64 = 30
    /// Seconds between saves to the database.
    public var saveInterval: UInt64 = 60
    /// Seconds between folds into the buckets; saves between them append to the save journal
    /// (docs/CONFIG.md). 0 folds at every save.
    public var foldInterval: UInt64 = 900
    public var timeZone: BucketCalendar.Zone = .local
    public var monthStartDay = 1
    public var monthStartDays: [String: Int] = [:]
    /// Interfaces' aliases, name → alias (`alias[NAME]`); they win over `ifmeter alias`'s.
    public var aliases: [String: String] = [:]
    /// Bytes per second no interface can exceed (rule 7); nil: none.
    public var maxBytesPerSecond: UInt64?
    public var speedMargin = 2.0
    public var rules: [ClassRule] = []
    public var retention = Retention()
    /// The estimate log rotates past this many bytes.
    public var logMaxSize: UInt64 = 10 << 20
    /// Rotated estimate log files kept besides the current one.
    public var logFiles = 5
    public var socketMode: mode_t = 0o666
    public var socketGroup: gid_t?
    /// Members may run admin commands (`reload`, `forget`), besides root.
    public var adminGroup: gid_t?
    public var maxLineLength = 65536
    /// Clients connected at once, all users together.
    public var maxClients = 512
    /// Clients one uid may have connected at once (dbus-daemon's `max_connections_per_user`).
    public var maxClientsPerUID = 64
    /// Of `maxClients`, the slots only root, ifmeterd's user and `admin_group` may take, so
    /// other users together can never lock them out.
    public var adminReservedClients = 16
    /// Unsent output one client may have queued before it is cut off.
    public var clientBuffer = 1 << 20
    /// Seconds a client may stay silent (watchers excepted).
    public var idleTimeout: UInt64 = 300
    /// Data plans the daemon keeps watch over (docs/PLANS.md), in the order first named.
    public var plans: [Plan] = []
    /// Which host-side veths count as their container's or namespace's (docs/NAMESPACES.md);
    /// nil: none.
    public var attributeOwners: Attribution.Scope? = .containers
    /// Seconds a link into a namespace its runtime is still setting up waits to be named.
    public var ownerGrace: UInt64 = 10
    /// Whether interfaces' traffic is split between NetworkManager's networks (docs/NETWORKS.md).
    public var networks = true
    /// Whether applications are counted by cgroup from the pinned maps in ``appsPins``
    /// (docs/APPS.md).
    public var apps = true
    /// Where `ifmeterd --attach-apps` pins the application counter's maps, and the daemon
    /// reads them.
    public var appsPins = "/sys/fs/bpf/ifmeter"
    /// How many (cgroup, link) entries the counting map holds, fixed by `--attach-apps`.
    public var appsMapEntries: UInt32 = 65536
    /// `local_prefixes` and `attach_socket` (docs/SCOPES.md).
    public var scopes = ScopeSettings()
    /// Networks are kept and shown under a name made from their UUID, never their id or SSID.
    public var hideNetworkNames = false
    /// Bound namespaces (`/run/netns/NAME`) metered from inside, their links `netns:NAME/IFACE`
    /// (docs/NAMESPACES.md; needs docs/examples/meter-inside.conf under systemd).
    public var meterInside: [String] = []
    /// Where the container runtimes keep their state, for naming containers: Docker's
    /// `data-root` and `exec-root` (`/etc/docker/daemon.json`) and Podman's graph root.
    public var dockerRoot = "/var/lib/docker"
    public var dockerExecRoot = "/run/docker"
    public var podmanStorage = "/var/lib/containers/storage"
    /// libcni's cache directory (`CacheDir`), whose `results` name a node's pods.
    public var cniCacheDirectory = "/var/lib/cni"

    /// Link names each `meter_inside` namespace may have subjects for: root inside can create
    /// links at will, and each new name would be a history of its own for good.
    public var meterInsideNames = 256

    public init() {}

    public var historyConfiguration: HistoryConfiguration {
        var configuration = HistoryConfiguration()
        configuration.calendar = BucketCalendar(zone: timeZone)
        configuration.retention = retention
        configuration.defaultMonthStartDay = monthStartDay
        configuration.monthStartDays = monthStartDays
        return configuration
    }

    /// What the meter service is configured with.
    public var serviceConfiguration: ServiceConfiguration {
        var configuration = ServiceConfiguration(meter: meterConfiguration, classifier: Classifier(rules: rules),
                                                 store: historyConfiguration, plans: plans)
        configuration.insideNamesLimit = meterInsideNames
        configuration.networks = networks
        configuration.hideNetworkNames = hideNetworkNames
        configuration.aliases = aliases
        return configuration
    }

    // MARK: Parsing

    /// Reads a config file. A missing file is the defaults only if `required` is false.
    public static func load(path: String, required: Bool) throws(ConfigError) -> DaemonConfig {
        let bytes: [UInt8]
        do {
            bytes = try WholeFile.read(path, limit: 1 << 20)
        } catch {
            if error.isMissing && !required { return DaemonConfig() }
            if case .tooLarge = error.reason {
                throw ConfigError(file: path, line: nil, message: "larger than 1 MiB; is this the right file?")
            }
            throw ConfigError(file: path, line: nil, message: "cannot read: \(error)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ConfigError(file: path, line: nil, message: "not UTF-8 text")
        }
        return try parse(text, file: path)
    }

    /// Parses `key = value` lines; `#` starts a comment. Every problem names file and line.
    public static func parse(_ text: String, file: String) throws(ConfigError) -> DaemonConfig {
        var config = DaemonConfig()
        var plans = PlanDrafts()
        // "\r\n" is one Character, which equals no "\n": a file with CRLF line ends was one line,
        // and all of it a comment when its first line was one.
        let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
        for (index, rawLine) in lines.enumerated() {
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
            let trimmed = line.trimmingSpaces()
            if trimmed.isEmpty { continue }
            let fail = { (message: String) in ConfigError(file: file, line: index + 1, message: message) }
            guard let equals = trimmed.firstIndex(of: "=") else {
                throw fail("expected KEY = VALUE, got \"\(trimmed)\"")
            }
            let key = trimmed[..<equals].trimmingSpaces()
            let value = trimmed[trimmed.index(after: equals)...].trimmingSpaces()
            do {
                if key.hasPrefix("plan[") {
                    try plans.set(key: key, value: value, line: index + 1)
                } else {
                    try config.set(key: key, value: value)
                }
            } catch {
                throw fail(error.description)
            }
        }
        config.plans = try plans.plans(monthStartDay: config.monthStartDay, monthStartDays: config.monthStartDays,
                                       retention: config.retention, file: file)
        for plan in config.plans where plan.countsNetworks {
            guard config.networks else {
                throw ConfigError(file: file, line: nil, message: "plan[\(plan.name)] counts networks, but networks = no reads none; "
                    + "set networks = yes or name interfaces")
            }
            // Hidden, a network is named network-XXXXXXXX: an id or SSID would never match.
            for case .network(let text) in plan.selectors where config.hideNetworkNames && !Network.isUUID(text)
                && !(text.hasPrefix("network-") && text.utf8.count == 16) {
                throw ConfigError(file: file, line: nil, message: "plan[\(plan.name)].network = \(text) can never match: with "
                    + "network_names = hidden networks are named by their UUID (network-XXXXXXXX, or the UUID itself)")
            }
        }
        guard config.adminReservedClients < config.maxClients else {
            throw ConfigError(file: file, line: nil, message: "admin_reserved_clients (\(config.adminReservedClients)) "
                + "must be less than max_clients (\(config.maxClients)), or no other user could connect")
        }
        return config
    }

    /// Applies one setting; the error says what was wrong with it.
    mutating func set(key: String, value: String) throws(ValueError) {
        if try setAlias(key: key, value: value) { return }
        if try setScopes(key: key, value: value) { return }
        if key.hasPrefix("month_start_day[") && key.hasSuffix("]") {
            let name = String(key.dropFirst("month_start_day[".count).dropLast())
            guard !name.isEmpty else { throw ValueError("month_start_day[…] needs an interface name") }
            monthStartDays[name] = try Self.integer(value, key: key, in: 1...28)
            return
        }
        switch key {
        case "interval": interval = UInt64(try Self.seconds(value, key: key, in: Self.acceptedInterval))
        case "save_interval": saveInterval = UInt64(try Self.seconds(value, key: key, in: Self.acceptedSaveInterval))
        case "fold_interval": foldInterval = UInt64(try Self.seconds(value, key: key, in: 0...86400))
        case "time_zone":
            switch value {
            case "local": timeZone = .local
            case "utc", "UTC": timeZone = .utc
            default: throw ValueError("time_zone: expected local or utc, got \"\(value)\"")
            }
        case "month_start_day": monthStartDay = try Self.integer(value, key: key, in: 1...28)
        case "max_bandwidth":
            let rate = try Self.bandwidth(value, key: key)
            maxBytesPerSecond = rate == 0 ? nil : rate
        case "speed_margin":
            guard let margin = Double(value), (1...1000).contains(margin) else {
                throw ValueError("speed_margin: expected a number from 1 to 1000, got \"\(value)\"")
            }
            speedMargin = margin
        case "classify":
            do {
                rules.append(try ClassRule(parsing: value))
            } catch {
                throw ValueError("classify: \(error)")
            }
        case "retention_5min": retention.fiveMinutes = try Self.optionalSeconds(value, key: key)
        case "retention_hour": retention.hours = try Self.optionalSeconds(value, key: key)
        case "retention_day": retention.days = try Self.optionalSeconds(value, key: key)
        case "retention_month": retention.months = try Self.optionalCount(value, key: key, in: 1...1200)
        case "retention_year": retention.years = try Self.optionalCount(value, key: key, in: 1...100)
        case "retention_events": retention.events = try Self.optionalSeconds(value, key: key)
        case "retention_owners": retention.owners = try Self.optionalSeconds(value, key: key)
        case "log_max_size": logMaxSize = try Self.size(value, key: key, in: 4096...(1 << 40))
        case "log_files": logFiles = try Self.integer(value, key: key, in: 0...1000)
        case "socket_mode":
            guard let mode = mode_t(value, radix: 8), mode <= 0o777 else {
                throw ValueError("socket_mode: expected octal permissions such as 0660, got \"\(value)\"")
            }
            socketMode = mode
        case "socket_group": socketGroup = try Self.group(value, key: key)
        case "admin_group": adminGroup = try Self.group(value, key: key)
        case "max_line_length": maxLineLength = Int(try Self.size(value, key: key, in: 256...(16 << 20)))
        case "max_clients": maxClients = try Self.integer(value, key: key, in: 1...65536)
        case "max_clients_per_uid": maxClientsPerUID = try Self.integer(value, key: key, in: 1...65536)
        case "admin_reserved_clients": adminReservedClients = try Self.integer(value, key: key, in: 0...1024)
        case "client_buffer": clientBuffer = Int(try Self.size(value, key: key, in: 4096...(1 << 30)))
        case "idle_timeout": idleTimeout = UInt64(try Self.seconds(value, key: key, in: 1...(7 * 86400)))
        case "metrics_listen":
            do {
                metricsListen = try MetricsAddress(parsing: value)
            } catch {
                throw ValueError("metrics_listen: \(error)")
            }
        case "http_allowed_hosts":
            // Lines add up, as classify's do.
            let entries = httpAllowedHosts + value.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }).map(String.init)
            guard entries.count <= 256 else { throw ValueError("http_allowed_hosts: at most 256 names in all, got \(entries.count)") }
            do {
                _ = try HostAllowList(hostName: nil, configured: entries)
            } catch {
                throw ValueError("http_allowed_hosts: \(error)")
            }
            httpAllowedHosts = entries
        case "networks":
            guard value == "yes" || value == "no" else { throw ValueError("networks: expected yes or no, got \"\(value)\"") }
            networks = value == "yes"
        case "apps":
            guard value == "yes" || value == "no" else { throw ValueError("apps: expected yes or no, got \"\(value)\"") }
            apps = value == "yes"
        case "apps_pins": appsPins = try Self.directory(value, key: key)
        case "apps_map_entries": appsMapEntries = UInt32(try Self.integer(value, key: key, in: 1024...(1 << 22)))
        case "network_names":
            guard value == "shown" || value == "hidden" else {
                throw ValueError("network_names: expected shown or hidden, got \"\(value)\"")
            }
            hideNetworkNames = value == "hidden"
        case "attribute_owners":
            if value == "no" {
                attributeOwners = nil
            } else if let scope = Attribution.Scope(rawValue: value) {
                attributeOwners = scope
            } else {
                throw ValueError("attribute_owners: expected containers, all or no, got \"\(value)\"")
            }
        case "meter_inside":
            let names = value.split(separator: ",").map { $0.trimmingSpaces() }.filter { !$0.isEmpty }
            for name in names where !OwnerName.isAcceptable(name) {
                throw ValueError("meter_inside: \"\(name)\" is not a namespace name (letters, digits, _ . - @)")
            }
            guard names.count <= 64 else { throw ValueError("meter_inside: at most 64 namespaces, got \(names.count)") }
            meterInside = names
        case "docker_root": dockerRoot = try Self.directory(value, key: key)
        case "docker_exec_root": dockerExecRoot = try Self.directory(value, key: key)
        case "podman_storage": podmanStorage = try Self.directory(value, key: key)
        case "cni_cache_dir": cniCacheDirectory = try Self.directory(value, key: key)
        case "meter_inside_names": meterInsideNames = try Self.integer(value, key: key, in: 1...100_000)
        case "owner_grace": ownerGrace = UInt64(try Self.seconds(value, key: key, in: 0...3600))
        case "metrics_keep_absent": metricsKeepAbsent = UInt64(try Self.seconds(value, key: key, in: 0...(100 * 366 * 86400)))
        default: throw ValueError("unknown key \"\(key)\" (see docs/CONFIG.md)")
        }
    }

    struct ValueError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// An absolute directory path without `..` (the directory need not exist yet: a runtime may
    /// be installed later).
    static func directory(_ value: String, key: String) throws(ValueError) -> String {
        guard value.hasPrefix("/"), !value.split(separator: "/").contains(".."), !value.utf8.contains(0) else {
            throw ValueError("\(key): expected an absolute directory path, got \"\(value)\"")
        }
        return value.count > 1 && value.hasSuffix("/") ? String(value.dropLast()) : value
    }

    static func integer(_ value: String, key: String, in range: ClosedRange<Int>) throws(ValueError) -> Int {
        guard let number = Int(value), range.contains(number) else {
            throw ValueError("\(key): expected a whole number from \(range.lowerBound) to \(range.upperBound), got \"\(value)\"")
        }
        return number
    }

    /// Seconds between samples: up to an hour (a longer one would blur every 5-minute bucket).
    public static let acceptedInterval: ClosedRange<Int64> = 1...3600
    public static let acceptedSaveInterval: ClosedRange<Int64> = 1...86400
    /// Retention ages: up to 100 years, beyond which `forever` says it better.
    static let acceptedAge: ClosedRange<Int64> = 1...(100 * 366 * 86400)

    /// A duration in the one grammar (``ValueGrammar/duration(_:)``: `90`, `90s`, `15m`,
    /// `48h`, `62d`), within `range` (every duration is bounded, so no conversion to
    /// microseconds or subtraction from now can overflow).
    static func seconds(_ value: String, key: String, in range: ClosedRange<Int64>) throws(ValueError) -> Int64 {
        let seconds: Int64
        do { seconds = try ValueGrammar.duration(value) } catch { throw ValueError("\(key): \(error.description)") }
        guard range.contains(seconds) else {
            throw ValueError("\(key): expected a duration from \(range.lowerBound) to \(range.upperBound) s such as 30, 15m, 48h or 62d, got \"\(value)\"")
        }
        return seconds
    }

    static func optionalSeconds(_ value: String, key: String) throws(ValueError) -> Int64? {
        value == "forever" ? nil : try seconds(value, key: key, in: acceptedAge)
    }

    static func optionalCount(_ value: String, key: String, in range: ClosedRange<Int>) throws(ValueError) -> Int? {
        value == "forever" ? nil : try integer(value, key: key, in: range)
    }

    /// A size in the one grammar (``ValueGrammar/size(_:)``: `4096`, `512K`, `10MiB`,
    /// `1.5 GB`), within `range`.
    static func size(_ value: String, key: String, in range: ClosedRange<UInt64>) throws(ValueError) -> UInt64 {
        let bytes: UInt64
        do { bytes = try ValueGrammar.size(value) } catch { throw ValueError("\(key): \(error.description)") }
        guard range.contains(bytes) else {
            throw ValueError("\(key): expected a size from \(range.lowerBound) to \(range.upperBound) bytes such as 512K or 10M, got \"\(value)\"")
        }
        return bytes
    }

    /// Bytes per second in the one rate grammar (``ValueGrammar/rate(_:)``: `125000`,
    /// `100Mbit`, `1 Gbit/s`, `50MB/s`).
    static func bandwidth(_ value: String, key: String) throws(ValueError) -> UInt64 {
        do { return try ValueGrammar.rate(value) } catch { throw ValueError("\(key): \(error.description)") }
    }

    /// getgrnam_r, not getgrnam: configs are parsed on more than one thread (the tests parse
    /// them side by side), and getgrnam's answer lives in one static buffer.
    static func group(_ name: String, key: String) throws(ValueError) -> gid_t {
        var entry = Glibc.group()
        var result: UnsafeMutablePointer<Glibc.group>?
        var size = 1024
        while size <= 1 << 20 {
            var buffer = [CChar](repeating: 0, count: size)
            let status = getgrnam_r(name, &entry, &buffer, size, &result)
            if status == ERANGE {
                size *= 4
                continue
            }
            guard status == 0, result != nil else { break }
            return entry.gr_gid
        }
        throw ValueError("\(key): no group named \"\(name)\"")
    }
}

/// A config file that cannot be used: the file, the line, and what is wrong there.
public struct ConfigError: Error, Hashable, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    public var message: String

    public var description: String {
        line.map { "\(file):\($0): \(message)" } ?? "\(file): \(message)"
    }
}
