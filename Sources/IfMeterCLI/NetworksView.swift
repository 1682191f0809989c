import IfMeterPresentation
import IfMeterCore
import IfMeterJSON
import IfMeterWire

/// `networks`: every network NetworkManager put an interface on (docs/NETWORKS.md) — today,
/// this month and all time, with its type, whether it is metered, and where it is now.
enum NetworksView {
    struct Entry {
        var network: NetworkResult
        var today: UsageRowResult?
        var thisMonth: UsageRowResult?
    }

    struct Result: JSONWritable {
        var networks: [Entry]
        var footnote: String
        /// With `--split`: each network's split this month, in the order of `networks`.
        var splits: [SplitRow?]?

        func write(to w: inout JSONWriter) {
            w.beginObject()
            w.key("footnote"); w.string(footnote)
            w.key(text: SubjectSection.networks.view)
            w.beginArray()
            for entry in networks { entry.write(to: &w) }
            w.endArray()
            if let splits {
                w.key("split")
                w.beginArray()
                for split in splits { SplitRow.write(split, start: nil, to: &w) }
                w.endArray()
            }
            w.endObject()
        }
    }

    /// Every network with its day and month rows, in one round trip; with `split`, their
    /// month's split in one more.
    static func fetch(_ socketCandidates: [String], split: Bool = false) throws(CLIError) -> (Session, Result) {
        let now = Session.wallClock()
        var request = QueryRequest()
        request.select = QuerySelection.networks.rawValue
        request.usage = [UsageSpec(.day, from: TimeArgument(seconds: now - 2 * 86400), projection: true),
                         UsageSpec(.month, from: TimeArgument(seconds: now - 40 * 86400), projection: true)]
        request.include = [QueryPart.networks.rawValue]
        let (session, answer) = try Session.query(socketCandidates: socketCandidates, request)
        let networks = answer.networks ?? []
        guard answer.usage.count == 2 * answer.subjects.count, networks.count == answer.subjects.count else {
            throw CLIError(.protocolMismatch, "ifmeterd answered \(answer.usage.count) tables and \(networks.count) networks "
                + "for \(answer.subjects.count) subjects")
        }
        let entries = networks.enumerated().map { index, network in
            let (days, months) = (answer.usage[2 * index], answer.usage[2 * index + 1])
            return Entry(network: network, today: days.rows.first { $0.start == days.projection?.start },
                         thisMonth: months.rows.first { $0.start == months.projection?.start })
        }
        var result = Result(networks: entries, footnote: EstimateLabel.footnote)
        if split {
            result.splits = try ScopeSplit.thisMonth(session, of: networks.map(\.subject), rows: entries.map(\.thisMonth),
                                                     start: answer.usage.dropFirst().first?.projection?.start)
        }
        return (session, result)
    }

    static func render(_ result: Result, _ session: Session, units: Units) -> String {
        guard !result.networks.isEmpty else {
            return "No network has been seen yet: ifmeterd reads them from NetworkManager (docs/NETWORKS.md).\n"
        }
        var columns = result.splits.map { splits in
            SplitColumns(units: units, rows: zip(splits, result.networks).map { ($0, $1.thisMonth.map { $0.rxBytes &+ $0.txBytes } ?? 0) },
                         prefix: "month ")
        }
        var table = Table([.left, .left, .left, .left, .right, .right, .right, .right, .right] + (columns?.alignments ?? []))
        table.add(["network", "type", "metered", "on", "today", "month rx", "month tx", "this month", "all time"] + (columns?.header ?? []))
        func total(_ row: UsageRowResult?) -> String { row.map { units.bytes($0.rxBytes &+ $0.txBytes) } ?? units.bytes(0) }
        var unknown = false
        for (index, entry) in result.networks.enumerated() {
            let network = entry.network
            unknown = unknown || network.labels.contains(EstimateLabel.networkUnknown.rawValue)
            table.add([
                NetworkName.display(network), network.type, network.metered, network.interface ?? "—", total(entry.today),
                units.bytes(entry.thisMonth?.rxBytes ?? 0), units.bytes(entry.thisMonth?.txBytes ?? 0),
                total(entry.thisMonth), units.bytes(network.rxBytes &+ network.txBytes),
            ] + (columns?.cells(result.splits?[index] ?? nil, total: entry.thisMonth.map { $0.rxBytes &+ $0.txBytes } ?? 0) ?? []))
        }
        return table.render() + (columns.map { "\n" + $0.notes.legend } ?? "")
            + (unknown ? "\n\"unknown\" is what crossed an interface while its network was not known (NetworkManager or ifmeterd not running).\n" : "")
            + "\n" + EstimateLabel.footnote + "\n"
    }
}

extension NetworksView.Entry: JSONWritable {
    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("network"); network.write(to: &w)
        if let thisMonth { w.key("this_month"); thisMonth.write(to: &w) }
        if let today { w.key("today"); today.write(to: &w) }
        w.endObject()
    }
}

/// `networks`.
struct NetworksCommand: Subcommand {
    static let name = "networks"
    static let summary = "traffic per network (Wi-Fi, mobile, wired connection): today, this month, all time"
    static let usage = "ifmeter networks [--split] [--json]"
    static let about = """
        Every network NetworkManager put an interface on (docs/NETWORKS.md): the Wi-Fi at home,
        a phone's hotspot, a SIM, a wired connection, a VPN. Its traffic today, this month and all
        time, its type, whether NetworkManager calls it metered, and the interface it is on now.
        An interface's traffic is split between its networks at each switch; networks add up to
        their interfaces. Every view takes a network's subject: ifmeter days -i network:UUID.
        """
    static let options: [OptionSpec] = [.split]

    var split: Bool

    init(_ parsed: ParsedArguments) throws(CLIError) { split = parsed.isSet(.split) }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let (session, result) = try NetworksView.fetch(context.socketCandidates, split: split)
        context.write(result) { NetworksView.render($0, session, units: context.units) }
        return 0
    }
}
