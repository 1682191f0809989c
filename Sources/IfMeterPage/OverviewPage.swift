import IfMeterCore
import IfMeterPresentation
import IfMeterWire

/// `/`: the host at a glance — each data plan as a bar, today and this month per interface
/// grouped by class, and containers, virtual machines and namespaces, present first — with
/// every figure's labels beside it, as the CLI says them.
public enum OverviewPage {
    /// The periods the interfaces' query asks for, per subject in this order.
    public static let interfacePeriods: [UsageSpec] = [UsageSpec(.day, last: 1), UsageSpec(.month, last: 1)]
    /// The periods the networks' query asks for.
    public static let networkPeriods: [UsageSpec] = [UsageSpec(.day, last: 1), UsageSpec(.month, last: 1)]
    /// The periods the owners' query asks for.
    public static let ownerPeriods: [UsageSpec] = [UsageSpec(.day, last: 1), UsageSpec(.month, last: 1), UsageSpec(.total)]

    /// The page, from the answers to the interfaces' query (`select: shown`, with status,
    /// interfaces and plans), the owners' (`select: owners`, with interfaces) and the networks'
    /// (`select: networks`, with networks; no section while there is none) and the
    /// applications' (`select: apps`, the busiest ``appRows``; none while none) and the scopes'
    /// (`select: scopes`, ``scopePeriods``; none while none); the first two asked for the rows
    /// `paging` says (``PagePaging``).
    public static func render(host: String, interfaces: QueryResult, owners: QueryResult, networks: QueryResult? = nil,
                              apps: QueryResult? = nil, scopes: QueryResult? = nil, percentiles: PercentileResult? = nil,
                              paging: PagePaging = PagePaging(), time: TimeText, units: Units) -> String {
        let status = interfaces.status
        var page = PageFrame.begin(title: "ifmeter — \(host)", host: host, status: status, time: time)
        page += "<section id=\"plans\"><h2>Data plans</h2>\n"
        let plans = interfaces.plans ?? []
        if plans.isEmpty {
            page += "<p class=\"facts\">No data plans. Add one to ifmeterd.conf (plan[NAME] = INTERFACES, .limit, .period; docs/PLANS.md).</p>\n"
        }
        for plan in plans { page += PlanBar.render(plan, time: time, units: units) }
        page += "</section>\n<section id=\"interfaces\"><h2>Interfaces</h2>\n"
        page += PagePaging.pager(interfaces, offset: paging.interfaces, other: paging.owners, isInterfaces: true)
        let states = Dictionary((interfaces.interfaces ?? []).map { ($0.name, $0) }) { first, _ in first }
        let perSubject = interfacePeriods.count
        var classes: [String] = []
        var members: [String: [Int]] = [:]
        // Containers', machines' and namespaces' subjects (`container:web`; no link name has a
        // colon) have a section of their own below.
        for (index, subject) in interfaces.subjects.enumerated() where !(subject.name ?? "").contains(":") {
            if members[subject.class] == nil { classes.append(subject.class) }
            members[subject.class, default: []].append(index)
        }
        if classes.isEmpty {
            page += PagePaging.pastTheEnd(interfaces, other: paging.owners, isInterfaces: true)
                ?? "<p class=\"facts\">No interface has carried traffic yet.</p>\n"
        }
        for interfaceClass in classes {
            page += "<h3>\(HTML.escape(interfaceClass))</h3>\n<div class=\"scroll\"><table class=\"usage\" data-class=\"\(HTML.escape(interfaceClass))\">"
            page += "<thead><tr><th>interface</th><th>now</th><th>today ↓</th><th>today ↑</th><th class=\"hide-narrow\">month ↓</th>"
            page += "<th class=\"hide-narrow\">month ↑</th><th>month</th><th class=\"hide-narrow\">marks</th></tr></thead><tbody>\n"
            for index in members[interfaceClass]! {
                let name = interfaces.subjects[index].name ?? interfaceClass
                let tables = interfaces.usage[(index * perSubject)..<min(interfaces.usage.count, (index + 1) * perSubject)]
                let today = tables.first?.rows.last
                let month = tables.dropFirst().first?.rows.last
                let absent = states[name]?.isAbsent ?? false
                page += "<tr class=\"subject\(absent ? " absent" : "")\" data-name=\"\(HTML.escape(name))\">"
                let shown = interfaces.subjects[index].alias.map { "\($0) (\(name))" } ?? name
                page += "<td class=\"name\"><a href=\"/subject?name=\(HTML.queryValue(name))\">\(HTML.escape(shown))</a>\(absent ? " (absent)" : "")</td>"
                page += "<td class=\"rate\" data-rate=\"\(HTML.escape(name))\">\(rate(states[name]?.rate, units))</td>"
                page += cell(today?.rxBytes, "today-rx", units) + cell(today?.txBytes, "today-tx", units)
                page += cell(month?.rxBytes, "month-rx", units, narrow: true) + cell(month?.txBytes, "month-tx", units, narrow: true)
                page += cell(month.map { $0.rxBytes &+ $0.txBytes }, "month-total", units)
                page += "<td class=\"hide-narrow\">\(labels((month?.labels ?? []) + (states[name]?.labels ?? [])))</td></tr>\n"
            }
            page += "</tbody></table></div>\n"
        }
        page += "</section>\n"
        if let percentiles, !percentiles.subjects.isEmpty { page += percentileSection(percentiles, time: time) }
        if let networks, !networks.subjects.isEmpty { page += networksSection(networks, units: units) }
        if let apps, !apps.subjects.isEmpty { page += appsSection(apps, units: units) }
        if let scopes, !scopes.subjects.isEmpty { page += scopesSection(scopes, units: units) }
        page += ownersSection(owners, paging: paging, time: time, units: units)
        page += PageFrame.end(footnote: interfaces.footnote)
        return page
    }

    /// Each network NetworkManager put an interface on (docs/NETWORKS.md): another view of the
    /// interfaces' bytes, so it is a section of its own and no sum includes it.
    private static func networksSection(_ networks: QueryResult, units: Units) -> String {
        var page = "<section id=\"networks\"><h2>Networks</h2>\n<p class=\"facts\">The interfaces' traffic again, by the "
            + "network it crossed: do not add it to theirs.</p>\n"
        page += "<div class=\"scroll\"><table class=\"usage networks\"><thead><tr><th>network</th><th>type</th><th>metered</th>"
        page += "<th>on</th><th>today</th><th>month</th><th>all time</th><th class=\"hide-narrow\">marks</th></tr></thead><tbody>\n"
        let perSubject = networkPeriods.count
        for (index, network) in (networks.networks ?? []).enumerated() {
            let tables = networks.usage[min(networks.usage.count, index * perSubject)..<min(networks.usage.count, (index + 1) * perSubject)]
            let rows = tables.map { $0.rows.last }
            page += "<tr class=\"subject\(network.interface == nil ? " absent" : "")\" data-name=\"\(HTML.escape(network.subject))\">"
            page += "<td class=\"name\"><a href=\"/subject?name=\(HTML.queryValue(network.subject))\">"
                + "\(HTML.escape(NetworkName.display(network)))</a></td>"
            page += "<td>\(HTML.escape(network.type))</td><td>\(HTML.escape(network.metered))</td>"
            page += "<td>\(HTML.escape(network.interface ?? "—"))</td>"
            for (offset, row) in rows.enumerated() {
                page += cell(row.map { $0.rxBytes &+ $0.txBytes }, ["today", "month"][offset], units,
                             detail: row.map { "↓ \(units.bytes($0.rxBytes)) ↑ \(units.bytes($0.txBytes))" })
            }
            page += cell(network.rxBytes &+ network.txBytes, "total", units,
                         detail: "↓ \(units.bytes(network.rxBytes)) ↑ \(units.bytes(network.txBytes))")
            page += "<td class=\"hide-narrow\">\(labels((rows.last??.labels ?? []) + network.labels))</td></tr>\n"
        }
        return page + "</tbody></table></div></section>\n"
    }

    private static func ownersSection(_ owners: QueryResult, paging: PagePaging, time: TimeText, units: Units) -> String {
        // Its heading names every kind listed there (``SubjectSection/heading``).
        var page = "<section id=\"owners\"><h2>\(HTML.escape(SubjectSection.owners.heading))</h2>\n"
        page += PagePaging.pager(owners, offset: paging.owners, other: paging.interfaces, isInterfaces: false)
        guard !owners.subjects.isEmpty else {
            return page + (PagePaging.pastTheEnd(owners, other: paging.interfaces, isInterfaces: false)
                ?? "<p class=\"facts\">None seen yet (attribute_owners; docs/NAMESPACES.md).</p>\n") + "</section>\n"
        }
        let states = Dictionary((owners.interfaces ?? []).map { ($0.name, $0) }) { first, _ in first }
        let perSubject = ownerPeriods.count
        page += "<div class=\"scroll\"><table class=\"usage owners\"><thead><tr><th>subject</th><th>now</th><th>today</th>"
        page += "<th>month</th><th>all time</th><th class=\"hide-narrow\">marks</th></tr></thead><tbody>\n"
        for (index, subject) in owners.subjects.enumerated() {
            let name = subject.name ?? ""
            let tables = owners.usage[(index * perSubject)..<min(owners.usage.count, (index + 1) * perSubject)]
            let rows = tables.map { $0.rows.last }
            let absent = states[name]?.isAbsent ?? true
            page += "<tr class=\"subject\(absent ? " absent" : "")\" data-name=\"\(HTML.escape(name))\">"
            page += "<td class=\"name\"><a href=\"/subject?name=\(HTML.queryValue(name))\">\(HTML.escape(name))</a>"
            page += absent ? " (gone\(states[name]?.lastSeen.map { ", last seen " + time.minute($0) } ?? ""))" : ""
            page += "</td><td class=\"rate\" data-rate=\"\(HTML.escape(name))\">\(rate(states[name]?.rate, units))</td>"
            for (offset, row) in rows.enumerated() {
                page += cell(row.map { $0.rxBytes &+ $0.txBytes }, ["today", "month", "total"][offset], units,
                             detail: row.map { "↓ \(units.bytes($0.rxBytes)) ↑ \(units.bytes($0.txBytes))" })
            }
            page += "<td class=\"hide-narrow\">\(labels((rows.last??.labels ?? []) + (states[name]?.labels ?? [])))</td></tr>\n"
        }
        return page + "</tbody></table></div></section>\n"
    }

    /// A byte figure: its units for a person, its exact bytes in `data-bytes` and the title.
    static func cell(_ bytes: UInt64?, _ role: String, _ units: Units, narrow: Bool = false, detail: String? = nil) -> String {
        let hide = narrow ? " hide-narrow" : ""
        guard let bytes else { return "<td class=\"\(role)\(hide)\" data-bytes=\"0\">—</td>" }
        let title = "\(bytes) bytes" + (detail.map { ": " + $0 } ?? "")
        return "<td class=\"\(role)\(hide)\" data-bytes=\"\(bytes)\" title=\"\(HTML.escape(title))\">\(HTML.escape(units.bytes(bytes)))</td>"
    }

    static func rate(_ rate: RateResult?, _ units: Units) -> String {
        guard let rate else { return "—" }
        return HTML.escape("↓ \(units.rate(rate.rxBytesPerSecond)) ↑ \(units.rate(rate.txBytesPerSecond))")
    }

    private static let always = Set((EstimateLabel.always + EstimateLabel.cgroupCounted).map(\.rawValue))
    /// Labels that say something broke a figure's continuity: drawn as marks.
    private static let marks = Set([EstimateLabel.resetInPeriod, .gapInPeriod, .implausibleDropped, .eventsLost, .importedVnstat,
                                    .tunnelDoubleCounted, .networkUnknown, .unnamedApps].map(\.rawValue))

    /// The labels beyond those every figure carries (``EstimateLabel/always``), once each.
    static func labels(_ labels: [String]) -> String {
        var seen = Set<String>()
        let shown = labels.filter { !always.contains($0) && seen.insert($0).inserted }
        guard !shown.isEmpty else { return "" }
        return "<span class=\"labels\">" + shown.map { label in
            "<span class=\"label\(marks.contains(label) ? " mark" : "")\">\(HTML.escape(label))</span>"
        }.joined(separator: " ") + "</span>"
    }
}
