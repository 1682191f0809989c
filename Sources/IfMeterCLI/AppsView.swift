import IfMeterPresentation
import IfMeterCore
import IfMeterJSON
import IfMeterWire

/// `apps`: every service's, user's application's and link's remainder's subject
/// (docs/APPS.md) — today, this month and all time — busiest first.
enum AppsView {
    struct Entry {
        var name: String
        var kind: String
        var today: UsageRowResult?
        var thisMonth: UsageRowResult?
        var allTime: UsageRowResult?
        var labels: [String]
    }

    struct Result: JSONWritable {
        var apps: [Entry]
        /// Whether the daemon counts applications, and what says so or why not.
        var health: AppsHealth?
        /// The network asked for, as given.
        var network: String?
        var footnote: String
        /// With `--split`: each one's split this month, in the order of `apps`.
        var splits: [SplitRow?]? = nil
        /// Where this month began (the month tables' projection).
        var monthStart: Double? = nil

        func write(to w: inout JSONWriter) {
            w.beginObject()
            // Its section's view names the list (``SubjectSection/view``): every kind listed there.
            w.key(text: SubjectSection.apps.view)
            w.beginArray()
            for entry in apps { entry.write(to: &w) }
            w.endArray()
            w.key("footnote"); w.string(footnote)
            if let splits {
                w.key("split")
                w.beginArray()
                for split in splits { SplitRow.write(split, start: nil, to: &w) }
                w.endArray()
            }
            w.endObject()
        }
    }

    /// Every application's subject (or those `-i` names; or, with `network`, every
    /// application's on that network), with its day, month and all-time rows.
    static func fetch(_ socketCandidates: [String], _ names: [String], network: String? = nil) throws(CLIError) -> (Session, Result) {
        let now = Session.wallClock()
        var request = QueryRequest()
        if let network {
            request.select = QuerySelection.apps.rawValue
            request.network = try resolve(network, socketCandidates)
        } else if names.isEmpty {
            request.select = QuerySelection.apps.rawValue
        } else {
            request.interfaces = names
        }
        request.usage = [UsageSpec(.day, from: TimeArgument(seconds: now - 2 * 86400), projection: true),
                         UsageSpec(.month, from: TimeArgument(seconds: now - 40 * 86400), projection: true),
                         UsageSpec(.total)]
        request.include = [QueryPart.interfaces.rawValue, QueryPart.status.rawValue]
        let (session, answer) = try Session.query(socketCandidates: socketCandidates, request)
        guard answer.usage.count == 3 * answer.subjects.count else {
            throw CLIError(.protocolMismatch, "ifmeterd answered \(answer.usage.count) tables for \(answer.subjects.count) subjects, not 3 each")
        }
        var figures: [String: InterfaceResult] = [:]
        for interface in answer.interfaces ?? [] { figures[interface.name] = interface }
        var entries: [Entry] = []
        for (index, subject) in answer.subjects.enumerated() {
            let name = subject.name ?? ""
            let (days, months, total) = (answer.usage[3 * index], answer.usage[3 * index + 1], answer.usage[3 * index + 2])
            entries.append(Entry(
                name: Self.shown(name), kind: figures[name]?.kind ?? "application",
                today: days.rows.first { $0.start == days.projection?.start },
                thisMonth: months.rows.first { $0.start == months.projection?.start },
                allTime: total.rows.first, labels: figures[name]?.labels ?? []))
        }
        // Busiest first, as nethogs lists them; a name breaks ties, so the order is stable.
        entries.sort { ($0.allTime.map { $0.rxBytes &+ $0.txBytes } ?? 0, $1.name) > ($1.allTime.map { $0.rxBytes &+ $0.txBytes } ?? 0, $0.name) }
        return (session, Result(apps: entries, health: answer.status?.apps, network: network, footnote: EstimateLabel.appsFootnote,
                                monthStart: answer.usage.dropFirst().first?.projection?.start))
    }

    /// An application's subject on a network (`netapp:UUID/app:1000/firefox`) as the
    /// application's own: the view names the network once.
    static func shown(_ name: String) -> String {
        guard name.hasPrefix("netapp:"), let slash = name.firstIndex(of: "/") else { return name }
        return String(name[name.index(after: slash)...])
    }

    /// The UUID of the network `text` names (its name, SSID or UUID, as `networks` shows
    /// them), or `unknown`.
    static func resolve(_ text: String, _ socketCandidates: [String]) throws(CLIError) -> String {
        if text == "unknown" { return text }
        var request = QueryRequest()
        request.select = QuerySelection.networks.rawValue
        request.include = [QueryPart.networks.rawValue]
        let (_, answer) = try Session.query(socketCandidates: socketCandidates, request)
        let matches = (answer.networks ?? []).filter {
            $0.uuid == text || $0.name == text || $0.ssid.map { Array(text.utf8) == $0 } == true
        }
        guard let uuid = matches.first?.uuid else {
            throw CLIError(.usage, "no network named \"\(text)\" (ifmeter networks lists them; unknown is what crossed while "
                + "a network was not known)")
        }
        return uuid
    }

    static func render(_ result: Result, _ session: Session, units: Units) -> String {
        guard !result.apps.isEmpty else {
            guard let health = result.health, !health.counting else {
                return result.network.map { "No application has carried traffic on \($0).\n" } ?? "No application has carried traffic yet.\n"
            }
            return "Applications are not counted: \(health.detail)\n(docs/APPS.md: ifmeterd --attach-apps, as root)\n"
        }
        func bytes(_ row: UsageRowResult?) -> UInt64 { row.map { $0.rxBytes &+ $0.txBytes } ?? 0 }
        var columns = result.splits.map { splits in
            SplitColumns(units: units, rows: zip(splits, result.apps).map { ($0, bytes($1.thisMonth)) }, prefix: "month ")
        }
        var table = Table([.left, .left, .right, .right, .right, .right, .right] + (columns?.alignments ?? []))
        table.add(["application", "kind", "today", "month rx", "month tx", "this month", "all time"] + (columns?.header ?? []))
        for (index, entry) in result.apps.enumerated() {
            table.add([
                entry.name, entry.kind, units.bytes(bytes(entry.today)), units.bytes(entry.thisMonth?.rxBytes ?? 0),
                units.bytes(entry.thisMonth?.txBytes ?? 0), units.bytes(bytes(entry.thisMonth)), units.bytes(bytes(entry.allTime)),
            ] + (columns?.cells(result.splits?[index] ?? nil, total: bytes(entry.thisMonth)) ?? []))
        }
        return table.render() + (columns.map { "\n" + $0.notes.legend } ?? "") + "\n" + EstimateLabel.appsFootnote + "\n"
    }
}

extension AppsView.Entry: JSONWritable {
    func write(to w: inout JSONWriter) {
        w.beginObject()
        if let allTime { w.key("all_time"); allTime.write(to: &w) }
        w.key("kind"); w.string(kind)
        w.key("labels"); w.strings(labels)
        w.key("name"); w.string(name)
        if let thisMonth { w.key("this_month"); thisMonth.write(to: &w) }
        if let today { w.key("today"); today.write(to: &w) }
        w.endObject()
    }
}

/// `apps`.
struct AppsCommand: Subcommand {
    static let name = "apps"
    static let summary = "traffic per service and application (by cgroup): today, this month, all time"
    static let usage = "ifmeter apps [-i app:UID/NAME … [--split] | --network NETWORK | --now [--interval S] [--rows N] [--count N]] [--json]"
    static let about = """
        Every system service, user's application and rootless container ifmeterd counted by its
        cgroup (docs/APPS.md), busiest first: service:nginx.service, app:1000/firefox,
        app:1000/container/web. remainder:IFACE is what a link carried that no named application
        did (forwarded traffic, the kernel's own, ARP). Figures are in each link's terms (link
        headers included): an interface's applications plus its remainder are its counters.
        Another view of the interfaces' bytes, never added to them. Every view takes these
        names: ifmeter days -i app:1000/firefox. --network NETWORK (its name, SSID or UUID, as
        ifmeter networks shows it) lists what each application used on that network: which
        program used the hotspot. --now shows the busiest now, with their rates, as nethogs
        does: every --interval seconds (2) it asks for a sample and compares; redrawn in place
        on a terminal, a JSON line a frame with --json. ifmeter top -i app:1000/firefox gives an
        application's busiest days. Counting needs ifmeterd --attach-apps (root).
        """
    static let network = OptionSpec(
        names: ["--network"], value: "NETWORK", help: "what each application used on this network (name, SSID or UUID)")
    static let live = OptionSpec(names: ["--now"], help: "the busiest now, with their rates, until Ctrl-C")
    static let interval = OptionSpec(names: ["--interval"], value: "S", help: "with --now: seconds between frames (default 2)")
    static let rows = OptionSpec(names: ["--rows"], value: "N", help: "with --now: at most N applications a frame (default 20)")
    static let count = OptionSpec(names: ["--count"], value: "N", help: "with --now: stop after N frames")
    static let options = [OptionSpec.interface, network, live, interval, rows, count, .split]

    var names: [String]
    var network: String?
    var split: Bool
    /// With `--now`: seconds between frames, rows a frame, and how many frames.
    var live: (interval: Int32, rows: Int, count: Int?)?

    init(_ parsed: ParsedArguments) throws(CLIError) {
        names = try Subjects(parsed).interfaces
        network = parsed.value(Self.network)
        split = parsed.isSet(.split)
        if network != nil, !names.isEmpty { throw CLIError(.usage, "give -i or --network, not both") }
        if split && (network != nil || parsed.isSet(Self.live)) {
            throw CLIError(.usage, "--split splits each application's own traffic: not with --network or --now")
        }
        func number(_ option: OptionSpec, in range: ClosedRange<Int>) throws(CLIError) -> Int? {
            guard let text = parsed.value(option) else { return nil }
            guard let value = Int(text), range.contains(value) else {
                throw CLIError(.usage, "\(option.key): expected a whole number from \(range.lowerBound) to \(range.upperBound), got \"\(text)\"")
            }
            return value
        }
        let interval = try number(Self.interval, in: 1...3600), rows = try number(Self.rows, in: 1...10_000)
        let count = try number(Self.count, in: 1...1_000_000)
        if parsed.isSet(Self.live) {
            if network != nil || !names.isEmpty { throw CLIError(.usage, "--now shows every application: no -i or --network") }
            live = (Int32(interval ?? 2), rows ?? 20, count)
        } else if interval != nil || rows != nil || count != nil {
            throw CLIError(.usage, "--interval, --rows and --count go with --now")
        }
    }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        if let live {
            try AppsLiveView.run(context, count: live.count, interval: live.interval, rows: live.rows)
            return 0
        }
        var (session, result) = try AppsView.fetch(context.socketCandidates, names, network: network)
        if split {
            result.splits = try ScopeSplit.thisMonth(session, of: result.apps.map(\.name), rows: result.apps.map(\.thisMonth),
                                                     start: result.monthStart)
        }
        context.write(result) { AppsView.render($0, session, units: context.units) }
        return 0
    }
}
