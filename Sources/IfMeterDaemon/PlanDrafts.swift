import IfMeterPlans
import IfMeterHistory

/// The `plan[NAME]…` lines of a config file as they are read, in any order; made into
/// ``Plan``s once the whole file is read, so a plan may name a `month_start_day` set after it.
///
///     plan[phone] = wwan0                 # names, globs or class:CLASS, comma-separated
///     plan[phone].limit = 20G
///     plan[phone].period = month 15       # default: month (from month_start_day)
///     plan[phone].direction = total       # rx, tx or total (default)
///     plan[phone].thresholds = 80%, 100%  # the default
///     plan[hotspot].network = Pixel 7     # instead of interfaces: a network (id, SSID or UUID), once a line
///     plan[paid].metered = yes            # or every metered network (docs/NETWORKS.md)
///     plan[paid].traffic = internet       # only the internet's traffic; all (default)
struct PlanDrafts {
    struct Draft {
        var line: Int
        var selectors: [Plan.Selector]?
        var limit: UInt64?
        var period: String?
        var periodLine = 0
        var direction = Plan.Direction.total
        var thresholds = Plan.defaultThresholds
        var traffic = Plan.Counting.all
        var trafficLine = 0
        /// `.network` and `.metered` lines, in order.
        var networks: [Plan.Selector] = []
        /// `.app` and `.service` lines, in order.
        var applications: [Plan.Selector] = []
    }

    private var drafts: [(name: String, draft: Draft)] = []

    /// Most plans one config may have: each is evaluated after every sample.
    static let maximumPlans = 1000

    mutating func set(key: String, value: String, line: Int) throws(DaemonConfig.ValueError) {
        guard let close = key.firstIndex(of: "]") else {
            throw DaemonConfig.ValueError("\(key): expected plan[NAME] or plan[NAME].FIELD")
        }
        let name = String(key[key.index(key.startIndex, offsetBy: 5)..<close])
        let field = key[key.index(after: close)...]
        guard Plan.isValidName(name) else {
            throw DaemonConfig.ValueError("\(key): a plan's name is 1 to 64 letters, digits, '-', '_' or '.', got \"\(name)\"")
        }
        let position = drafts.firstIndex { $0.name == name } ?? {
            drafts.append((name, Draft(line: line)))
            return drafts.count - 1
        }()
        guard drafts.count <= Self.maximumPlans else {
            throw DaemonConfig.ValueError("more than \(Self.maximumPlans) plans")
        }
        do throws(PlanError) {
            switch field {
            case "":
                let parts = value.split(separator: ",").map { $0.trimmingSpaces() }.filter { !$0.isEmpty }
                guard !parts.isEmpty else { throw PlanError("name the plan's interfaces: names, globs such as wwan* or class:CLASS") }
                var selectors: [Plan.Selector] = []
                for part in parts { selectors.append(try Plan.Selector(parsing: part)) }
                drafts[position].draft.selectors = selectors
            case ".limit": drafts[position].draft.limit = try Plan.limit(parsing: value)
            case ".period": (drafts[position].draft.period, drafts[position].draft.periodLine) = (value, line)
            case ".direction":
                guard let direction = Plan.Direction(rawValue: value) else {
                    throw PlanError("expected rx, tx or total, got \"\(value)\"")
                }
                drafts[position].draft.direction = direction
            case ".thresholds": drafts[position].draft.thresholds = try Plan.thresholds(parsing: value)
            case ".traffic": (drafts[position].draft.traffic, drafts[position].draft.trafficLine) = (try Plan.Counting(parsing: value), line)
            // Each line names one more network: an SSID may hold a comma.
            case ".network": drafts[position].draft.networks.append(try Plan.Selector.network(parsing: value))
            case ".metered": drafts[position].draft.networks.append(try Plan.Selector.metered(parsing: value))
            // Each line names one more application or service.
            case ".app", ".service":
                drafts[position].draft.applications.append(try Plan.Selector.application(String(field.dropFirst()), parsing: value))
            default:
                throw PlanError("unknown plan setting \"\(field.dropFirst())\" "
                    + "(expected limit, period, direction, thresholds, traffic, network, metered, app or service)")
            }
        } catch {
            throw DaemonConfig.ValueError("\(key): \(error.description)")
        }
    }

    /// The plans, each checked whole: it names interfaces and a limit, and its period is one
    /// that daily history (`retention_day`) covers.
    ///
    /// A billing month without a day of its own starts on `month_start_day[IFACE]` when every
    /// interface the plan names (by name, not glob or class) has the same one, else on
    /// `month_start_day`: a plan on `wwan0` follows wwan0's billing day.
    func plans(monthStartDay globalDay: Int, monthStartDays: [String: Int] = [:], retention: Retention,
               file: String) throws(ConfigError) -> [Plan] {
        try drafts.map { (name, draft) throws(ConfigError) in
            var monthStartDay = globalDay
            if let selectors = draft.selectors {
                let named = selectors.compactMap { selector -> String? in
                    if case .name(let pattern) = selector, !pattern.contains(where: { "*?[".contains($0) }) { return pattern }
                    return nil
                }
                let days = Set(named.map { monthStartDays[$0] ?? globalDay })
                if named.count == selectors.count, days.count == 1, let day = days.first { monthStartDay = day }
            }
            let fail = { (line: Int, message: String) in ConfigError(file: file, line: line, message: "plan[\(name)]: \(message)") }
            if draft.selectors != nil, !draft.networks.isEmpty {
                throw fail(draft.line, "names both interfaces and networks: a plan counts one or the other "
                    + "(networks are another view of the same bytes); make two plans")
            }
            if !draft.applications.isEmpty, draft.selectors != nil {
                throw fail(draft.line, "names both interfaces and applications: a plan counts one or the other "
                    + "(applications are another view of the same bytes); make two plans")
            }
            // Applications with networks: only their bytes on those networks (docs/APPS.md).
            guard let selectors = draft.selectors ?? (draft.applications.isEmpty ? nil : draft.applications + draft.networks)
                    ?? (draft.networks.isEmpty ? nil : draft.networks) else {
                throw fail(draft.line, "no interfaces: add plan[\(name)] = wwan0 (names, globs such as wwan* or class:CLASS), "
                    + "or plan[\(name)].network = NETWORK, plan[\(name)].metered = yes, plan[\(name)].app = APP "
                    + "or plan[\(name)].service = SERVICE")
            }
            guard let limit = draft.limit else { throw fail(draft.line, "no limit: add plan[\(name)].limit = 20G") }
            // An application's scope on a network is not counted: only its scope, or its network.
            if draft.traffic == .internet, !draft.applications.isEmpty, !draft.networks.isEmpty {
                throw fail(draft.trafficLine, "traffic = internet counts applications' or networks' internet traffic, "
                    + "not applications' on a network; name applications or networks, not both")
            }
            let period: PlanPeriod
            do throws(PlanError) {
                period = try draft.period.map { text throws(PlanError) in try PlanPeriod(parsing: text, monthStartDay: monthStartDay) }
                    ?? .month(startDay: monthStartDay)
            } catch {
                throw fail(draft.periodLine, "period: \(error.description)")
            }
            if let kept = retention.days, kept < Int64(period.longestDays) * 86400 {
                throw fail(draft.periodLine == 0 ? draft.line : draft.periodLine,
                           "its period lasts up to \(period.longestDays) days, but retention_day keeps daily buckets "
                           + "for \(kept / 86400) days; keep them longer or choose a shorter period")
            }
            return Plan(name: name, selectors: selectors, direction: draft.direction, limit: limit, period: period,
                        thresholds: draft.thresholds, traffic: draft.traffic)
        }
    }
}
