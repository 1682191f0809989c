import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child a test waited for that was still running at its deadline; it was killed.
public struct ExitDeadlineExceeded: Error, CustomStringConvertible {
    public var what: String
    public var pid: Int32
    public var seconds: Double
    public var detail: String
    public var description: String {
        "\(what) (pid \(pid)) still running \(Int(seconds)) s after it was told to stop; killed"
            + (detail.isEmpty ? "" : ". \(detail)")
    }
}

extension Process {
    /// How long a test waits for a child it told to stop: far beyond a loaded machine's
    /// shutdown, short enough that a hung one fails its test instead of hanging the run.
    public static let exitDeadline: Double = 30

    /// Waits for the process to exit, for at most `seconds`. Past that it is SIGKILLed (and
    /// reaped) and ``ExitDeadlineExceeded`` names `what`, with `detail()` (its stderr, say).
    /// Every wait in the tests goes through here: `waitUntilExit()` alone has no deadline.
    @discardableResult
    public func awaitExit(
        _ what: String, within seconds: Double = Process.exitDeadline, detail: () -> String = { "" }
    ) throws -> Int32 {
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning && Date() < deadline { usleep(5_000) }
        if isRunning {
            let pid = processIdentifier
            let threads = Self.threads(of: pid)
            kill(pid, SIGKILL)
            waitUntilExit()
            throw ExitDeadlineExceeded(what: what, pid: pid, seconds: seconds, detail: "its threads: \(threads). \(detail())")
        }
        waitUntilExit()
        return terminationStatus
    }

    /// What each of a process's threads is doing: name, state and the kernel function it waits
    /// in (`ifmeterd S ep_poll`), to tell a stuck loop from a stopped or spinning process.
    static func threads(of pid: Int32) -> String {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.sorted { (Int($0) ?? 0) < (Int($1) ?? 0) }.map { task in
            let base = "/proc/\(pid)/task/\(task)/"
            let stat = (try? String(contentsOfFile: base + "stat", encoding: .utf8)) ?? ""
            // "pid (comm) S …": the state follows the last parenthesis.
            let state = stat.range(of: ") ", options: .backwards).map { stat[$0.upperBound...].prefix(1) } ?? "?"
            let name = ((try? String(contentsOfFile: base + "comm", encoding: .utf8)) ?? "?").trimmingCharacters(in: .whitespacesAndNewlines)
            let wchan = (try? String(contentsOfFile: base + "wchan", encoding: .utf8)) ?? "?"
            return "\(name) \(state) \(wchan)"
        }.joined(separator: ", ")
    }

    /// Ends a helper the test no longer needs: SIGTERM, then SIGKILL if it is still there at
    /// the deadline. For `defer` and `deinit`, where nothing can be thrown; a helper that
    /// ignored SIGTERM is no finding of the test's.
    public func end(_ signal: Int32 = SIGTERM, within seconds: Double = Process.exitDeadline) {
        guard isRunning else { return }
        kill(processIdentifier, signal)
        _ = try? awaitExit("", within: seconds)
    }
}
