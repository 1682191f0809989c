import IfMeterCore

/// One read of the counting program's maps, with the subjects of the cgroups it named: what
/// the daemon hands the service each sample (docs/APPS.md).
public struct AppRead: Sendable, Equatable {
    public var counts: AppCounts
    /// The subject of each cgroup id the reader named since its last read.
    public var names: [UInt64: String]

    public init(counts: AppCounts, names: [UInt64: String] = [:]) {
        self.counts = counts
        self.names = names
    }
}
