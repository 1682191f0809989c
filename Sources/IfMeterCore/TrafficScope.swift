/// Where a packet's far end is (docs/SCOPES.md): on a network this host is attached to
/// (`local`), anywhere else (`internet`), or not known (`unknown`: before the daemon wrote the
/// local prefixes, or counted where no scope program ran). The raw values are the BPF
/// programs' (`Sources/CAppCounters/include/app_counters_layout.h`).
public enum TrafficScope: UInt32, CaseIterable, Comparable, Sendable, CustomStringConvertible {
    case local = 0
    case internet = 1
    case unknown = 2

    /// As subjects, labels and config values write it: `local`, `internet`, `unknown`.
    public var name: String {
        switch self {
        case .local: "local"
        case .internet: "internet"
        case .unknown: "unknown"
        }
    }

    public var description: String { name }

    public init?(name: some StringProtocol) {
        guard let scope = Self.allCases.first(where: { $0.name.utf8.elementsEqual(name.utf8) }) else { return nil }
        self = scope
    }

    public static func < (lhs: TrafficScope, rhs: TrafficScope) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A link's counters of one scope, as the interface scope program keeps them (frames as the
/// link's counters count them: the link-layer header included).
public struct ScopeCounterKey: Hashable, Sendable, Comparable {
    public var ifindex: Int32
    public var scope: TrafficScope

    public init(ifindex: Int32, scope: TrafficScope) {
        self.ifindex = ifindex
        self.scope = scope
    }

    public static func < (lhs: ScopeCounterKey, rhs: ScopeCounterKey) -> Bool {
        (lhs.ifindex, lhs.scope) < (rhs.ifindex, rhs.scope)
    }
}

/// One read of the interface scope program's map (`link_scopes`).
public struct ScopeCounts: Sendable, Equatable {
    /// The map's id: a map made anew (a reboot, attached again) starts from zero.
    public var mapID: UInt32
    /// Every entry, cumulative since the map was made. A link the program is attached to has
    /// its `local` and `internet` entries from the moment it was attached (the attach step
    /// makes them, zero): an entry present is a link covered.
    public var counters: [ScopeCounterKey: Traffic]

    public init(mapID: UInt32, counters: [ScopeCounterKey: Traffic]) {
        self.mapID = mapID
        self.counters = counters
    }

    /// Whether the program counts on `ifindex`.
    public func covers(_ ifindex: Int32) -> Bool { counters[ScopeCounterKey(ifindex: ifindex, scope: .local)] != nil }
}
