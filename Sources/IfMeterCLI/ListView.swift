import IfMeterPresentation
import IfMeterCore
import IfMeterWire

/// `list`: every known interface, its class and why, state, current rate, totals since its
/// history began and what broke their continuity, and the kernel's counters in the current
/// epoch (since the interface was created or its counters last reset) with when that began.
enum ListView {
    /// Every known interface (or those `-i` or `--class` name), in one round trip.
    static func fetch(_ socketCandidates: [String], _ subjects: Subjects) throws(CLIError) -> (Session, InterfacesResult) {
        var request = QueryRequest()
        request.select = QuerySelection.every.rawValue
        request.include = [QueryPart.interfaces.rawValue]
        let (session, answer) = try Session.query(socketCandidates: socketCandidates, request)
        var interfaces = answer.interfaces ?? []
        if !subjects.interfaces.isEmpty {
            interfaces = interfaces.filter { subjects.interfaces.contains($0.name) || $0.alias.map(subjects.interfaces.contains) == true }
        } else if let interfaceClass = subjects.interfaceClass {
            interfaces = interfaces.filter { $0.class == interfaceClass }
        }
        return (session, InterfacesResult(interfaces: interfaces, footnote: answer.footnote))
    }

    static func render(_ result: InterfacesResult, _ session: Session, units: Units) -> String {
        var table = Table([.left, .left, .left, .right, .right, .right, .right, .left, .right, .right, .left, .left, .left])
        table.add(["interface", "class", "state", "rx rate", "tx rate", "rx", "tx", "since", "epoch rx", "epoch tx",
                   "epoch since", "continuity", "why this class"])
        for entry in result.interfaces {
            let state = entry.operstate == "absent"
                ? "absent" + (entry.lastSeen.map { " (last \(session.time.day($0)))" } ?? "")
                : entry.operstate
            table.add([
                entry.alias.map { "\($0) (\(entry.name))" } ?? entry.name, entry.class, state,
                entry.rate.map { units.rate($0.rxBytesPerSecond) } ?? "—",
                entry.rate.map { units.rate($0.txBytesPerSecond) } ?? "—",
                units.bytes(entry.rxBytes), units.bytes(entry.txBytes),
                entry.continuity.since.map { session.time.minute($0) } ?? "—",
                entry.epoch.map { units.bytes($0.rxBytes) } ?? "—", entry.epoch.map { units.bytes($0.txBytes) } ?? "—",
                entry.epoch.map { session.time.minute($0.since) } ?? "—",
                describe(entry.continuity), entry.classReason,
            ])
        }
        return table.render() + "\n" + EstimateLabel.footnote + "\n"
    }

    /// `intact`, or what interrupted the count: `2 resets, 1 gap`.
    static func describe(_ continuity: Continuity) -> String {
        func plural(_ count: Int, _ word: String) -> String? {
            count == 0 ? nil : "\(count) \(word)\(count == 1 ? "" : "s")"
        }
        let parts = [plural(continuity.resets, "reset"), plural(continuity.gaps, "gap"),
                     plural(continuity.implausibleDropped, "implausible")].compactMap { $0 }
        return parts.isEmpty ? "intact" : parts.joined(separator: ", ")
    }
}

/// `list`.
struct ListCommand: Subcommand {
    static let name = "list"
    static let aliases = ["--iflist", "--dbiflist"]
    static let summary = "interfaces: class and why, state, rates, totals, continuity"
    static let usage = "ifmeter list [-i NAME | --class CLASS]"
    static let about = """
        Every interface ifmeter knows, present or not: class and the evidence for it, state,
        rates over the last interval, totals since its history began, and continuity
        (resets, gaps and implausible jumps in that history).
        """
    static let options = OptionSpec.subjects

    var subjects: Subjects

    init(_ parsed: ParsedArguments) throws(CLIError) { subjects = try Subjects(parsed) }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let (session, result) = try ListView.fetch(context.socketCandidates, subjects)
        context.write(result) { ListView.render($0, session, units: context.units) }
        return 0
    }
}
