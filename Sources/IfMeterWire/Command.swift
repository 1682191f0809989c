/// The protocol's commands (docs/PROTOCOL.md): one definition for the daemon's dispatch and
/// the client's requests, so neither spells a command name itself.
public enum Command: String, Hashable, Sendable, CaseIterable {
    case status, interfaces, usage, events, sample, watch
    /// Every table a view needs, for many names and periods, in one answer.
    case query
    /// Every data plan's figures now (docs/PLANS.md).
    case plans
    /// The 95th percentile of 5-minute rates over a period (docs/CLI.md, "95th").
    case percentile
    /// The Prometheus exposition `/metrics` serves, as text (`ifmeter metrics`).
    case metrics
    /// Admin only (root, ifmeterd's user, `admin_group`).
    case reload, forget
    /// Admin only: brings another meter's history into the store (`ifmeter import vnstat`).
    case importHistory = "import"
    /// Admin only: sets or removes an interface's alias, kept in the database (`ifmeter alias`).
    case alias

    /// The type of its requests, which declares their members and the command's policy.
    public var requestType: any CommandRequestType.Type {
        switch self {
        case .status: StatusRequest.self
        case .interfaces: InterfacesRequest.self
        case .usage: UsageRequest.self
        case .events: EventsRequest.self
        case .sample: SampleRequest.self
        case .watch: WatchRequest.self
        case .query: QueryRequest.self
        case .plans: PlansRequest.self
        case .percentile: PercentileRequest.self
        case .metrics: MetricsRequest.self
        case .reload: ReloadRequest.self
        case .forget: ForgetRequest.self
        case .importHistory: ImportRequest.self
        case .alias: AliasRequest.self
        }
    }

    /// Who may run it and what its answer costs.
    public var policy: CommandPolicy { requestType.policy }
}
