import IfMeterPresentation
import IfMeterCore
import IfMeterJSON
import IfMeterWire

/// `containers`: every container's, virtual machine's and namespace's subject (docs/NAMESPACES.md) — today, this
/// month, all time, the current rate, who owns it and the host-side link it is counted through
/// now — from the owner's point of view.
enum ContainersView {
    struct Entry {
        var name: String
        var state: String
        var owner: OwnerResult?
        var rate: RateResult?
        var today: UsageRowResult?
        var thisMonth: UsageRowResult?
        var allTime: UsageRowResult?
        var labels: [String]
    }

    struct Result: JSONWritable {
        var containers: [Entry]
        var footnote: String

        func write(to w: inout JSONWriter) {
            w.beginObject()
            // Its section's view names the list (``SubjectSection/view``): every kind listed there.
            w.key(text: SubjectSection.owners.view)
            w.beginArray()
            for entry in containers { entry.write(to: &w) }
            w.endArray()
            w.key("footnote"); w.string(footnote)
            w.endObject()
        }
    }

    /// Every owner's subject (or those `-i` names), with its day, month and all-time rows, in
    /// one round trip.
    static func fetch(_ socketCandidates: [String], _ names: [String]) throws(CLIError) -> (Session, Result) {
        let now = Session.wallClock()
        var request = QueryRequest()
        if names.isEmpty {
            request.select = QuerySelection.owners.rawValue
        } else {
            request.interfaces = names
        }
        request.usage = [UsageSpec(.day, from: TimeArgument(seconds: now - 2 * 86400), projection: true),
                         UsageSpec(.month, from: TimeArgument(seconds: now - 40 * 86400), projection: true),
                         UsageSpec(.total)]
        request.include = [QueryPart.interfaces.rawValue]
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
            let interface = figures[name]
            entries.append(Entry(
                name: name, state: interface?.operstate ?? "absent", owner: interface?.owner, rate: interface?.rate,
                today: days.rows.first { $0.start == days.projection?.start },
                thisMonth: months.rows.first { $0.start == months.projection?.start },
                allTime: total.rows.first, labels: interface?.labels ?? []))
        }
        return (session, Result(containers: entries, footnote: EstimateLabel.footnote))
    }

    static func render(_ result: Result, _ session: Session, units: Units) -> String {
        guard !result.containers.isEmpty else {
            return "No container, virtual machine or namespace has been seen yet (docs/NAMESPACES.md says what is attributed).\n"
        }
        var table = Table([.left, .left, .left, .left, .right, .right, .right, .right, .right, .right, .right])
        table.add(["container", "kind", "via", "state", "today", "month rx", "month tx", "this month", "all time",
                   "rx rate", "tx rate"])
        func total(_ row: UsageRowResult?) -> String { row.map { units.bytes($0.rxBytes &+ $0.txBytes) } ?? units.bytes(0) }
        for entry in result.containers {
            table.add([
                entry.name, entry.owner?.kind ?? "—", entry.owner?.alias ?? "—", entry.state, total(entry.today),
                units.bytes(entry.thisMonth?.rxBytes ?? 0), units.bytes(entry.thisMonth?.txBytes ?? 0),
                total(entry.thisMonth), total(entry.allTime),
                entry.rate.map { units.rate($0.rxBytesPerSecond) } ?? "—",
                entry.rate.map { units.rate($0.txBytesPerSecond) } ?? "—",
            ])
        }
        return table.render() + "\nrx is what the container received, tx what it sent (read on the host's end of its veth).\n"
            + EstimateLabel.footnote + "\n"
    }
}

extension ContainersView.Entry: JSONWritable {
    func write(to w: inout JSONWriter) {
        w.beginObject()
        if let allTime { w.key("all_time"); allTime.write(to: &w) }
        w.key("labels"); w.strings(labels)
        w.key("name"); w.string(name)
        if let owner { w.key("owner"); owner.write(to: &w) }
        if let rate { w.key("rate"); rate.write(to: &w) }
        w.key("state"); w.string(state)
        if let thisMonth { w.key("this_month"); thisMonth.write(to: &w) }
        if let today { w.key("today"); today.write(to: &w) }
        w.endObject()
    }
}

/// `containers`.
struct ContainersCommand: Subcommand {
    static let name = "containers"
    static let summary = "traffic per container, pod, VM and network namespace: today, this month, all time"
    static let usage = "ifmeter containers [-i container:NAME …] [--json]"
    static let about = """
        Every container, Kubernetes pod, virtual machine and network namespace ifmeterd counted
        (docs/NAMESPACES.md): its traffic today, this month and all time, its rate now, who owns
        it (podman, docker, kubernetes, nspawn, lxc, libvirt, netns, process) and the host-side
        link it is counted through now ("via"). A container keeps its history across restarts and
        new veth names; rx is what it received, tx what it sent. Every view takes its name:
        ifmeter days -i container:web, ifmeter hours -i vm:db, ifmeter days -i pod:team-a/web-0.
        """
    static let options = [OptionSpec.interface]

    var names: [String]

    init(_ parsed: ParsedArguments) throws(CLIError) { names = try Subjects(parsed).interfaces }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let (session, result) = try ContainersView.fetch(context.socketCandidates, names)
        context.write(result) { ContainersView.render($0, session, units: context.units) }
        return 0
    }
}
