import IfMeterCore
import IfMeterHistory
import IfMeterService
import IfMeterWire

extension PlanResult {
    /// A plan's figures as answered.
    init(_ figures: PlanFigures) {
        let plan = figures.plan
        self.init(
            name: plan.name, selectors: plan.selectors.map(\.description), interfaces: figures.members,
            direction: plan.direction.rawValue, period: plan.period.description, periodStart: figures.bounds.start,
            periodEnd: figures.bounds.end, limit: plan.limit, used: figures.used, left: figures.left,
            share: figures.share, projected: figures.projected, daysLeft: figures.daysLeft,
            dailyBudget: figures.dailyBudget, thresholds: plan.thresholds, fired: figures.fired,
            tunnelCountedTwice: figures.countsTunnelTwice, traffic: figures.tally.traffic,
            continuity: figures.tally.continuity(eventsLost: figures.eventsLost),
            labels: figures.labels.map(\.rawValue))
        watchingPeriodStart = figures.watchingLater
        counting = plan.traffic.rawValue
        unknownBytes = figures.unknownBytes
    }
}

extension RequestHandlers {
    /// Every plan's figures now, in config order; a plan by network names its networks.
    static func plans(of service: MeterService, at now: Double) -> [PlanResult] {
        let figures = service.planFigures(at: now)
        guard figures.contains(where: { $0.plan.countsNetworks }) else { return figures.map(PlanResult.init) }
        let names = Dictionary(service.networkFigures().map { ($0.subject, $0.record?.network.id ?? "unknown") }) { first, _ in first }
        return figures.map { figures in
            var result = PlanResult(figures)
            if figures.plan.countsNetworks {
                // A plan on the internet sums its networks' internet scopes: named by their network.
                result.networks = figures.members.map { names[ScopeKind.parse($0)?.subject ?? $0] ?? $0 }
            }
            return result
        }
    }
}
