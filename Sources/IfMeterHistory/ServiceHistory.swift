import IfMeterPlans
import IfMeterCore

/// What the database held at start: the service's state before its first observation.
public struct ServiceHistory: Sendable {
    public var meterState: MeterState?
    /// Names with history, with when counting began.
    public var knownNames: [String: Double]
    /// Every name's saved all-time total.
    public var totals: [String: BucketTally]
    public var interfaces: [StoredInterface]
    /// When `events-lost` events happened, and whose figures each concerns (its `interface`:
    /// nil for everyone's).
    public var eventsLost: [(at: Double, scope: String?)]
    /// Each plan's watch as last saved, by plan name.
    public var planStates: [String: PlanState]
    /// Every network counted on, by UUID order.
    public var networks: [NetworkRecord]
    /// The application counters as last saved (docs/APPS.md), if any were.
    public var apps: AppCounterState?
    /// The interface scope program's map as last saved (docs/SCOPES.md), if it was.
    public var scopes: ScopeCounterState?
    /// Every scope subject with history (`scope:S/SUBJECT`), with when it was first counted.
    public var scopeSubjects: [String: Double] = [:]
    /// What the save journal holds after the database's last save (a daemon killed between
    /// folds, docs/CONFIG.md `fold_interval`), in order: counted again at start.
    public var journal: [JournalRecord] = []
    /// The aliases `ifmeter alias` set, name → alias.
    public var aliases: [String: String] = [:]

    public init(meterState: MeterState? = nil, knownNames: [String: Double] = [:], totals: [String: BucketTally] = [:],
                interfaces: [StoredInterface] = [], eventsLost: [(at: Double, scope: String?)] = [], planStates: [String: PlanState] = [:], networks: [NetworkRecord] = [],
                apps: AppCounterState? = nil, scopes: ScopeCounterState? = nil, aliases: [String: String] = [:]) {
        self.apps = apps
        self.scopes = scopes
        self.aliases = aliases
        self.planStates = planStates
        self.networks = networks
        self.meterState = meterState
        self.knownNames = knownNames
        self.totals = totals
        self.interfaces = interfaces
        self.eventsLost = eventsLost
    }
}
