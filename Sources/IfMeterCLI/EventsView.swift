import IfMeterPresentation
import IfMeterCore
import IfMeterWire

/// `events`: what happened to the counters (resets, re-creations, gaps, implausible jumps),
/// each with the daemon's explanation, so a figure that looks odd can be understood.
enum EventsView {
    static func fetch(_ session: Session, _ command: EventsCommand) throws(CLIError) -> EventsResult {
        var request = EventsRequest(
            interface: command.interface, from: try session.timeArgument(command.from, option: "--from"),
            to: try session.timeArgument(command.to, option: "--to"), limit: command.limit)
        request.kind = command.kind
        return try session.client.call(request, reading: EventsResult.self)
    }

    /// What each kind means for the figures, in a few words.
    static func meaning(_ kind: CounterEvent.Kind) -> String {
        switch kind {
        case .firstSight: "counting starts here"
        case .appeared: "new interface, counted from zero"
        case .epochStarted: "counters restart as a new epoch"
        case .reboot: "machine rebooted; counters start again"
        case .recreated: "interface re-created; counted from zero"
        case .deleted: "interface deleted; final counters banked"
        case .vanished: "interface gone; counted to its last reading"
        case .reset: "counters went back; counting goes on from zero"
        case .wrap: "32-bit counter wrapped; counted across it"
        case .implausible: "jump beyond the link's speed left out"
        case .gap: "not sampled for a while; traffic lands when counting resumed"
        case .rename: "renamed; history moves with the epoch"
        case .clockJump: "wall clock jumped; durations from the boot clock"
        case .eventsLost: "link events lost; resynchronised, links that came and went may be missing"
        case .bucketsFolded: "database unwritable for long; finest buckets dropped, coarser ones kept"
        case .planThreshold: "a data plan crossed a threshold"
        case .planPeriodStarted: "a data plan's new period began"
        }
    }

    static func render(_ result: EventsResult, _ session: Session, units: Units) -> String {
        guard !result.events.isEmpty else { return "No counter events in this range.\n" }
        var table = Table([.left, .left, .left, .right, .left])
        table.add(["time", "interface", "event", "delta", "what it means"])
        for event in result.events {
            let delta = event.delta.map { "rx \(units.bytes($0.rxBytes)) tx \(units.bytes($0.txBytes))" } ?? ""
            table.add([session.time.second(event.at), event.interface ?? event.plan.map { "plan \($0.plan)" } ?? "—",
                       event.kind.rawValue, delta,
                       "\(meaning(event.kind)): \(event.detail)"])
        }
        return table.render() + "\n" + EstimateLabel.footnote + "\n"
    }
}

/// `events`.
struct EventsCommand: Subcommand {
    static let name = "events"
    static let summary = "counter resets, re-creations, gaps, implausible jumps, and what they mean"
    static let usage = "ifmeter events [-i NAME] [--kind KIND] [--from TIME] [--to TIME] [--limit N]"
    static let about = """
        Counter events, oldest first, each with what it means for the figures. Kinds:
        first-sight, appeared, epoch-started, reboot, recreated, deleted, vanished, reset,
        wrap, implausible, gap, rename, clock-jump, events-lost, buckets-folded.
        """
    static let options = [OptionSpec.interface, .eventKind] + OptionSpec.range

    var interface: String?
    var kind: String?
    var from: String?
    var to: String?
    var limit: Int

    init(_ parsed: ParsedArguments) throws(CLIError) {
        let interfaces = try Subjects(parsed).interfaces
        guard interfaces.count <= 1 else { throw .usage("events: give at most one -i") }
        interface = interfaces.first
        kind = parsed.value(.eventKind)
        from = parsed.value(.from)
        to = parsed.value(.to)
        limit = try RowLimit.parse(parsed, default: 1000)
    }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let session = try Session(socketCandidates: context.socketCandidates)
        context.write(try EventsView.fetch(session, self)) { EventsView.render($0, session, units: context.units) }
        return 0
    }
}
