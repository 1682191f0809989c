import IfMeterPresentation
import IfMeterWire

extension SummaryView {
    /// Interfaces read before they are handed to be written.
    static let run = 256

    /// The default view written as its answer arrives: each run of interfaces rendered and
    /// written on a second thread (``Pipeline``) while the next is read. Before the daemon's
    /// first figures, what was rendered is held, and if no interface turns out to have any, the
    /// view says when they come instead (``waitingNote(_:_:)``).
    static func show(_ socketCandidates: [String], _ subjects: Subjects, units: Units, output: Output) throws(CLIError) {
        var session: Session?
        var writer: SummaryWriter?
        var pipeline: Pipeline<[InterfaceSummary]>?
        // The writing thread is done with `output` before this returns or throws.
        defer { pipeline?.finish() }
        var tables: [UsageResult] = []
        var run: [InterfaceSummary] = []
        var shown = 0
        let mismatch = CLIError(.protocolMismatch, "ifmeterd answered a summary without three tables for each interface; are ifmeter and ifmeterd the same version?")
        let answer: QueryResult
        do {
            answer = try Session.query(socketCandidates: socketCandidates, request(subjects), session: &session) {
                session, result, table throws(CLIError) in
                tables.append(table)
                guard tables.count == 3 else { return }
                guard shown < result.subjects.count else { throw mismatch }
                run.append(InterfaceSummary(result.subjects[shown], tables[0], tables[1], tables[2]))
                shown += 1
                tables.removeAll(keepingCapacity: true)
                guard run.count == Self.run else { return }
                if pipeline == nil {
                    let started = SummaryWriter(session: session, units: units, plans: result.plans ?? [], output: output)
                    writer = started
                    pipeline = Pipeline { started.write($0) }
                }
                pipeline!.hand(run)
                run = []
            }
        } catch where pipeline != nil {
            // Part of the view is out already: say it stops short.
            throw CLIError(error.status, "\(error.message) (the summary above ends where the answer broke off)")
        }
        guard tables.isEmpty, shown == answer.subjects.count, let session else { throw mismatch }
        // An answer of one run is written here: no thread for a view of a few interfaces.
        let last = writer ?? SummaryWriter(session: session, units: units, plans: answer.plans ?? [], output: output)
        if let pipeline {
            pipeline.hand(run)
            pipeline.finish()
        } else {
            last.write(run)
        }
        last.end()
    }
}

/// Writes the default view run by run (on ``SummaryView/show(_:_:units:output:)``'s second
/// thread): the text of each run as it is rendered, or, while the daemon has no figures yet and
/// no interface shown had any, held until one does or the view ends.
final class SummaryWriter {
    private var renderer: SummaryRenderer
    private let output: Output
    private var held: [UInt8]?
    /// The interfaces whose text is held: the note names them.
    private var waiting: [InterfaceSummary] = []
    private var shown = 0

    init(session: Session, units: Units, plans: [PlanResult], output: Output) {
        renderer = SummaryRenderer(session: session, units: units, plans: plans)
        self.output = output
        held = SummaryView.justStarted(session) ? [] : nil
    }

    func write(_ run: [InterfaceSummary]) {
        var text: [UInt8] = []
        text.reserveCapacity(512 * run.count)
        renderer.append(run, to: &text)
        shown += run.count
        guard let before = held else { return output.write(String(decoding: text, as: UTF8.self)) }
        if run.contains(where: \.hasTraffic) {
            held = nil
            waiting = []
            output.write(String(decoding: before + text, as: UTF8.self))
        } else {
            held = before + text
            waiting += run
        }
    }

    /// The view's end: its footer, or, if nothing was counted yet, when it will be.
    func end() {
        if held != nil, let note = SummaryView.waitingNote(waiting, renderer.session) { return output.write(note) }
        output.write(String(decoding: held ?? [], as: UTF8.self) + renderer.footer(empty: shown == 0))
    }
}
