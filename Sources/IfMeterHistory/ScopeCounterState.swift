import IfMeterCore

/// What the daemon keeps of the interface scope program's map between runs (docs/SCOPES.md,
/// "How an interface's split is counted"): the boot and map it last read and every entry as
/// last read (a link with entries was covered then), so a start divides what the links
/// counted while it was stopped in the proportions the map counted meanwhile. A few rows (two
/// or three a covered link): a save that changed any writes them all.
public struct ScopeCounterState: Sendable, Equatable {
    public var bootID: String
    public var mapID: UInt32
    public var counters: [ScopeCounterKey: Traffic]

    public init(bootID: String, mapID: UInt32, counters: [ScopeCounterKey: Traffic] = [:]) {
        self.bootID = bootID
        self.mapID = mapID
        self.counters = counters
    }
}
