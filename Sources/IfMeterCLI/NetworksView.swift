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

        func write(to w: inout JSONWriter) {
            w.beginObject()
            w.key("footnote"); w.string(footnote)
            w.key(text: SubjectSection.networks.view)
            w.beginArray()
            for entry in networks { entry.write(to: &w) }
            w.endArray()
            w.endObject()
        }
    }

    /// Every network with its day and month rows, in one round trip.
    static func fetch(_ socketCandidates: [String]) throws(CLIError) -> (Session, Result) {
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
        return (session, Result(networks: entries, footnote: EstimateLabel.footnote))
    }

    static func render(_ result: Result, _ session: Session, units: Units) -> String {
        guard !result.networks.isEmpty else {
            return "No network has been seen yet: ifmeterd reads them from NetworkManager (docs/NETWORKS.md).\n"
        }
        var table = Table([.left, .left, .left, .left, .right, .right, .right, .right, .right])
        table.add(["network", "type", "metered", "on", "today", "month rx", "month tx", "this month", "all time"])
        func total(_ row: UsageRowResult?) -> String { row.map { units.bytes($0.rxBytes &+ $0.txBytes) } ?? units.bytes(0) }
        var unknown = false
        for entry in result.networks {
            let network = entry.network
            unknown = unknown || network.labels.contains(EstimateLabel.networkUnknown.rawValue)
            table.add([
                NetworkName.display(network), network.type, network.metered, network.interface ?? "—", total(entry.today),
                units.bytes(entry.thisMonth?.rxBytes ?? 0), units.bytes(entry.thisMonth?.txBytes ?? 0),
                total(entry.thisMonth), units.bytes(network.rxBytes &+ network.txBytes),
            ])
        }
        return table.render()
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
    static let usage = "ifmeter networks [--json]"
    static let about = """
        Every network NetworkManager put an interface on (docs/NETWORKS.md): the Wi-Fi at home,
        a phone's hotspot, a SIM, a wired connection, a VPN. Its traffic today, this month and all
        time, its type, whether NetworkManager calls it metered, and the interface it is on now.
        An interface's traffic is split between its networks at each switch; networks add up to
        their interfaces. Every view takes a network's subject: ifmeter days -i network:UUID.
        """
    static let options: [OptionSpec] = []

    init(_ parsed: ParsedArguments) throws(CLIError) {}

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let (session, result) = try NetworksView.fetch(context.socketCandidates)
        context.write(result) { NetworksView.render($0, session, units: context.units) }
        return 0
    }
}
