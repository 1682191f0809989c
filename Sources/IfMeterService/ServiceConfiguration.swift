import IfMeterPlans
import IfMeterCore
import IfMeterHistory

/// What the service is configured with; a reload replaces it whole.
public struct ServiceConfiguration: Hashable, Sendable {
    public var meter: MeterConfiguration
    public var classifier: Classifier
    /// Bucket boundaries and billing days, for folding deltas into buckets.
    public var store: HistoryConfiguration
    /// The data plans to keep watch over.
    public var plans: [Plan]
    /// Link names a namespace metered from inside may have subjects for (`meter_inside_names`);
    /// a link with a new name past it is ignored, and said so once.
    public var insideNamesLimit = 256
    /// Whether interfaces' traffic is split between their networks (`networks`); without, no
    /// interface is ever on a network, not even `network:unknown`.
    public var networks = true
    /// Networks are kept and answered under a name made from their UUID (`network_names =
    /// hidden`): those NetworkManager reports, and those the history holds.
    public var hideNetworkNames = false
    /// Interfaces' aliases from the config (`alias[NAME]`), name → alias: these win over those
    /// `ifmeter alias` kept in the database.
    public var aliases: [String: String] = [:]

    public init(meter: MeterConfiguration = MeterConfiguration(), classifier: Classifier = Classifier(),
                store: HistoryConfiguration = HistoryConfiguration(), plans: [Plan] = []) {
        self.meter = meter
        self.classifier = classifier
        self.store = store
        self.plans = plans
    }
}

/// What one ingest did that the daemon must act on.
public struct Ingested: Sendable {
    /// Events kept (not about ignored interfaces), for watchers and the journal.
    public var events: [CounterEvent] = []

    /// What the daemon should say once in its journal (a namespace past its names limit).
    public var notices: [String] = []

    /// A deleted interface's final counters are banked at once, not at the next periodic save;
    /// so is a plan event, so that what fired is stored before anyone acts on it.
    public var wantsSave: Bool { events.contains { $0.kind == .deleted || $0.plan != nil } }
}
