import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A real NetworkManager for tests: Debian's NetworkManager in a network namespace of the test's
/// own, on a system bus of the test's own (a dbus-daemon listening in a temporary directory),
/// with its profiles (keyfiles), configuration and log in that directory.
/// Its work directory is named for the test process (`…/ifmt-<pid>-nm/`), and so are its
/// processes' command lines, for ``reapStale()`` and scripts/test-hygiene.
///
/// NetworkManager keeps state in fixed places: `/run/NetworkManager` (which profile each device
/// is on, which a NetworkManager started again re-assumes) and `/var/lib/NetworkManager`. So it
/// runs in a mount namespace of the test's own, with an empty tmpfs on each, held by a process of
/// its own (`ifmt-<pid>-nm-mounts`) so that what one NetworkManager recorded is there for the next
/// (``stopManager()``, ``startManager()``); the host's stay untouched. `/sys` is read-only in that
/// namespace: NetworkManager then uses no udev and takes each device as ready, where with `/sys`
/// writable it waits for udev to tag devices, which nothing does in a test namespace, and every
/// device stays "unmanaged (platform-init)".
///
/// Every device starts unmanaged: NetworkManager touches only what a test hands it (``manage(_:quiet:)``).
public final class NetworkManagerHost {
    /// True when NetworkManager can run here: root, iproute2, NetworkManager, nmcli and dbus-daemon.
    public static var available: Bool {
        NetworkNamespace.available
            && ["NetworkManager", "nmcli", "dbus-daemon", "unshare", "nsenter", "tc"].allSatisfy { (try? Command.resolve($0)) != nil }
    }

    public static let skipReason: Comment =
        "needs root with network-manager and dbus (scripts/install-deps --test installs them)"

    /// Who may do what on the test's bus.
    public enum BusPolicy {
        /// As on a Debian system bus: the rules of `/usr/share/dbus-1/system.d`, so only root may
        /// own `org.freedesktop.NetworkManager`, and anyone may read NetworkManager's objects.
        case system
        /// The same, and on top anyone may own any name and call any method: for a process of
        /// another user that claims NetworkManager's name.
        case permissive
    }

    public let namespace: NetworkNamespace
    /// The bus's address (`unix:path=…/bus`), for `DBUS_SYSTEM_BUS_ADDRESS`.
    public let busAddress: String
    private let directory: TemporaryDirectory
    /// `directory`'s `ifmt-<pid>-nm`: the bus's socket and configuration, NetworkManager's
    /// configuration, profiles, state file and log.
    private let work: String
    private var bus: SpawnedProcess?
    /// The process that holds the mount namespace open (a `sleep`).
    private var mounts: SpawnedProcess?
    private var manager: SpawnedProcess?
    /// The permanent IPv4 neighbour entries (address, MAC) of each interface managed quietly, as
    /// they were when it was handed over.
    private var quietNeighbours: [String: [(address: String, mac: String)]] = [:]

    private static let reaped: Void = reapStale()

    /// Starts the bus, the mount namespace and NetworkManager, and returns once NetworkManager
    /// answers on the bus with its start-up done. Every device in `namespace` is unmanaged.
    public init(in namespace: NetworkNamespace, policy: BusPolicy = .system) throws {
        _ = Self.reaped
        self.namespace = namespace
        directory = try TemporaryDirectory()
        work = directory.path + "/ifmt-\(getpid())-nm"
        busAddress = "unix:path=\(work)/bus"
        // A client of another user (nobody, as the daemon under test runs) reaches the socket.
        for path in [directory.path, work, work + "/connections", work + "/conf.d"] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        }
        try Self.busConfiguration(listen: work + "/bus", policy: policy).write(toFile: work + "/bus.conf", atomically: true, encoding: .utf8)
        try Self.managerConfiguration(connections: work + "/connections").write(toFile: work + "/nm.conf", atomically: true, encoding: .utf8)
        do {
            try startBus()
            try makeMountNamespace()
            try startManager()
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// NetworkManager's log so far (every run of it), for failure messages.
    public var log: String { (try? String(contentsOfFile: work + "/NetworkManager.log", encoding: .utf8)) ?? "" }

    /// `nmcli ARGS…` in the namespace, on the test's bus; its standard output. Throws with its
    /// standard error unless it exits 0.
    @discardableResult
    public func nmcli(_ arguments: String...) throws -> String {
        try nmcli(arguments)
    }

    private func nmcli(_ arguments: [String]) throws -> String {
        let command = ["ip", "netns", "exec", namespace.name, "nmcli"] + arguments
        let result = try Command.run(command, environment: ["DBUS_SYSTEM_BUS_ADDRESS": busAddress])
        guard result.status == 0 else { throw CommandFailed(command: Array(command.dropFirst(4)), result: result) }
        return result.stdout
    }

    /// Adds an ethernet keyfile profile bound to `interface`, static IPv4 `address` (e.g.
    /// "10.77.0.1/24"), IPv6 disabled, metered or not; its UUID.
    ///
    /// Nothing in it makes NetworkManager send on its own but the address's announcement (see
    /// ``manage(_:quiet:)``): no DHCP, no IPv6, no duplicate address probe (`ipv4.dad-timeout 0`).
    /// It never connects by itself (`autoconnect no`): only ``up(_:)`` activates it.
    public func addEthernetProfile(_ name: String, interface: String, address: String, metered: Bool) throws -> String {
        try nmcli("connection", "add", "type", "ethernet", "ifname", interface, "con-name", name, "autoconnect", "no",
                  "ipv4.method", "manual", "ipv4.addresses", address, "ipv4.dad-timeout", "0",
                  "ipv6.method", "disabled", "connection.metered", metered ? "yes" : "no")
        return try nmcli("-g", "connection.uuid", "connection", "show", "id", name).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Hands `interface` to NetworkManager (`nmcli device set IF managed yes`) and returns once it
    /// can take a profile (disconnected): the link must be up, with a carrier (both ends of a
    /// veth up).
    ///
    /// NetworkManager announces each IPv4 address it sets, whatever the profile says (n-acd, as
    /// RFC 5227 asks; `ipv4.dad-timeout 0` only skips the probe before, and a link with `arp off`
    /// is announced on all the same): 3 gratuitous ARP requests of 42 bytes, 2 s apart, the first
    /// at once, on each activation, and on each re-assumption after a restart. `quiet` takes every
    /// ARP frame the interface would send before the kernel counts it, so its counters move only
    /// with what the test sends: a `clsact` egress filter whose classic-BPF program (`ret #4`)
    /// answers `TC_ACT_STOLEN`. Stolen, not dropped: a send that fails makes NetworkManager
    /// announce again and again, every second or two, for good; one that succeeds ends after 3.
    ///
    /// The kernel's own ARP is taken too, so the peer needs a permanent neighbour entry (as
    /// ``VethPair`` makes). The kernel flushes an interface's neighbour entries, permanent ones
    /// included, when its last IPv4 address goes, as it does on each switch from one profile to
    /// another; so the interface's permanent entries as they are now are put back each time
    /// ``up(_:)`` has activated a profile on it.
    public func manage(_ interface: String, quiet: Bool = false) throws {
        if quiet {
            try namespace.exec(["tc", "qdisc", "replace", "dev", interface, "clsact"])
            try namespace.exec(["tc", "filter", "replace", "dev", interface, "egress", "pref", "1", "handle", "1",
                                "protocol", "arp", "bpf", "da", "bytecode", "1,6 0 0 4,"])
            let text = try namespace.ip("-4", "-j", "neigh", "show", "dev", interface, "nud", "permanent")
            let entries = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]] ?? []
            quietNeighbours[interface] = entries.compactMap { entry in
                guard let address = entry["dst"] as? String, let mac = entry["lladdr"] as? String else { return nil }
                return (address, mac)
            }
        }
        try nmcli("device", "set", interface, "managed", "yes")
        try waitForDevice(interface, "disconnected or further (is the link up, with a carrier?)") { $0.state >= 30 }
    }

    /// `nmcli --wait 60 connection up PROFILE` (an id or UUID); returns once the device it is
    /// bound to is activated on it (and, managed quietly, has its permanent neighbours back).
    public func up(_ profile: String) throws {
        let (id, interface) = try idAndInterface(of: profile)
        try nmcli("--wait", "60", "connection", "up", profile)
        try waitForDevice(interface, "activated on \(id)") { $0.connection == id && $0.state == 100 }
        for neighbour in quietNeighbours[interface] ?? [] {
            try namespace.ip("neigh", "replace", neighbour.address, "lladdr", neighbour.mac, "dev", interface, "nud", "permanent")
        }
    }

    /// `nmcli --wait 60 connection down PROFILE`; returns once its device is off it.
    public func down(_ profile: String) throws {
        let (id, interface) = try idAndInterface(of: profile)
        try nmcli("--wait", "60", "connection", "down", profile)
        try waitForDevice(interface, "off \(id)") { $0.connection != id && $0.state != 110 }
    }

    /// Ends NetworkManager (SIGTERM) and waits for it to exit; the bus and the mount namespace
    /// stay, and so does what it configured (it leaves devices as they are when it exits).
    public func stopManager() throws {
        guard let manager else { return }
        self.manager = nil
        guard manager.isRunning else {
            throw failure("NetworkManager had exited by itself (status \(manager.terminationStatus))")
        }
        manager.send(SIGTERM)
        try manager.awaitExit("NetworkManager", within: 60) { logTail }
    }

    /// Starts NetworkManager on the bus, the configuration and the state the last one left, and
    /// returns once it answers with its start-up done (`nmcli general`: running, started): it has
    /// read its devices and re-assumed what they are on.
    public func startManager() throws {
        guard manager == nil, let mounts else { throw failure("NetworkManager is running, or the host was stopped") }
        // In the foreground, its log on its standard error (--debug) and so in its file.
        manager = try SpawnedProcess(
            ["nsenter", "--mount=/proc/\(mounts.pid)/ns/mnt", "--net=/proc/\(mounts.pid)/ns/net", "--",
             try Command.resolve("NetworkManager"), "--no-daemon", "--debug",
             "--config=\(work)/nm.conf", "--config-dir=\(work)/conf.d", "--system-config-dir=\(work)/conf.d",
             "--intern-config=\(work)/NetworkManager-intern.conf", "--state-file=\(work)/NetworkManager.state"],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": busAddress],
            output: work + "/NetworkManager.log", errors: work + "/NetworkManager.log")
        try waitUntil("NetworkManager running and started") {
            (try? nmcli("-t", "-f", "RUNNING,STARTUP", "general")) == "running:started\n"
        }
    }

    /// Ends NetworkManager, the bus and the mount namespace's holder, whatever state they are in.
    public func stop() {
        manager?.end()
        manager = nil
        bus?.end()
        bus = nil
        // The tmpfs mounts go with the namespace's last process.
        mounts?.end(SIGKILL)
        mounts = nil
    }

    /// The bus in the foreground, a child of the test's; it prints its address once it listens.
    private func startBus() throws {
        let bus = try SpawnedProcess(
            ["dbus-daemon", "--config-file=\(work)/bus.conf", "--nofork", "--nopidfile", "--nosyslog", "--print-address=1"],
            output: work + "/bus.address", errors: work + "/bus.log")
        self.bus = bus
        try waitUntil("the bus listening (its address printed)") {
            guard bus.isRunning else {
                throw failure("dbus-daemon exited (status \(bus.terminationStatus)): \(read("bus.log"))")
            }
            return read("bus.address").hasPrefix("unix:")
        }
    }

    /// Starts the process that holds the mount namespace, in the test's network namespace (with
    /// its sysfs, as `ip netns exec` mounts it), and returns once it says its mounts are made.
    /// The journal's sockets are hidden there too, when the host has them: NetworkManager logs to
    /// the journal besides its standard error, and a test's NetworkManager would otherwise write
    /// into the host's journal under NetworkManager's name.
    private func makeMountNamespace() throws {
        let places = ["/run/NetworkManager", "/var/lib/NetworkManager"]
        let script = "mount -o remount,bind,ro /sys && "
            + places.map { "mkdir -p \($0) && mount -t tmpfs -o mode=0755 ifmeter-test \($0) && " }.joined()
            + "{ ! [ -d /run/systemd/journal ] || mount -t tmpfs ifmeter-test /run/systemd/journal; } && "
            + "echo ready && exec -a ifmt-\(getpid())-nm-mounts sleep 2147483647"
        let holder = try SpawnedProcess(["ip", "netns", "exec", namespace.name, "unshare", "--mount", "--propagation", "private", "--",
                                         "bash", "-c", script], output: work + "/mounts", errors: work + "/mounts")
        mounts = holder
        try waitUntil("NetworkManager's mount namespace made") {
            guard holder.isRunning else { throw failure("its mount namespace was not made: \(read("mounts"))") }
            return read("mounts") == "ready\n"
        }
    }

    /// A profile's id and the interface it is bound to.
    private func idAndInterface(of profile: String) throws -> (id: String, interface: String) {
        let fields = try nmcli("-g", "connection.id,connection.interface-name", "connection", "show", profile)
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard fields.count >= 2, !fields[1].isEmpty else { throw failure("profile \(profile) is bound to no interface: \(fields)") }
        return (fields[0], fields[1])
    }

    /// Polls the device's connection (its id, "" if none) and state (NMDeviceState: 30
    /// disconnected, 100 activated, 110 deactivating) until `condition` holds.
    private func waitForDevice(_ interface: String, _ what: String, _ condition: ((connection: String, state: Int)) -> Bool) throws {
        var last = ""
        try waitUntil("\(interface) \(what)", lastSeen: { "nmcli says \(last.replacingOccurrences(of: "\n", with: " | "))" }) {
            last = try nmcli("-g", "GENERAL.CONNECTION,GENERAL.STATE", "device", "show", interface)
            let lines = last.split(separator: "\n", omittingEmptySubsequences: false)
            guard lines.count >= 2, let state = Int(lines[1].prefix { $0.isNumber }) else { return false }
            return condition((String(lines[0]), state))
        }
    }

    /// Polls `condition` until it holds, for 60 s at most: what NetworkManager and the bus
    /// recorded, never a time waited. Fails at once if NetworkManager, once started, has exited.
    private func waitUntil(_ what: String, lastSeen: () -> String = { "" }, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(60)
        while try !condition() {
            if let manager, !manager.isRunning {
                throw failure("NetworkManager exited (status \(manager.terminationStatus)) before \(what)")
            }
            guard Date() < deadline else { throw failure("not within 60 s: \(what); \(lastSeen())") }
            usleep(50_000)
        }
    }

    private func failure(_ message: String) -> CommandFailed {
        CommandFailed(command: ["NetworkManager"], result: CommandResult(status: 1, stdout: "", stderr: "\(message). \(logTail)"))
    }

    private var logTail: String {
        "NetworkManager's log (\(work)/NetworkManager.log) ends: " + log.split(separator: "\n").suffix(30).joined(separator: "\n")
    }

    private func read(_ name: String) -> String {
        (try? String(contentsOfFile: work + "/" + name, encoding: .utf8)) ?? ""
    }

    /// NetworkManager's configuration: nothing of the host's is read (`--config-dir` and
    /// `--system-config-dir` are an empty directory of the test's) or written.
    static func managerConfiguration(connections: String) -> String {
        """
        [main]
        plugins=keyfile
        no-auto-default=*
        # No polkit runs on the test's bus: root is answered without it, and others are refused
        # at once (with polkit asked, they got "PolicyKit1 was not provided by any .service files").
        auth-polkit=root-only
        # The host's resolv.conf, systemd-resolved and hostname are left alone.
        dns=none
        rc-manager=unmanaged
        systemd-resolved=false
        hostname-mode=none

        [keyfile]
        path=\(connections)

        # Every device unmanaged until a test hands it over over D-Bus (which overrides this, where
        # keyfile's unmanaged-devices would not be overridden): the rest of the namespace, its
        # loopback included, is never touched.
        [device-unmanaged]
        managed=0

        """
    }

    /// The bus's configuration: a system bus whose default policy is the system bus's own
    /// (`/usr/share/dbus-1/system.conf`: anyone connects, receives and sends signals and replies;
    /// method calls and names only where a rule allows them), with the rules of `system.d`
    /// (NetworkManager's: root owns its name, anyone reads it), root's monitoring
    /// (`dbus-monitor`), and for `.permissive` a mandatory policy, which overrides every other,
    /// letting anyone own any name and call anything.
    static func busConfiguration(listen socket: String, policy: BusPolicy) -> String {
        let permissive = """
              <policy context="mandatory">
                <allow own="*"/>
                <allow send_type="method_call"/>
              </policy>

            """
        return """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>system</type>
              <listen>unix:path=\(socket)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <deny own="*"/>
                <deny send_type="method_call"/>
                <allow send_type="signal"/>
                <allow send_requested_reply="true" send_type="method_return"/>
                <allow send_requested_reply="true" send_type="error"/>
                <allow receive_type="method_call"/>
                <allow receive_type="method_return"/>
                <allow receive_type="error"/>
                <allow receive_type="signal"/>
                <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
                <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
                <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
              </policy>
              <policy user="root">
                <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Monitoring"/>
              </policy>
              <includedir>/usr/share/dbus-1/system.d</includedir>
            \(policy == .permissive ? permissive : "")</busconfig>

            """
    }

    /// Kills the processes of NetworkManager hosts whose test process is gone: the holder of the
    /// mount namespace (`ifmt-<pid>-nm-mounts`), NetworkManager and dbus-daemon (their
    /// configuration in `…/ifmt-<pid>-nm/`). NetworkManager would keep a deleted namespace alive.
    static func reapStale() {
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry),
                  let command = try? String(contentsOfFile: "/proc/\(entry)/cmdline", encoding: .utf8),
                  let match = command.firstMatch(of: /ifmt-(\d+)-nm[-\/]/),
                  let owner = Int32(match.1), owner != getpid() else { continue }
            if kill(owner, 0) != 0 && errno == ESRCH { kill(pid, SIGKILL) }
        }
    }
}
