import IfMeterCore
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// `ifmeter`: parses the command line, runs one command, and returns the exit status.
public enum CLI {
    /// Runs the command line of this process.
    public static func main() -> Int32 {
        run(arguments: Array(CommandLine.arguments.dropFirst()), environment: processEnvironment())
    }

    public static func run(arguments: [String], environment: [String: String]) -> Int32 {
        let output = Output()
        let errors = Output(fd: STDERR_FILENO)
        defer {
            output.flush()
            errors.flush()
        }
        let isCheck = Invocation.names(.check, in: arguments)
        do {
            let invocation = try Invocation(arguments: arguments)
            return try run(invocation, locations: Locations(environment: environment, uid: getuid()),
                           output: output, errors: errors)
        } catch {
            output.flush()
            if isCheck {
                // Monitoring reads one line on stdout and the status; anything wrong is UNKNOWN.
                output.write("UNKNOWN: \(error.message)\n")
                return CheckStatus.unknown.rawValue
            }
            errors.write("ifmeter: \(error.message)\n")
            if error.status == .usage { errors.write("Run `ifmeter --help` for usage.\n") }
            return error.status.rawValue
        }
    }

    static func run(_ invocation: Invocation, locations: Locations, output: Output, errors: Output) throws(CLIError) -> Int32 {
        if invocation.helpRequested || invocation.command == .help {
            output.write(Help.text(for: invocation.command) + "\n")
            return 0
        }
        switch invocation.command {
        case .version:
            output.write("ifmeter \(IfMeterVersion.string) (protocol \(protocolVersion))\n")
            return 0
        case .log:
            try LogView.run(invocation, locations, output: output, errors: errors)
            return 0
        case .notify:
            try NotifyCommand.run(invocation, locations, output: output, errors: errors)
            return 0
        case .importHistory:
            let result = try ImportCommand.run(invocation, socketCandidates: locations.socketCandidates(flag: invocation.socket))
            if invocation.json { output.json(result) } else { output.write(ImportCommand.render(result, units: invocation.units)) }
            return 0
        case .metrics:
            // Answered while the daemon is still loading too (`ifmeter_up 0`), so no Session.
            try MetricsCommand.run(invocation, socketCandidates: locations.socketCandidates(flag: invocation.socket), output: output)
            return 0
        default:
            break
        }
        let candidates = locations.socketCandidates(flag: invocation.socket)
        switch invocation.command {
        case .summary:
            let (session, result) = try SummaryView.fetch(candidates, invocation)
            if invocation.json {
                output.json(result)
            } else {
                output.write(invocation.oneline ? SummaryView.oneline(result, units: invocation.units)
                                                : SummaryView.render(result, session, units: invocation.units))
            }
            return 0
        case .fiveMinutes, .hours, .days, .months, .years, .top:
            let (session, tables) = try PeriodView.fetch(candidates, invocation)
            if invocation.json { output.json(tables) } else { output.write(PeriodView.render(tables, session, invocation)) }
            return 0
        case .list:
            let (session, result) = try ListView.fetch(candidates, invocation)
            if invocation.json { output.json(result) } else { output.write(ListView.render(result, session, units: invocation.units)) }
            return 0
        case .chart:
            try chart(candidates, invocation, output: output)
            return 0
        case .containers:
            let (session, result) = try ContainersView.fetch(candidates, invocation)
            if invocation.json { output.json(result) } else { output.write(ContainersView.render(result, session, units: invocation.units)) }
            return 0
        default:
            break
        }
        let session = try Session(socketCandidates: candidates)
        switch invocation.command {
        case .events:
            let result = try EventsView.fetch(session, invocation)
            if invocation.json { output.json(result) } else { output.write(EventsView.render(result, session, units: invocation.units)) }
        case .status:
            if invocation.json { output.json(session.status) } else { output.write(StatusView.render(session.status, session)) }
        case .rate:
            try LiveView.rate(session, invocation, output: output)
        case .live:
            try LiveView.run(session, invocation, output: output)
        case .plans:
            let result = try PlansView.fetch(session)
            if invocation.json { output.json(result) } else { output.write(PlansView.render(result, session, units: invocation.units)) }
        case .check:
            let check = try invocation.plan == nil ? quotaCheck(session, invocation) : planCheck(session, invocation)
            if invocation.json { output.json(check) } else { output.write(check.message + "\n") }
            return check.status.rawValue
        case .help, .version, .log, .notify, .metrics, .importHistory, .summary, .fiveMinutes, .hours, .days, .months, .years, .top,
             .list, .chart, .containers:
            break
        }
        return 0
    }

    static func planCheck(_ session: Session, _ invocation: Invocation) throws(CLIError) -> QuotaCheck {
        guard invocation.interfaces.isEmpty, invocation.limit == nil, invocation.period == nil, invocation.warn == nil else {
            throw .usage("check --plan: the plan says its interfaces, limit, period and thresholds; give only --projected besides")
        }
        let plans = try PlansView.fetch(session).plans
        guard let plan = plans.first(where: { $0.name == invocation.plan }) else {
            throw CLIError(.failure, "no plan \"\(invocation.plan ?? "")\" is being watched"
                + (plans.isEmpty ? " (ifmeterd.conf has none)" : "; plans: \(plans.map(\.name).joined(separator: ", "))"))
        }
        return PlanCheck.evaluate(plan, projected: invocation.projected, units: invocation.units)
    }

    static func quotaCheck(_ session: Session, _ invocation: Invocation) throws(CLIError) -> QuotaCheck {
        guard invocation.interfaces.count == 1, let name = invocation.interfaces.first else {
            throw .usage("check: name one interface with -i")
        }
        guard let limitText = invocation.limit, let limit = Units.parseSize(limitText), limit > 0 else {
            throw .usage("check: --limit needs a quota such as 10GiB, got \(invocation.limit.map { "\"\($0)\"" } ?? "nothing")")
        }
        let periodName = invocation.period ?? UsagePeriod.month.rawValue
        guard let period = UsagePeriod(rawValue: periodName), period == .day || period == .month else {
            throw .usage("check: --period is day or month, got \"\(periodName)\"")
        }
        guard let warn = parsePercent(invocation.warn ?? "80%"), warn <= 1 else {
            throw .usage("check: --warn is a percentage of the quota such as 80%, got \"\(invocation.warn ?? "")\"")
        }
        let span = period == .day ? 2 * 86400.0 : 64 * 86400.0
        let usage = try session.client.call(
            Request(.usage, interface: name, period: period, from: TimeArgument(seconds: session.now - span), projection: true),
            reading: UsageResult.self)
        return QuotaCheck.evaluate(interface: name, period: period.rawValue, usage: usage, limit: limit, warnFraction: warn,
                                   projected: invocation.projected, direction: invocation.direction,
                                   units: invocation.units, time: session.time)
    }

    /// The first subject's table (or the class's) as an SVG chart.
    static func chart(_ socketCandidates: [String], _ invocation: Invocation, output: Output) throws(CLIError) {
        var single = invocation
        if let first = invocation.interfaces.first { single.interfaces = [first] }
        let (session, tables) = try PeriodView.fetch(socketCandidates, single)
        guard let usage = tables.usage.first else {
            throw CLIError(.failure, invocation.interfaceClass == nil ? "chart: no interface with history yet" : "chart: nothing to draw")
        }
        if invocation.json {
            output.json(usage)
            return
        }
        let subject = usage.interface ?? usage.class.map { "class \($0)" } ?? ""
        let svg = SVGChart.render(usage, subject: subject, time: session.time, units: invocation.units)
        guard let path = invocation.output, path != "-" else {
            output.write(svg)
            return
        }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw CLIError(.noInput, "cannot write \(path): \(Errno.current.description)") }
        defer { close(fd) }
        let bytes = Array(svg.utf8)
        let written = bytes.withUnsafeBytes { raw in retryingEINTR { write(fd, raw.baseAddress, raw.count) } }
        guard written == bytes.count else { throw CLIError(.failure, "cannot write \(path): \(Errno.current.description)") }
    }
}
