import IfMeterPresentation
import IfMeterCore
import IfMeterWire

/// `check`: one interface's day or month against a quota, or a data plan, as one line with
/// Nagios exit codes. Anything wrong is UNKNOWN (``CLI/run(arguments:environment:)``).
struct CheckCommand: Subcommand {
    static let name = "check"
    static let summary = "quota check with Nagios exit codes (0 ok, 1 warning, 2 over, 3 unknown)"
    static let usage = """
        ifmeter check -i NAME --limit SIZE [--period day|month] [--warn PERCENT]
                             [--projected] [--direction rx|tx|both]
               ifmeter check --plan NAME [--projected]
        """
    static let about = """
        Compares this day's or month's traffic of one interface (rx + tx unless --direction)
        with a quota and prints one line: status, reason, and Nagios performance data.

        Exit status: 0 OK, 1 WARNING (at or over --warn), 2 CRITICAL (at or over the quota),
        3 UNKNOWN (no daemon, unknown interface, bad arguments).
        """
    static let quota = OptionSpec(names: ["--limit"], value: "SIZE", help: "the quota: 10GiB, 500MB, 2G (IEC unless it says kB/MB/GB)")
    static let period = OptionSpec(
        names: ["--period"], value: "P",
        help: "day or month (default month; months start on the daemon's\nmonth_start_day)", completion: .words(["day", "month"]))
    static let warn = OptionSpec(names: ["--warn"], value: "PERCENT", help: "warn from this share of the quota (default 80%)")
    static let projected = OptionSpec(names: ["--projected"], help: "compare the month-end (day-end) projection instead")
    static let direction = OptionSpec(
        names: ["--direction"], value: "D", help: "rx, tx or both (default both)", completion: .words(["rx", "tx", "both"]))
    static let plan = OptionSpec(
        names: ["--plan"], value: "NAME",
        help: "a data plan of ifmeterd.conf instead: its interfaces, limit\nand period; its lowest threshold under 100% warns")
    static let options = [OptionSpec.interface, quota, period, warn, projected, direction, plan]

    var interfaces: [String]
    var limit: String?
    var period: String?
    var warn: String?
    var projected: Bool
    var direction: String
    var plan: String?

    init(_ parsed: ParsedArguments) throws(CLIError) {
        interfaces = try Subjects(parsed).interfaces
        limit = parsed.value(Self.quota)
        period = parsed.value(Self.period)
        warn = parsed.value(Self.warn)
        projected = parsed.isSet(Self.projected)
        direction = parsed.value(Self.direction) ?? "both"
        plan = parsed.value(Self.plan)
        guard ["rx", "tx", "both"].contains(direction) else {
            throw .usage("--direction: expected rx, tx or both, got \"\(direction)\"")
        }
    }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let session = try Session(socketCandidates: context.socketCandidates)
        let check = try plan == nil ? quotaCheck(session, units: context.units) : planCheck(session, units: context.units)
        if context.json { context.output.json(check) } else { context.output.write(check.message + "\n") }
        return check.status.rawValue
    }

    func planCheck(_ session: Session, units: Units) throws(CLIError) -> QuotaCheck {
        guard interfaces.isEmpty, limit == nil, period == nil, warn == nil else {
            throw .usage("check --plan: the plan says its interfaces, limit, period and thresholds; give only --projected besides")
        }
        let plans = try PlansView.fetch(session).plans
        guard let found = plans.first(where: { $0.name == plan }) else {
            throw CLIError(.failure, "no plan \"\(plan ?? "")\" is being watched"
                + (plans.isEmpty ? " (ifmeterd.conf has none)" : "; plans: \(plans.map(\.name).joined(separator: ", "))"))
        }
        return PlanCheck.evaluate(found, projected: projected, units: units)
    }

    func quotaCheck(_ session: Session, units: Units) throws(CLIError) -> QuotaCheck {
        guard interfaces.count == 1, let name = interfaces.first else {
            throw .usage("check: name one interface with -i")
        }
        guard let limitText = limit else { throw .usage("check: --limit needs a quota such as 10GiB") }
        let quota: UInt64
        do { quota = try ValueGrammar.size(limitText) } catch { throw .usage("check: --limit: \(error.description)") }
        guard quota > 0 else { throw .usage("check: --limit: a quota of 0 bytes is always exceeded; give at least 1 byte") }
        let periodName = period ?? UsagePeriod.month.rawValue
        guard let usagePeriod = UsagePeriod(rawValue: periodName), usagePeriod == .day || usagePeriod == .month else {
            throw .usage("check: --period is day or month, got \"\(periodName)\"")
        }
        let warnFraction: Double
        do { warnFraction = try ValueGrammar.percent(warn ?? "80%") } catch { throw .usage("check: --warn: \(error.description)") }
        guard warnFraction <= 1 else {
            throw .usage("check: --warn is a share of the quota from 0% to 100%, got \"\(warn ?? "")\"")
        }
        let span = usagePeriod == .day ? 2 * 86400.0 : 64 * 86400.0
        let usage = try session.client.call(
            UsageRequest(interface: name, period: usagePeriod, from: TimeArgument(seconds: session.now - span), projection: true),
            reading: UsageResult.self)
        return QuotaCheck.evaluate(interface: name, period: usagePeriod.rawValue, usage: usage, limit: quota, warnFraction: warnFraction,
                                   projected: projected, direction: direction, units: units, time: session.time)
    }
}
