import IfMeterCore
import IfMeterWire

/// What a history table is about: one interface, or the sum of a class.
enum UsageSubject {
    case interface(String)
    case interfaceClass(String)

    var title: String {
        switch self {
        case .interface(let name): name
        case .interfaceClass(let name): "class \(name)"
        }
    }

    func request(period: UsagePeriod) -> Request {
        switch self {
        case .interface(let name): Request(.usage, interface: name, period: period)
        case .interfaceClass(let name): Request(.usage, class: name, period: period)
        }
    }

    /// `--class` sums the class; `-i` names are taken as they are (the daemon says if one is
    /// unknown), without listing every interface; otherwise each of ``Session/subjects(_:)``.
    static func of(_ invocation: Invocation, _ session: Session) throws(CLIError) -> [UsageSubject] {
        if let interfaceClass = invocation.interfaceClass { return [.interfaceClass(interfaceClass)] }
        if !invocation.interfaces.isEmpty { return invocation.interfaces.map { .interface($0) } }
        return try session.subjects(invocation).map { .interface($0.name) }
    }
}

struct UsageTables: Encodable {
    var usage: [UsageResult]
    var footnote: String
}

/// `5min`, `hours`, `days`, `months`, `years` and `top`: history tables, newest last, with the
/// average rate of each period and marks for resets and gaps; `hours` adds a bar graph.
enum PeriodView {
    static func defaultLimit(_ invocation: Invocation) -> Int {
        switch (invocation.command, invocation.chartPeriod) {
        case (.fiveMinutes, _), (.hours, _), (.chart, "hours"): 24
        case (.days, _), (.chart, "days"): 30
        case (.months, _), (.chart, "months"): 12
        case (.top, _): 10
        default: 100
        }
    }

    static func fetch(_ session: Session, _ invocation: Invocation) throws(CLIError) -> UsageTables {
        let period = invocation.command.period ?? invocation.chartPeriod.map(chartResolution) ?? .day
        let subjects = try UsageSubject.of(invocation, session)
        let from = try session.timeArgument(invocation.from, option: "--from")
        let to = try session.timeArgument(invocation.to, option: "--to")
        let requests = subjects.map { subject -> Request in
            var request = subject.request(period: period)
            (request.from, request.to) = (from, to)
            return request
        }
        let limit = invocation.rowLimit(defaultLimit(invocation))
        var tables: [UsageResult] = []
        for answer in try session.client.send(requests) {
            var result = try DaemonClient.result(of: answer, as: UsageResult.self)
            if invocation.command == .top {
                result.rows = Array(result.rows.sorted {
                    ($0.rxBytes &+ $0.txBytes, $1.start) > ($1.rxBytes &+ $1.txBytes, $0.start)
                }.prefix(limit))
            } else {
                result.rows = Array(result.rows.suffix(limit))
            }
            tables.append(result)
        }
        return UsageTables(usage: tables, footnote: EstimateLabel.footnote)
    }

    static func chartResolution(_ chart: String) -> UsagePeriod {
        switch chart {
        case "hours": .hour
        case "months": .month
        default: .day
        }
    }

    /// How a period's start is written.
    static func label(_ start: Double, period: String, time: TimeText) -> String {
        switch UsagePeriod(rawValue: period) {
        case .fiveMinutes, .hour: time.format(start, "%Y-%m-%d %H:%M %Z")
        case .day: time.format(start, "%Y-%m-%d %a")
        case .month: time.format(start, "%Y-%m")
        default: time.format(start, "%Y")
        }
    }

    static func render(_ tables: UsageTables, _ session: Session, _ invocation: Invocation) -> String {
        let units = invocation.units
        var marks = Marks()
        var text = ""
        let graph = invocation.command == .hours
        for table in tables.usage {
            let subject = table.interface ?? table.class.map { "class \($0)" } ?? ""
            let heading = invocation.command == .top ? "top \(table.rows.count) days" : "by \(table.period)"
            text += "\(subject)  \(heading)\n"
            guard !table.rows.isEmpty else {
                text += "  no traffic recorded in this range\n\n"
                continue
            }
            var grid = Table([.left, .right, .right, .right, .right, .left] + (graph ? [.left] : []), indent: "  ")
            grid.add(["", "rx", "tx", "total", "avg rate", ""] + (graph ? [""] : []))
            let peak = table.rows.map { $0.rxBytes &+ $0.txBytes }.max() ?? 0
            for row in table.rows {
                let seconds = max(1, min(row.end, session.now) - row.start)
                let total = row.rxBytes &+ row.txBytes
                var note = marks.mark(row.continuity)
                let hours = (row.end - row.start) / 3600
                if UsagePeriod(rawValue: table.period) == .day && hours != 24 { note += (note.isEmpty ? "" : " ") + "(\(Int(hours)) h day)" }
                var cells = [label(row.start, period: table.period, time: session.time), units.bytes(row.rxBytes),
                             units.bytes(row.txBytes), units.bytes(total), units.rate(Double(total) / seconds), note]
                if graph { cells.append(bar(rx: row.rxBytes, tx: row.txBytes, peak: peak, width: 30)) }
                grid.add(cells)
            }
            text += grid.render()
            if graph { text += "  graph: r = rx, t = tx, scaled to the busiest hour\n" }
            text += "\n"
        }
        if tables.usage.isEmpty { text += "No interfaces with history yet.\n\n" }
        return text + marks.footer()
    }

    /// `rrrrtt`: the period's rx and tx as a share of the busiest period, `width` at most.
    static func bar(rx: UInt64, tx: UInt64, peak: UInt64, width: Int) -> String {
        guard peak > 0 else { return "" }
        let scale = Double(width) / Double(peak)
        let total = Int((Double(rx &+ tx) * scale).rounded())
        let rxWidth = min(total, Int((Double(rx) * scale).rounded()))
        return String(repeating: "r", count: rxWidth) + String(repeating: "t", count: total - rxWidth)
    }
}
