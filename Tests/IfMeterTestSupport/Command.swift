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
        "\(command.joined(separator: " ")) exited \(result.status): \(result.stderr)"
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

    public static func run(
        _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:],
        timeout: Double = Command.defaultTimeout
    ) throws -> CommandResult {
        let process = Process()
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        process.executableURL = URL(fileURLWithPath: try resolve(arguments[0]))
        process.arguments = Array(arguments.dropFirst())
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        // The deadline's block outlives a cancel until its time comes, so it holds only the
        // pid and this small state, never the Process (whose pipes would stay open until then).
        let watch = Deadline(pid: process.processIdentifier)
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { watch.expire() }
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let (outData, errData) = readWhileRunning(process, out.fileHandleForReading.fileDescriptor,
                                                  err.fileHandleForReading.fileDescriptor)
        process.waitUntilExit()
        watch.finish()
        let result = CommandResult(
            status: process.terminationStatus,
            stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
        if watch.expired { throw CommandTimedOut(command: arguments, seconds: timeout, result: result, threads: watch.threads) }
        return result
    }

    @discardableResult
    public static func check(_ arguments: [String], stdin: String? = nil, timeout: Double = Command.defaultTimeout) throws -> String {
        let result = try run(arguments, stdin: stdin, timeout: timeout)
        guard result.status == 0 else { throw CommandFailed(command: arguments, result: result) }
        return result.stdout
    }

    /// Reads both pipes as the child writes them (so a chatty child cannot fill one and block)
    /// until it has exited and nothing is left to read. Not to the end of file: Foundation makes
    /// a pipe, then marks it close-on-exec, and a child another test spawns in between keeps a
    /// copy of the write end, which would hold the end of file off until that child exits.
    static func readWhileRunning(_ process: Process, _ out: Int32, _ err: Int32) -> (Data, Data) {
        var data = [Data(), Data()]
        var open = [true, true]
        var chunk = [UInt8](repeating: 0, count: 65536)
        while open.contains(true) {
            // Asked before the poll: whatever the child wrote before it exited is in the pipe.
            let exited = !process.isRunning
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
        return (data[0], data[1])
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

/// A child's deadline: killed when it expires before the child was waited for.
private final class Deadline: @unchecked Sendable {
    private let pid: pid_t
    private let lock = NSLock()
    private var done = false
    private var killed = false
    private var seen = ""
    var expired: Bool { lock.withLock { killed } }
    var threads: String { lock.withLock { seen } }

    init(pid: pid_t) { self.pid = pid }

    func expire() {
        lock.withLock {
            guard !done else { return }
            killed = true
            seen = Process.threads(of: pid)
            kill(pid, SIGKILL)
        }
    }

    /// The child was waited for: its pid may be reused from now on, so it is never killed.
    func finish() { lock.withLock { done = true } }
}
