import Foundation

/// The mark `scripts/test-hygiene` gives one run of the tests (`IFMETER_TEST_RUN`): every
/// program the tests start inherits it, and what carries it after the run is a leftover.
public enum TestRun {
    public static let variable = "IFMETER_TEST_RUN"

    /// The mark, for a child whose environment a test sets whole (the rest of it would leak the
    /// user's session into the child's).
    public static var environment: [String: String] {
        ProcessInfo.processInfo.environment[variable].map { [variable: $0] } ?? [:]
    }
}
