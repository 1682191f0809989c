import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Programs started with every signal unblocked and at its default. A test's own thread blocks
/// them all (``OwnThread``), and what it starts inherits the mask — down to a container's busybox
/// `ping`, which then waits for a SIGALRM that never comes. Container runtimes' daemons and
/// their attach tools (dockerd, lxc-start, lxc-attach) are started this way, with no descriptor
/// of the test process's but their standard ones.
public enum SpawnWithSignals {
    /// Starts `arguments` (an absolute path first) with stdin from /dev/null and stdout and
    /// stderr to `output`; its pid.
    public static func start(_ arguments: [String], output: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        return try spawn(arguments, environment: nil, actions: &actions)
    }

    /// Spawns `arguments` (an absolute path first) with `actions` for its descriptors 0–2 and
    /// nothing else of the test process's, every signal unblocked and at its default, in
    /// `environment` (`NAME=value`; nil: the test process's).
    static func spawn(_ arguments: [String], environment: [String]?, actions: inout posix_spawn_file_actions_t) throws -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        // Nothing else of the test process's: Foundation learns that a child it started exited
        // when the socket that child inherited closes, and a runtime's daemon started here holding
        // a copy of it (they are not close-on-exec) would keep that child "running" for good.
        SpawnWithSignals.closeFrom3(&actions)
        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let envp = environment.map { $0.map { strdup($0) } + [nil] }
        defer { for pointer in envp ?? [] { free(pointer) } }
        let spawned = envp.map { envp in posix_spawn(&pid, arguments[0], &actions, &attributes, argv, envp) }
            ?? posix_spawn(&pid, arguments[0], &actions, &attributes, argv, environ)
        guard spawned == 0 else {
            throw CommandFailed(command: arguments, result: CommandResult(status: -1, stdout: "", stderr: "posix_spawn: \(spawned)"))
        }
        return pid
    }

    /// A pipe whose ends are close-on-exec from the start (`pipe2(O_CLOEXEC)`, which Glibc's
    /// module does not declare): set afterwards, a child another thread spawns in between
    /// would keep a copy of the write end.
    /// A wait status as the tests read it: the exit code, or 128 plus the signal that ended
    /// the child, as a shell reports it (a signal's number would pass for an exit code).
    static func status(_ raw: Int32) -> Int32 {
        (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
    }

    public static func closeOnExecPipe(_ ends: inout [Int32]) -> Bool {
        typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pipe2") else { preconditionFailure("no pipe2 in libc") }
        let pipe2 = unsafeBitCast(symbol, to: Pipe2.self)
        return ends.withUnsafeMutableBufferPointer { pipe2($0.baseAddress!, O_CLOEXEC) } == 0
    }

    /// Adds to `actions` the closing of every descriptor from 3 up: glibc's
    /// `posix_spawn_file_actions_addclosefrom_np`, which Glibc's module does not declare.
    public static func closeFrom3(_ actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
            preconditionFailure("glibc 2.34 or later is needed: no posix_spawn_file_actions_addclosefrom_np")
        }
        let closeFrom = unsafeBitCast(symbol, to: CloseFrom.self)
        precondition(closeFrom(&actions, 3) == 0, "posix_spawn_file_actions_addclosefrom_np failed")
    }

    /// Runs `arguments` (the first resolved on PATH) to its exit within `timeout` seconds (then
    /// SIGKILL and `CommandTimedOut`); what it printed, stdout and stderr together. Throws
    /// `CommandFailed` on a non-zero exit.
    @discardableResult
    public static func check(_ arguments: [String], timeout: Double = Command.defaultTimeout) throws -> String {
        let directory = try TemporaryDirectory()
        let output = directory.path + "/output"
        let pid = try start([try Command.resolve(arguments[0])] + arguments.dropFirst(), output: output)
        let status = wait(pid, within: timeout)
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        guard let status else {
            throw CommandTimedOut(command: arguments, seconds: timeout, result: CommandResult(status: -1, stdout: text, stderr: ""), threads: "")
        }
        guard status == 0 else { throw CommandFailed(command: arguments, result: CommandResult(status: status, stdout: text, stderr: "")) }
        return text
    }

    /// Waits for `pid` to exit within `seconds`: its exit status (-1 for a signal), or nil once
    /// it was killed at the deadline.
    public static func wait(_ pid: pid_t, within seconds: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        var status: Int32 = 0
        while true {
            let done = waitpid(pid, &status, WNOHANG)
            if done == pid { return (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1 }
            if done < 0 && errno != EINTR { return -1 }
            if Date() > deadline {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                return nil
            }
            usleep(5_000)
        }
    }
}

/// A child started by ``SpawnWithSignals`` and waited for by its pid, never through Foundation's
/// `Process`: Foundation learns that its child exited when a socket the child holds closes, and
/// a child another test started at that moment inherits it, so an exited daemon stayed
/// "running", a zombie, until the test's deadline.
public final class SpawnedProcess: @unchecked Sendable {
    public let pid: pid_t
    private let lock = NSLock()
    private var status: Int32?

    /// Starts `arguments` (the first resolved on PATH) with standard input from /dev/null,
    /// standard output to `output` and standard error appended to `errors` (nil: /dev/null), in
    /// the test process's environment with `environment` over it.
    public init(_ arguments: [String], environment: [String: String] = [:], output: String? = nil, errors: String? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errors ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o600)
        let merged = environment.isEmpty ? nil
            : ProcessInfo.processInfo.environment.merging(environment) { _, new in new }.map { "\($0.key)=\($0.value)" }
        pid = try SpawnWithSignals.spawn([try Command.resolve(arguments[0])] + arguments.dropFirst(), environment: merged, actions: &actions)
    }

    /// Whether it still runs; reaps it once it has exited.
    public var isRunning: Bool { lock.withLock { reapIfExited() } }

    /// Sends `signal` if it has not been reaped: never to a pid that may have gone to another
    /// process since. Whether it was sent.
    @discardableResult
    public func send(_ signal: Int32) -> Bool {
        lock.withLock { reapIfExited() && kill(pid, signal) == 0 }
    }

    /// Under `lock`: reaps it if it has exited; whether it still runs.
    private func reapIfExited() -> Bool {
        if status == nil {
            var raw: Int32 = 0
            let waited = waitpid(pid, &raw, WNOHANG)
            if waited == pid { status = SpawnWithSignals.status(raw) }
            if waited < 0 && errno == ECHILD { status = -1 }
        }
        return status == nil
    }

    /// Its exit code, or the signal that ended it; -1 while it runs.
    public var terminationStatus: Int32 { lock.withLock { status ?? -1 } }

    /// Waits for it to exit, for at most `seconds`; past that it is SIGKILLed (and reaped) and
    /// ``ExitDeadlineExceeded`` names `what`, its threads, and `detail()`.
    @discardableResult
    public func awaitExit(_ what: String, within seconds: Double = Process.exitDeadline, detail: () -> String = { "" }) throws -> Int32 {
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning && Date() < deadline { usleep(5_000) }
        guard isRunning else { return terminationStatus }
        let threads = Process.threads(of: pid)
        send(SIGKILL)
        // Bounded: a child stuck in the kernel (state D) is not reaped however long one waits.
        let reapDeadline = Date().addingTimeInterval(10)
        while isRunning && Date() < reapDeadline { usleep(1_000) }
        throw ExitDeadlineExceeded(what: what, pid: pid, seconds: seconds, detail: "its threads: \(threads). \(detail())")
    }

    /// Ends it: `signal`, then SIGKILL at the deadline. For `defer` and `deinit`.
    public func end(_ signal: Int32 = SIGTERM, within seconds: Double = Process.exitDeadline) {
        guard send(signal) else { return }
        _ = try? awaitExit("", within: seconds)
    }
}
