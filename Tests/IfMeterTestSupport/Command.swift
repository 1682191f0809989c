import Foundation

/// The outcome of a finished child process.
public struct CommandResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String

    public init(status: Int32, stdout: String, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }
}

public struct CommandFailed: Error, CustomStringConvertible {
    public var command: [String]
    public var result: CommandResult
    public init(command: [String], result: CommandResult) {
        self.command = command
        self.result = result
    }
    public var description: String {
        // A child run with its output to one file (SpawnWithSignals) has said it all on stdout.
        "\(command.joined(separator: " ")) exited \(result.status): \(result.stderr.isEmpty ? result.stdout : result.stderr)"
    }
}

/// A child that outlived its deadline; it was killed.
public struct CommandTimedOut: Error, CustomStringConvertible {
    public var command: [String]
    public var seconds: Double
    public var result: CommandResult
    /// Its threads when it was killed (``Process/threads(of:)``).
    public var threads: String
    public init(command: [String], seconds: Double, result: CommandResult, threads: String) {
        (self.command, self.seconds, self.result, self.threads) = (command, seconds, result, threads)
    }
    public var description: String {
        "\(command.joined(separator: " ")) still running after \(Int(seconds)) s; killed. Its threads: \(threads). stderr: \(result.stderr)"
    }
}

/// Runs programs for tests: `run` returns whatever happened, `check` throws unless it exited 0.
/// Every child has a deadline (`timeout`, 120 s unless told): a program that should have exited
/// at once but did not (a refusal that regressed into a running daemon) is killed and the test
/// fails with `CommandTimedOut` instead of hanging the run.
public enum Command {
    public static let defaultTimeout: Double = 120

    /// Spawned directly, not with Foundation's `Process`: Foundation learns that its child
    /// exited when a socket the child holds closes, and a child another test started at that
    /// moment inherited it, so an exited command stayed "running" until its deadline (a
    /// refusal's daemon, a zombie for 30 s). Here the child is waited for by its pid, its
    /// output pipes are close-on-exec in this process, and it starts with no descriptor of the
    /// test process's and every signal unblocked (``SpawnWithSignals``).
    public static func run(
        _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:],
        timeout: Double = Command.defaultTimeout
    ) throws -> CommandResult {
        let command = [try resolve(arguments[0])] + arguments.dropFirst()
        // Standard input from a file, written whole before the child starts: no pipe to fill.
        let input = try stdin.map { text -> TemporaryDirectory in
            let directory = try TemporaryDirectory()
            try Data(text.utf8).write(to: URL(fileURLWithPath: directory.path + "/stdin"))
            return directory
        }
        var outPipe: [Int32] = [-1, -1], errPipe: [Int32] = [-1, -1]
        defer { for fd in outPipe + errPipe where fd >= 0 { close(fd) } }
        guard SpawnWithSignals.closeOnExecPipe(&outPipe), SpawnWithSignals.closeOnExecPipe(&errPipe) else {
            throw CommandFailed(command: arguments, result: CommandResult(status: -1, stdout: "", stderr: "pipe2: \(String(cString: strerror(errno)))"))
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, input.map { $0.path + "/stdin" } ?? "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        let merged = environment.isEmpty ? nil
            : ProcessInfo.processInfo.environment.merging(environment) { _, new in new }.map { "\($0.key)=\($0.value)" }
        let pid = try withExtendedLifetime(input) { try SpawnWithSignals.spawn(command, environment: merged, actions: &actions) }
        // The child's ends are its own now: end of file comes when it (and what it started) closes them.
        close(outPipe[1]); close(errPipe[1])
        (outPipe[1], errPipe[1]) = (-1, -1)
        let (outData, errData, status, threads) = readUntilExit(pid, outPipe[0], errPipe[0], timeout: timeout)
        let result = CommandResult(status: status, stdout: String(decoding: outData, as: UTF8.self),
                                   stderr: String(decoding: errData, as: UTF8.self))
        if let threads { throw CommandTimedOut(command: arguments, seconds: timeout, result: result, threads: threads) }
        return result
    }

    @discardableResult
    public static func check(_ arguments: [String], stdin: String? = nil, timeout: Double = Command.defaultTimeout) throws -> String {
        let result = try run(arguments, stdin: stdin, timeout: timeout)
        guard result.status == 0 else { throw CommandFailed(command: arguments, result: result) }
        return result.stdout
    }

    /// Reads both pipes as the child writes them (so a chatty child cannot fill one and block)
    /// until it has exited and nothing is left to read, then reaps it. Not to the end of file: a
    /// daemon the command started may hold the pipes, and what it writes after the child exited
    /// is read for a second at most. Past `timeout` the child is killed; then `threads` says what
    /// it was doing. The status is the exit code, or 128 plus the signal that ended it; -1 if the
    /// child could not be reaped here.
    static func readUntilExit(_ pid: pid_t, _ out: Int32, _ err: Int32, timeout: Double)
        -> (Data, Data, status: Int32, threads: String?) {
        var data = [Data(), Data()]
        var open = [true, true]
        var chunk = [UInt8](repeating: 0, count: 65536)
        let deadline = Date().addingTimeInterval(timeout)
        var threads: String?
        var raw: Int32 = 0
        var code: Int32?
        var exitedAt: Date?
        while true {
            // Asked before the poll: whatever the child wrote before it exited is in the pipe.
            if exitedAt == nil {
                let waited = waitpid(pid, &raw, WNOHANG)
                if waited == pid { code = SpawnWithSignals.status(raw) }
                if waited == pid || (waited < 0 && errno != EINTR) { exitedAt = Date() }
            }
            let exited = exitedAt != nil
            if !exited && threads == nil && Date() > deadline {
                threads = Process.threads(of: pid)
                kill(pid, SIGKILL)
            }
            if let exitedAt, Date().timeIntervalSince(exitedAt) > 1 { break }
            guard open.contains(true) else {
                if exited { break }
                usleep(20_000)
                continue
            }
            var polled = [out, err].enumerated().map { pollfd(fd: open[$0.offset] ? $0.element : -1, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&polled, 2, exited ? 0 : 50)
            if ready == 0 && exited { break }
            guard ready > 0 else { continue }
            for index in 0..<2 where polled[index].revents != 0 {
                let count = read(polled[index].fd, &chunk, chunk.count)
                if count > 0 {
                    data[index].append(contentsOf: chunk[..<count])
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    open[index] = false
                }
            }
        }
        return (data[0], data[1], code ?? -1, threads)
    }

    /// Finds a program on PATH (and in /usr/sbin, /sbin, where `ip` lives).
    public static func resolve(_ program: String) throws -> String {
        if program.hasPrefix("/") { return program }
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "") + ":/usr/sbin:/sbin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(program)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw CommandFailed(
            command: [program],
            result: CommandResult(status: 127, stdout: "", stderr: "\(program): not found on PATH"))
    }

    /// The directory holding the products of this build (`ifmeterd` sits next to the tests).
    public static var buildProductsDirectory: String {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        return (executable as NSString).deletingLastPathComponent
    }
}
