import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real `ifmeterd` the test starts (optionally inside a network namespace), with a state
/// directory, socket and log of its own; killed and cleaned up when released. Its directory
/// carries the test process's pid, so daemons a crashed test run left behind are killed by the
/// next run (``reapStale()``).
public final class DaemonProcess: @unchecked Sendable {
    public let directory: String
    public let namespace: NetworkNamespace?
    public var socket: String { directory + "/ifmeterd.sock" }
    public var stateDirectory: String { directory + "/state" }
    public var logDirectory: String { directory + "/log" }
    public var config: String { directory + "/ifmeterd.conf" }
    public var stderrPath: String { directory + "/stderr" }
    private var process: SpawnedProcess?

    public static var binary: String { Command.buildProductsDirectory + "/ifmeterd" }
    /// The program started: the build's, or a copy that another user can reach (``startAsTheUnit()``).
    private var executable = DaemonProcess.binary
    /// A command the daemon runs under, outside its network namespace: `nsenter` into the mount
    /// namespace where a test's libvirtd keeps its state (``LibvirtHost/enter``).
    public var enclosing: [String] = []
    /// Joins the unit's cgroups (``UnitResources/prefix``) before anything else: `ip netns exec`
    /// mounts a sysfs of the namespace's own, without the cgroup filesystems.
    private var cgroups: [String] = []
    /// A command the daemon runs under inside its network namespace, before ``start(prefix:)``'s
    /// (which ``startAsTheUnit()`` uses): as root, in `ip netns exec`'s own mount namespace
    /// (``AppsHost/mountingCgroup2``).
    public var withinNamespace: [String] = []

    private static let reaped: Void = reapStale()

    /// Kills `ifmeterd` processes started from an `ifmeterd-<pid>-…` directory whose test
    /// process is gone.
    /// Only directories of exactly this shape count (`ifmeterd-<pid>-<UUID>` under the
    /// temporary directory): a benchmark's `ifmeterd-10-1`, run beside the tests, is not a
    /// test's, and its "owner" 10 is no process.
    static func reapStale() {
        let prefix = FileManager.default.temporaryDirectory.path + "/ifmeterd-"
        killProcesses { arguments in
            guard arguments.first?.hasSuffix("/ifmeterd") == true,
                  let owner = arguments.lazy.compactMap({ owner(of: $0, prefix: prefix) }).first else { return false }
            return owner != getpid() && kill(owner, 0) != 0 && errno == ESRCH
        }
    }

    /// The test process a daemon argument such as `/tmp/ifmeterd-123-<UUID>/state` names.
    public static func owner(of argument: String, prefix: String) -> Int32? {
        guard argument.hasPrefix(prefix) else { return nil }
        let name = argument.dropFirst(prefix.count).prefix { $0 != "/" }
        guard let dash = name.firstIndex(of: "-"), let pid = Int32(name[..<dash]),
              UUID(uuidString: String(name[name.index(after: dash)...])) != nil else { return nil }
        return pid
    }

    public init(namespace: NetworkNamespace? = nil, config: String = "") throws {
        _ = Self.reaped
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("ifmeterd-\(getpid())-\(UUID().uuidString)").path
        self.namespace = namespace
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try config.write(toFile: self.config, atomically: true, encoding: .utf8)
    }

    deinit {
        // A daemon started behind a wrapper (sh, a pipeline) is not `process`; every process
        // whose command line names this directory is this test's, and goes with it.
        Self.killProcesses { $0.contains { $0.contains(self.directory) } }
        process?.end(SIGKILL)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// SIGKILLs every process whose arguments satisfy `matches`.
    static func killProcesses(where matches: ([String]) -> Bool) {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return }
        for entry in entries {
            guard let pid = Int32(entry), pid != getpid(),
                  let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
            if matches(data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }) { kill(pid, SIGKILL) }
        }
    }

    /// Runs ifmeterd on this directory's config, socket, state and log directories, plus
    /// `extra`, to its exit: inside the namespace when there is one, and killed past `timeout`.
    /// For the tests of a refusal: if one regressed into a running daemon, it would count only
    /// the test's namespace into the test's directory, and the test would fail, not hang.
    public func runToExit(_ extra: [String], timeout: Double = 30) throws -> CommandResult {
        try Command.run(enclosing + (namespace.map { ["ip", "netns", "exec", $0.name] } ?? []) + arguments + extra, timeout: timeout)
    }

    public var arguments: [String] {
        [executable, "--config", config, "--socket", socket, "--state-dir", stateDirectory, "--log-dir", logDirectory]
    }

    /// Starts the daemon; with `waitForReady`, returns once `status` says ready.
    public func start(
        extraArguments: [String] = [], environment: [String: String] = [:], prefix: [String] = [],
        waitForReady: Bool = true
    ) throws {
        let command = cgroups + enclosing + (namespace.map { ["ip", "netns", "exec", $0.name] } ?? []) + withinNamespace + prefix + arguments
            + extraArguments
        process?.end(SIGKILL)
        process = try SpawnedProcess(command, environment: environment, errors: stderrPath)
        if waitForReady { try awaitReady() }
    }

    /// Polls `status` until it says ready (or the deadline passes, or the daemon exits).
    public func awaitReady(seconds: Double = 20) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let process, !process.isRunning {
                throw CommandFailed(command: arguments, result: CommandResult(
                    status: process.terminationStatus, stdout: "", stderr: stderrText))
            }
            if let client = try? SocketClient(path: socket),
               let reply = try? client.request(#"{"v":1,"id":0,"cmd":"status"}"#),
               (reply["result"] as? [String: Any])?["ready"] as? Bool == true {
                return
            }
            usleep(20_000)
        }
        throw CommandFailed(command: arguments, result: CommandResult(status: -1, stdout: "", stderr: "not ready in \(seconds) s: \(stderrText)"))
    }

    /// Sends `signal` and waits for the process to exit; returns its status. A daemon still
    /// running after `seconds` is killed and the test fails with ``ExitDeadlineExceeded``
    /// (with the daemon's stderr), instead of hanging the run.
    @discardableResult
    public func stop(_ signal: Int32 = SIGTERM, within seconds: Double = Process.exitDeadline) throws -> Int32 {
        guard let process else { return -1 }
        process.send(signal)
        return try process.awaitExit("ifmeterd", within: seconds) { "stderr: \(self.stderrText)" }
    }

    public func signal(_ signal: Int32) {
        process?.send(signal)
    }

    public var pid: Int32 { process?.pid ?? 0 }
    public var isRunning: Bool { process?.isRunning ?? false }

    public var stderrText: String {
        (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
    }

    public func client() throws -> SocketClient {
        try SocketClient(path: socket)
    }

    /// The shipped unit's privileges without systemd: starts the daemon as nobody holding only
    /// `CAP_DAC_READ_SEARCH` and `CAP_NET_BROADCAST`, as ifmeterd.service grants them (its
    /// directory handed to nobody first). The daemon runs from a copy in that directory: nobody
    /// may not search the checkout's parents (``OtherUserCopy``), and its CAP_DAC_READ_SEARCH
    /// would hide that from the test, where the unit runs an installed binary.
    /// With `resources`, it runs under the unit's `MemoryMax=` and `TasksMax=` too.
    public func startAsTheUnit(resources: UnitResources? = nil, environment: [String: String] = [:]) throws {
        let capabilities = "-all,+dac_read_search,+net_broadcast"
        executable = try OtherUserCopy.of(Self.binary, in: directory)
        try Command.check(["chown", "-R", "65534:65534", directory])
        cgroups = resources?.prefix ?? []
        try start(environment: environment, prefix: ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=\(capabilities)",
                           "--ambient-caps=\(capabilities)", "--bounding-set=\(capabilities)"])
    }

    /// A sample, then every `interfaces` entry by name (the first of a name, which is the present
    /// link's): what the daemon counts right now.
    public func figuresAfterSample() throws -> [String: [String: Any]] {
        let client = try client()
        _ = try client.request(#"{"v":1,"cmd":"sample"}"#)
        let reply = try client.request(#"{"v":1,"cmd":"interfaces"}"#)
        guard let list = (reply["result"] as? [String: Any])?["interfaces"] as? [[String: Any]] else {
            throw CommandFailed(command: ["interfaces"], result: CommandResult(status: 1, stdout: "\(reply)", stderr: "no interfaces in the answer"))
        }
        return Dictionary(list.map { ($0["name"] as? String ?? "", $0) }) { first, _ in first }
    }

    /// Lines of the current estimate log, parsed.
    public func logRecords() throws -> [[String: Any]] {
        let text = (try? String(contentsOfFile: logDirectory + "/estimates.jsonl", encoding: .utf8)) ?? ""
        return try text.split(separator: "\n").map { try SocketClient.decode(String($0)) }
    }
}
