import Foundation
import Testing

/// Tests that need the process's time zone set run in a child process of this test binary
/// with `TZ` in its environment: `setenv("TZ")` here would change every other test's local
/// time while the suites run in parallel. Such a suite is enabled only in that child; in this
/// process, ``run(_:)`` starts the child and checks that it ran the suite and passed.
public enum ZonedChild {
    /// The zone the child runs in.
    public static let zone = "Europe/Berlin"
    private static let marker = "IFMETER_ZONED_CHILD"

    /// True in the child, where the zoned suites run.
    public static var isChild: Bool {
        ProcessInfo.processInfo.environment[marker] == "1" && ProcessInfo.processInfo.environment["TZ"] == zone
    }

    public static let skipReason: Comment = "runs in a child process with TZ=Europe/Berlin (its parent test reports it)"

    /// Runs the tests matching `filter` in a child with `TZ` set; returns how many passed, or
    /// records the child's output as the failure.
    public static func run(_ filter: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
        let binary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let result = try Command.run([binary, "--testing-library", "swift-testing", "--filter", filter],
                                     environment: [marker: "1", "TZ": zone], timeout: 300)
        let text = result.stdout + result.stderr
        // Passed tests, one "✔ Test "…" passed" line each: a suite the child skipped (its gate
        // false there too) must not count as run.
        let ran = text.split(separator: "\n").filter { $0.contains("✔") && $0.contains("Test \"") && $0.contains(" passed") }.count
        if result.status != 0 || ran == 0 {
            Issue.record("the \(zone) child (\(filter)) exited \(result.status) after \(ran) tests:\n\(text)", sourceLocation: sourceLocation)
        }
        return ran
    }
}
