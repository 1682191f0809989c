import IfMeterHTTP
import IfMeterPlatform
import IfMeterServer
import IfMeterKernel

/// `ifmeterd`'s command line.
public struct DaemonOptions: Hashable, Sendable {
    public enum Mode: Hashable, Sendable {
        case help, version, probe, serve, checkConfig
        /// The privileged step of counting applications (docs/APPS.md): load, attach and pin
        /// the counting program, then exit; or remove it.
        case attachApps, detachApps
        /// Root's step of covering one interface with the scope programs (docs/SCOPES.md): the
        /// request read from standard input (the attach socket's helper), or given.
        case attachLinkStdin, attachLink
    }

    public var mode: Mode = .serve
    public var json = false
    /// Nil: netlink, falling back to getifaddrs.
    public var source: LinkSource?
    public var sysfsRoot = "/sys"
    public var configPath: String?
    public var socketPath: String?
    public var stateDirectory: String?
    public var logDirectory: String?
    /// Overrides the config file's `interval`.
    public var interval: UInt64?
    /// Overrides the config file's `metrics_listen`.
    public var metricsListen: MetricsAddress?
    /// With `--attach-apps`: the user whose daemon reads the maps (their pins become its).
    public var appsUser: String?
    /// With `--attach-link`: the interface's index.
    public var attachIfindex: Int32?

    public static let usage = """
        usage: ifmeterd [--config FILE] [--socket PATH] [--state-dir DIR] [--log-dir DIR]
                        [--interval SECONDS] [--metrics-listen ADDR:PORT]
               ifmeterd --check-config [--config FILE]
               ifmeterd --probe [--json] [--source netlink|getifaddrs] [--sysfs-root DIR]
               ifmeterd --attach-apps [--apps-user USER] [--config FILE] | --detach-apps
               ifmeterd --attach-link IFINDEX | --attach-link-stdin [--config FILE]
               ifmeterd --help | --version

        Meters traffic per network interface from the kernel's own counters, keeps history,
        and answers on a Unix socket (docs/PROTOCOL.md). Runs in the foreground.

          --config FILE     config file (default /etc/ifmeter/ifmeterd.conf as root, else
                            $XDG_CONFIG_HOME/ifmeter/ifmeterd.conf; see docs/CONFIG.md)
          --socket PATH     listening socket (default /run/ifmeter/ifmeterd.sock as root,
                            else $XDG_RUNTIME_DIR/ifmeter/ifmeterd.sock)
          --state-dir DIR   database directory (default /var/lib/ifmeter as root, else
                            $XDG_STATE_HOME/ifmeter)
          --log-dir DIR     estimate log directory (default /var/log/ifmeter as root, else
                            the state directory's log/)
          --interval S      seconds between samples (overrides the config; at least 1)
          --metrics-listen A  serve Prometheus metrics over HTTP on A: 127.0.0.1:10951,
                            [::1]:10951, or :10951 for every address (overrides the config)
          --check-config    parse the config file, report the first problem, and exit
          --probe           print every interface the daemon sees now: class and why, kind,
                            state, kernel counters; then exit
          --json            with --probe: JSON with sorted keys (see docs/PROBE.md)
          --source S        with --probe: read counters from netlink (default; falls back to
                            getifaddrs with a warning) or getifaddrs only
          --sysfs-root D    read sysfs under D instead of /sys (for testing classification)
          --attach-apps     (root) load the program that counts applications by cgroup,
                            attach it to the cgroup2 root, pin its maps in the config's
                            apps_pins for USER (default: ifmeter if it exists, else the
                            caller), then exit; nothing when it is attached (docs/APPS.md)
          --apps-user USER  with --attach-apps: the user the daemon runs as
          --detach-apps     (root) remove the program and its pins: applications' counts
                            the daemon has not read are lost
          --attach-link I   (root) count interface I's traffic by scope: attach the pinned
                            tcx programs to it (docs/SCOPES.md); nothing when they are
          --attach-link-stdin  the same for one line "attach I" read from standard input,
                            answered "ok" or "error: WHY" (ifmeterd-attach@.service)
          --help            show this help
          --version         show the version
        """

    /// Parses the arguments after the program name.
    public init(arguments: [String]) throws(UsageError) {
        var explicitMode: Mode?
        var iterator = arguments.makeIterator()
        func value(for flag: String) throws(UsageError) -> String {
            guard let value = iterator.next(), !value.hasPrefix("--") else {
                throw UsageError("\(flag) needs a value")
            }
            return value
        }
        func choose(_ mode: Mode) {
            // --help wins over everything; otherwise the first mode named is the one.
            if explicitMode != .help { explicitMode = mode == .help ? .help : (explicitMode ?? mode) }
        }
        while let argument = iterator.next() {
            switch argument {
            case "--help", "-h": choose(.help)
            case "--version", "-V": choose(.version)
            case "--probe": choose(.probe)
            case "--check-config": choose(.checkConfig)
            case "--attach-apps": choose(.attachApps)
            case "--detach-apps": choose(.detachApps)
            case "--apps-user": appsUser = try value(for: argument)
            case "--attach-link-stdin": choose(.attachLinkStdin)
            case "--attach-link":
                choose(.attachLink)
                let text = try value(for: argument)
                guard case .success(let ifindex) = LinkAttachment.parse(Array("attach \(text)".utf8)) else {
                    throw UsageError("--attach-link: expected an interface index from 1 to \(Int32.max), got \"\(text)\"")
                }
                attachIfindex = ifindex
            case "--json": json = true
            case "--source":
                let name = try value(for: argument)
                guard let source = LinkSource(rawValue: name) else {
                    throw UsageError("unknown source \"\(name)\" (expected netlink or getifaddrs)")
                }
                self.source = source
            case "--sysfs-root": sysfsRoot = try value(for: argument)
            case "--config": configPath = try value(for: argument)
            case "--socket": socketPath = try value(for: argument)
            case "--state-dir": stateDirectory = try value(for: argument)
            case "--log-dir": logDirectory = try value(for: argument)
            case "--interval":
                let text = try value(for: argument)
                let accepted = DaemonConfig.acceptedInterval
                guard let seconds = Int64(text), accepted.contains(seconds) else {
                    throw UsageError("--interval: expected whole seconds from \(accepted.lowerBound) to \(accepted.upperBound), got \"\(text)\"")
                }
                interval = UInt64(seconds)
            case "--metrics-listen":
                let text = try value(for: argument)
                do {
                    metricsListen = try MetricsAddress(parsing: text)
                } catch {
                    throw UsageError("--metrics-listen: \(error)")
                }
            default: throw UsageError("unknown argument \"\(argument)\"")
            }
        }
        mode = explicitMode ?? .serve
    }
}

/// A command line that cannot be run; exit status 64 (EX_USAGE).
public struct UsageError: Error, Hashable, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
