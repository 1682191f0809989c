/// The periods `usage` answers for (docs/PROTOCOL.md): one definition for the daemon's parsing
/// and the client's requests and views.
public enum UsagePeriod: String, Hashable, Sendable, CaseIterable {
    case fiveMinutes = "5min", hour, day, month, year
    /// One row from when the name was first seen to now.
    case total
}
