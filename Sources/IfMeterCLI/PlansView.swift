import IfMeterPresentation
import IfMeterCore
import IfMeterWire

/// `plans`: each data plan's period so far — used of the limit, what is left per day, and the
/// pace's projection — with the marks of what broke the period's continuity (docs/PLANS.md).
enum PlansView {
    static func fetch(_ session: Session) throws(CLIError) -> PlansResult {
        try session.client.call(PlansRequest(), reading: PlansResult.self)
    }

    static func render(_ result: PlansResult, _ session: Session, units: Units) -> String {
        guard !result.plans.isEmpty else {
            return "No data plans. Add one to ifmeterd.conf, e.g.:\n"
                + "  plan[phone] = wwan0\n  plan[phone].limit = 20G\n  plan[phone].period = month 15\n"
        }
        var table = Table([.left, .left, .right, .right, .right, .right, .right, .right, .left])
        table.add(["plan", "period", "used", "limit", "share", "projected", "days left", "per day", "marks"])
        var notes: [String] = []
        for plan in result.plans {
            table.add([plan.name, "\(session.time.day(Double(plan.periodStart))) – \(session.time.day(Double(plan.periodEnd)))",
                       units.bytes(plan.used), units.bytes(plan.limit), ValueGrammar.percentText(plan.share), units.bytes(plan.projected),
                       String(plan.daysLeft), units.bytes(plan.dailyBudget), marks(plan)])
            notes += note(plan, units: units, time: session.time)
        }
        return table.render() + (notes.isEmpty ? "" : "\n" + notes.joined(separator: "\n") + "\n")
            + "\nProjected: at this period's pace so far. " + result.footnote + "\n"
    }

    /// One line under a view of an interface that is in the plan (the summary's).
    static func line(_ plan: PlanResult, units: Units) -> String {
        "plan \(plan.name)\(plan.counting == "internet" ? " (internet)" : ""): \(units.bytes(plan.used)) of \(units.bytes(plan.limit)) (\(ValueGrammar.percentText(plan.share))), "
            + "\(units.bytes(plan.left)) left, \(units.bytes(plan.dailyBudget))/day for \(plan.daysLeft) day\(plan.daysLeft == 1 ? "" : "s")"
            + (plan.projected > plan.limit ? "; projected \(units.bytes(plan.projected)), over the limit" : "")
    }

    /// `R` reset, `G` gap, `I` implausible dropped, `L` link events lost, `V` imported from
    /// vnStat, `T` a tunnel counted twice: what the period's figure went through.
    static func marks(_ plan: PlanResult) -> String {
        var marks = ""
        if plan.continuity.resets > 0 { marks += "R" }
        if plan.continuity.gaps > 0 { marks += "G" }
        if plan.continuity.implausibleDropped > 0 { marks += "I" }
        if plan.continuity.eventsLost > 0 { marks += "L" }
        if plan.continuity.imported { marks += "V" }
        if plan.tunnelCountedTwice { marks += "T" }
        return marks
    }

    /// The networks a plan counts, the first ``namedNetworks`` of them by name: a plan by
    /// `metered = no` on a laptop that joined a thousand networks says how many more.
    static func named(_ networks: [String]) -> String {
        let shown = networks.prefix(namedNetworks).map(NetworkName.printable).joined(separator: ", ")
        return networks.count > namedNetworks ? shown + " and \(networks.count - namedNetworks) more (ifmeter networks lists them)" : shown
    }

    static let namedNetworks = 10

    static func note(_ plan: PlanResult, units: Units, time: TimeText) -> [String] {
        var notes: [String] = []
        if let networks = plan.networks {
            notes.append(networks.isEmpty
                ? "\(plan.name): no network matches \(plan.selectors.joined(separator: ", ")) yet"
                : "\(plan.name): counts what crossed any interface on \(named(networks)) (docs/NETWORKS.md)")
        } else if plan.interfaces.isEmpty {
            notes.append("\(plan.name): no interface matches \(plan.selectors.joined(separator: ", ")) yet")
        }
        if plan.labels.contains(EstimateLabel.networkUnknown.rawValue) {
            notes.append("\(plan.name): an interface's network was not known for part of the period (NetworkManager or "
                + "ifmeterd not running); what crossed then is network:unknown, not in this plan")
        }
        if plan.counting == "internet" {
            let unknown = plan.unknownBytes ?? 0
            notes.append("\(plan.name): counts only what went to and came from the internet (traffic = internet, docs/SCOPES.md)"
                + (unknown > 0 ? "; \(units.bytes(unknown)) its links carried could not be told local or internet "
                    + "(a link the scope programs did not cover): not in it" : ""))
        }
        if plan.tunnelCountedTwice {
            notes.append("\(plan.name): sums a tunnel and other links; the tunnel's traffic is counted again on the link beneath it")
        }
        if let later = plan.watchingPeriodStart {
            notes.append("\(plan.name): its thresholds wait for the period from \(time.day(Double(later))), which a wall clock "
                + "set ahead reached first (docs/PLANS.md); change the plan's settings to watch this one afresh")
        }
        if plan.used >= plan.limit {
            notes.append("\(plan.name): over its limit by \(units.bytes(plan.used - plan.limit))")
        }
        return notes
    }
}

/// `check --plan NAME`: a plan's share of its limit with Nagios exit codes: at or over its
/// lowest threshold below 100 % warns, at or over the limit is critical.
struct PlanCheck {
    static func evaluate(_ plan: PlanResult, projected: Bool, units: Units) -> QuotaCheck {
        let compared = projected ? plan.projected : plan.used
        let warnShare = plan.thresholds.first { $0 < 1 } ?? 0.8
        let warnBytes = UInt64((Double(plan.limit) * warnShare).rounded(.up))
        let status: CheckStatus = compared >= plan.limit ? .critical : compared >= warnBytes ? .warning : .ok
        let what = projected ? "projected to use \(units.bytes(compared)) by the period's end" : "used \(units.bytes(compared))"
        var labels = plan.labels
        if projected { labels.append(EstimateLabel.projection.rawValue) }
        let message = "\(status.word): plan \(plan.name) \(what) of \(units.bytes(plan.limit)) "
            + "(\(ValueGrammar.percentText(Double(compared) / Double(plan.limit)))), \(units.bytes(plan.dailyBudget))/day left "
            + "| used=\(plan.used)B;\(warnBytes);\(plan.limit);0 projected=\(plan.projected)B"
        return QuotaCheck(status: status, interface: plan.interfaces.joined(separator: ","), period: plan.period,
                          start: Double(plan.periodStart), end: Double(plan.periodEnd), direction: plan.direction,
                          usedBytes: plan.used, projectedBytes: plan.projected, limitBytes: plan.limit,
                          warnBytes: warnBytes, compared: projected ? "projected" : "used", labels: labels,
                          message: message)
    }
}

/// `plans`.
struct PlansCommand: Subcommand {
    static let name = "plans"
    static let summary = "data plans: used of the limit this period, left per day, projection"
    static let usage = "ifmeter plans [--json]"
    static let about = """
        Each data plan of ifmeterd.conf (docs/PLANS.md): its period, what its interfaces
        used of the limit so far (saved and not yet saved), the share, the projection at
        this period's pace, the days left (today included) and what is left per day.
        Marks: R reset, G gap, I implausible jump left out, L link events lost, V imported
        from vnStat, T a tunnel summed with the link beneath it (counted twice).
        """
    static let options: [OptionSpec] = []

    init(_ parsed: ParsedArguments) {}

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let session = try Session(socketCandidates: context.socketCandidates)
        context.write(try PlansView.fetch(session)) { PlansView.render($0, session, units: context.units) }
        return 0
    }
}
