import Testing

/// Prometheus' own checker (Debian `prometheus`), for tests of the exposition.
public enum Promtool {
    public static var available: Bool { (try? Command.resolve("promtool")) != nil }
    public static let skipReason: Comment = "promtool is not installed (Debian package prometheus; scripts/install-deps --test installs it)"
}
