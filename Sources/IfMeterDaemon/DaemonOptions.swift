import IfMeterKernel

/// `ifmeterd`'s command line.
public struct DaemonOptions: Hashable, Sendable {
    public enum Mode: Hashable, Sendable {
        case help, version, probe
    }

    public var mode: Mode
    public var json = false
    /// Nil: netlink, falling back to getifaddrs.
    public var source: LinkSource?
    public var sysfsRoot = "/sys"

    public static let usage = """
        usage: ifmeterd --probe [--json] [--source netlink|getifaddrs] [--sysfs-root DIR]
               ifmeterd --help | --version

        Meters traffic per network interface from the kernel's own counters.

          --probe         print every interface the daemon sees now: class and why, kind,
                          state, kernel counters; then exit
          --json          with --probe: JSON with sorted keys (see docs/PROBE.md)
          --source S      read counters from netlink (default; falls back to getifaddrs
                          with a warning) or getifaddrs only
          --sysfs-root D  read sysfs under D instead of /sys (for testing classification)
          --help          show this help
          --version       show the version
        """

    /// Parses the arguments after the program name.
    public init(arguments: [String]) throws(UsageError) {
        var mode: Mode?
        var iterator = arguments.makeIterator()
        func value(for flag: String) throws(UsageError) -> String {
            guard let value = iterator.next(), !value.hasPrefix("--") else {
                throw UsageError("\(flag) needs a value")
            }
            return value
        }
        self.mode = .help
        while let argument = iterator.next() {
            switch argument {
            case "--help", "-h": mode = .help
            case "--version", "-V": mode = mode ?? .version
            case "--probe": mode = mode == .help ? .help : .probe
            case "--json": json = true
            case "--source":
                let name = try value(for: argument)
                guard let source = LinkSource(rawValue: name) else {
                    throw UsageError("unknown source \"\(name)\" (expected netlink or getifaddrs)")
                }
                self.source = source
            case "--sysfs-root": sysfsRoot = try value(for: argument)
            default: throw UsageError("unknown argument \"\(argument)\"")
            }
        }
        guard let mode else {
            throw UsageError("nothing to do: give --probe (the metering service is not built yet)")
        }
        self.mode = mode
    }
}

/// A command line that cannot be run; exit status 64 (EX_USAGE).
public struct UsageError: Error, Hashable, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
