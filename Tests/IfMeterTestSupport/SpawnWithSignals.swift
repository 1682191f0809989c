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
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else of the test process's: Foundation learns that a child it started exited
        // when the socket that child inherited closes, and a runtime's daemon started here holding
        // a copy of it (they are not close-on-exec) would keep that child "running" for good.
        SpawnWithSignals.closeFrom3(&actions)
        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let spawned = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, environ)
        guard spawned == 0 else {
            throw CommandFailed(command: arguments, result: CommandResult(status: -1, stdout: "", stderr: "posix_spawn: \(spawned)"))
        }
        return pid
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
