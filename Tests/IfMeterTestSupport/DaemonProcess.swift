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
    private var process: Process?
    /// Kept open while the daemon may write to it: released early, its descriptor would be
    /// closed under the running process and could be reused by another test's file.
    private var stderrHandle: FileHandle?

    public static var binary: String { Command.buildProductsDirectory + "/ifmeterd" }

    private static let reaped: Void = reapStale()

    /// Kills `ifmeterd` processes started from an `ifmeterd-<pid>-…` directory whose test
    /// process is gone.
    static func reapStale() {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return }
        for entry in entries {
            guard let pid = Int32(entry),
                  let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
            let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            guard arguments.first?.hasSuffix("/ifmeterd") == true,
                  let directory = arguments.first(where: { $0.contains("/ifmeterd-") }),
                  let owner = directory.components(separatedBy: "/ifmeterd-").last?.split(separator: "-").first
                      .flatMap({ Int32($0) }),
                  owner != getpid(), kill(owner, 0) != 0, errno == ESRCH else { continue }
            kill(pid, SIGKILL)
        }
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
        if let process, process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    public var arguments: [String] {
        [Self.binary, "--config", config, "--socket", socket, "--state-dir", stateDirectory, "--log-dir", logDirectory]
    }

    /// Starts the daemon; with `waitForReady`, returns once `status` says ready.
    public func start(
        extraArguments: [String] = [], environment: [String: String] = [:], prefix: [String] = [],
        waitForReady: Bool = true
    ) throws {
        let process = Process()
        let command = (namespace.map { ["ip", "netns", "exec", $0.name] } ?? []) + prefix + arguments + extraArguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        process.executableURL = URL(fileURLWithPath: try Command.resolve(command[0]))
        process.arguments = Array(command.dropFirst())
        FileManager.default.createFile(atPath: stderrPath, contents: nil)
        let stderr = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
        try stderr.seekToEnd()
        stderrHandle = stderr
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        self.process = process
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

    /// Sends `signal` and waits for the process to exit; returns its status.
    @discardableResult
    public func stop(_ signal: Int32 = SIGTERM) -> Int32 {
        guard let process else { return -1 }
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        return process.terminationStatus
    }

    public func signal(_ signal: Int32) {
        if let process { kill(process.processIdentifier, signal) }
    }

    public var pid: Int32 { process?.processIdentifier ?? 0 }
    public var isRunning: Bool { process?.isRunning ?? false }

    public var stderrText: String {
        (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
    }

    public func client() throws -> SocketClient {
        try SocketClient(path: socket)
    }

    /// Lines of the current estimate log, parsed.
    public func logRecords() throws -> [[String: Any]] {
        let text = (try? String(contentsOfFile: logDirectory + "/estimates.jsonl", encoding: .utf8)) ?? ""
        return try text.split(separator: "\n").map { try SocketClient.decode(String($0)) }
    }
}
