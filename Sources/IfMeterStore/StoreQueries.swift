import FoundationEssentials
import IfMeterCore
import IfMeterHistory
import IfMeterJSON

/// One bucket of history: traffic in `[start, end)` and what broke its continuity.
public struct UsageRow: Hashable, Sendable {
    public var start: Int64
    public var end: Int64
    public var tally: BucketTally

    public init(start: Int64, end: Int64, tally: BucketTally) {
        self.start = start
        self.end = end
        self.tally = tally
    }

}

/// A linear projection of the current period to its end, labelled as such.
public struct Projection: Hashable, Sendable {
    public var start: Int64
    public var end: Int64
    public var soFar: Traffic
    /// `soFar` scaled from the elapsed part of the period to all of it.
    public var projected: Traffic
    /// How much of the period has passed, 0…1.
    public var elapsedFraction: Double
    public var labels: [EstimateLabel] { EstimateLabel.always + [.projection] }
}

/// Reads for answers: usage, totals, projections, events and records, each by the history
/// configuration the store had when these were handed out.
public struct StoreQueries {
    let connection: SQLiteConnection
    /// The calendar and billing days the rows are read by.
    public let configuration: HistoryConfiguration

    /// Buckets of `resolution` for `subject` whose start lies in `[from, to)` (either bound
    /// optional), oldest first. A class, or a merge of names, sums its interfaces bucket by bucket.
    public func usage(_ subject: UsageSubject, resolution: Resolution, from: Int64? = nil,
                      to: Int64? = nil) throws(StoreError) -> [UsageRow] {
        let (filter, key): (String, String) = switch subject {
        case .interface(let name): ("b.name = ?1", name)
        case .interfaceClass(let interfaceClass):
            ("b.name IN (SELECT name FROM interfaces WHERE class = ?1)", interfaceClass.rawValue)
        case .merged(let names):
            // The names as one JSON array, however many: no statement of a thousand parameters.
            ("b.name IN (SELECT value FROM json_each(?1))", { () -> String in
                var w = JSONWriter()
                w.strings(names)
                return String(decoding: w.bytes, as: UTF8.self)
            }())
        }
        let statement = try connection.prepare("""
            SELECT b.start, \(TallyColumns.select("b", summed: true)), min(b.name), max(b.imported)
            FROM buckets b
            WHERE \(filter) AND b.resolution = ?2 AND b.start >= ?3 AND b.start < ?4
            GROUP BY b.start ORDER BY b.start
            """, "read")
        statement.bind([.text(key), .text(resolution.rawValue), .int(from ?? Int64.min), .int(to ?? Int64.max)])
        var rows: [UsageRow] = []
        while try statement.step() {
            let start = statement.int64(0)
            let name = statement.text(1 + TallyColumns.count) ?? ""
            rows.append(UsageRow(
                start: start,
                end: configuration.calendar.end(of: resolution, startingAt: start,
                                                monthStartDay: configuration.monthStartDay(for: name)),
                tally: TallyColumns.tally(statement, from: 1, imported: 2 + TallyColumns.count)))
        }
        return rows
    }

    /// Buckets of `resolution` whose start lies in `[from, to)`, by name, oldest first, for every
    /// name or those in `names`: one query however many names (a view of a thousand interfaces
    /// is one statement, not a thousand). Each name's rows pass through `keep` as soon as they
    /// are read (a view that shows 30 days keeps 30), and the answer holds at most
    /// `maximumRows` rows: nil when it would hold more, so one question cannot fill memory.
    public func usageByName(resolution: Resolution, from: Int64? = nil, to: Int64? = nil, names: Set<String>? = nil,
                            keep: (String, [UsageRow]) -> [UsageRow] = { $1 },
                            maximumRows: Int = .max) throws(StoreError) -> [String: [UsageRow]]? {
        // A few names are looked up by key; many are filtered while reading every name's rows.
        let listed = names.map(Array.init).flatMap { $0.count <= Self.namesBoundInQuery ? $0 : nil }
        let nameFilter = listed.map { list in
            "AND name IN (" + list.indices.map { "?\($0 + 4)" }.joined(separator: ",") + ")"
        } ?? ""
        let statement = try connection.prepare("""
            SELECT name, start, \(TallyColumns.select("buckets")), imported FROM buckets
            WHERE resolution = ?1 AND start >= ?2 AND start < ?3 \(nameFilter)
            ORDER BY name, start
            """, "read")
        statement.bind([.text(resolution.rawValue), .int(from ?? Int64.min), .int(to ?? Int64.max)]
                       + (listed ?? []).map { .text($0) })
        var result: [String: [UsageRow]] = [:]
        var kept = 0
        var current: (name: String, monthStartDay: Int, rows: [UsageRow])?
        // A name's rows are kept once they are all read (one name's are bounded by the retention
        // its admin chose); false when the answer passes the budget.
        func finish() -> Bool {
            guard let finished = current else { return true }
            let rows = keep(finished.name, finished.rows)
            kept += rows.count
            result[finished.name] = rows
            return kept <= maximumRows
        }
        while try statement.step() {
            let name = statement.text(0) ?? ""
            if current?.name != name {
                guard finish() else { return nil }
                current = names.map { $0.contains(name) } == false
                    ? nil : (name, configuration.monthStartDay(for: name), [])
                if current == nil { continue }
            }
            let start = statement.int64(1)
            current!.rows.append(UsageRow(
                start: start,
                end: configuration.calendar.end(of: resolution, startingAt: start, monthStartDay: current!.monthStartDay),
                tally: TallyColumns.tally(statement, from: 2, imported: 2 + TallyColumns.count)))
        }
        return finish() ? result : nil
    }

    /// Each name's daily buckets in `[from, to)` summed: the saved part of a plan's period
    /// (periods are whole local days). One statement for every name.
    public func dailyTallies(from: Int64, to: Int64) throws(StoreError) -> [String: BucketTally] {
        let statement = try connection.prepare("""
            SELECT b.name, \(TallyColumns.select("b", summed: true)), max(b.imported)
            FROM buckets b WHERE b.resolution = ?1 AND b.start >= ?2 AND b.start < ?3
            GROUP BY b.name
            """, "read")
        statement.bind([.text(Resolution.day.rawValue), .int(from), .int(to)])
        var result: [String: BucketTally] = [:]
        while try statement.step() {
            result[statement.text(0) ?? ""] = TallyColumns.tally(statement, from: 1, imported: 1 + TallyColumns.count)
        }
        return result
    }

    /// Most names bound as parameters in one query (SQLite allows 32766 since 3.32).
    static let namesBoundInQuery = 500

    /// The current day or month of each of `names` so far, projected to its end; names without
    /// traffic in it project zero. One query per distinct period start (names with another
    /// billing day start their month elsewhere).
    /// `unsaved` adds what a name counted in the period and is not saved yet.
    public func projections(_ names: [String], resolution: Resolution, now: Int64,
                            unsaved: (String, Int64) -> Traffic = { _, _ in .zero }) throws(StoreError) -> [String: Projection] {
        var byStart: [Int64: [String]] = [:]
        for name in names {
            let start = configuration.calendar.start(of: resolution, containing: now,
                                                     monthStartDay: configuration.monthStartDay(for: name))
            byStart[start, default: []].append(name)
        }
        var result: [String: Projection] = [:]
        for (start, group) in byStart {
            let rows = try usageByName(resolution: resolution, from: start, to: start + 1, names: Set(group)) ?? [:]
            for name in group {
                let end = configuration.calendar.end(of: resolution, startingAt: start,
                                                     monthStartDay: configuration.monthStartDay(for: name))
                let soFar = (rows[name]?.first?.tally.traffic ?? .zero) + unsaved(name, start)
                result[name] = Self.project(soFar, start: start, end: end, now: now)
            }
        }
        return result
    }

    /// Everything since the name was first seen, across all its epochs; nil if never seen.
    public func total(_ name: String) throws(StoreError) -> (tally: BucketTally, since: Double)? {
        let statement = try connection.prepare("""
            SELECT * FROM (\(Self.totalsWithSince)) WHERE name = ?1
            """, "read")
        statement.bind([.text(name)])
        guard try statement.step() else { return nil }
        return (TallyColumns.tally(statement, from: 0, imported: TallyColumns.count + 2), try statement.time(TallyColumns.count))
    }

    /// Every name's total with when it was first seen, and its name and import mark after
    /// them: an interface's from its record, a network's (docs/NETWORKS.md), which has no
    /// interface record, from its network's, or from the epoch for `network:unknown`; an
    /// application's from its own (docs/APPS.md); a scope's (docs/SCOPES.md), which has no
    /// record, from its oldest daily bucket kept (one lookup in the buckets' key).
    static let totalsWithSince = """
        SELECT \(TallyColumns.select("t")), i.first_seen, i.name AS name, t.imported
        FROM interfaces i LEFT JOIN totals t ON t.name = i.name
        UNION ALL
        SELECT \(TallyColumns.select("t")), coalesce(n.first_seen, 0), t.name AS name, t.imported
        FROM totals t LEFT JOIN networks n ON t.name = 'network:' || n.uuid WHERE t.name GLOB 'network:*'
        UNION ALL
        SELECT \(TallyColumns.select("t")), s.first_seen, t.name AS name, t.imported
        FROM app_subjects s JOIN totals t ON t.name = s.subject
        UNION ALL
        SELECT \(TallyColumns.select("t")),
               coalesce((SELECT min(b.start) FROM buckets b WHERE b.name = t.name AND b.resolution = 'day'), 0),
               t.name AS name, t.imported
        FROM totals t WHERE t.name GLOB 'scope:*'
        """

    /// Every name's all-time total and first-seen time, in one query.
    public func totals() throws(StoreError) -> [String: (tally: BucketTally, since: Double)] {
        let statement = try connection.prepare(Self.totalsWithSince, "read")
        var result: [String: (tally: BucketTally, since: Double)] = [:]
        while try statement.step() {
            result[statement.text(TallyColumns.count + 1) ?? ""] = (
                TallyColumns.tally(statement, from: 0, imported: TallyColumns.count + 2), try statement.time(TallyColumns.count))
        }
        return result
    }

    /// The `limit` days with the most traffic (rx + tx) for `subject`, busiest first.
    public func topDays(_ subject: UsageSubject, limit: Int) throws(StoreError) -> [UsageRow] {
        let days = try usage(subject, resolution: .day)
        let ranked = days.sorted {
            let (a, b) = ($0.tally.traffic, $1.tally.traffic)
            return (a.rxBytes &+ a.txBytes, $1.start) > (b.rxBytes &+ b.txBytes, $0.start)
        }
        return Array(ranked.prefix(limit))
    }

    /// Events in `[from, to)`, oldest first, optionally of one kind or one interface.
    public func events(from: Double? = nil, to: Double? = nil, kind: CounterEvent.Kind? = nil,
                       interface: String? = nil, limit: Int = 1000) throws(StoreError) -> [CounterEvent] {
        let statement = try connection.prepare("""
            SELECT at, kind, interface, ifindex, previous, current, delta, detail, plan FROM events
            WHERE at >= ?1 AND at < ?2 AND (?3 IS NULL OR kind = ?3) AND (?4 IS NULL OR interface = ?4)
            ORDER BY at, id LIMIT ?5
            """, "read")
        statement.bind([.double(from ?? -Double.greatestFiniteMagnitude),
                        .double(to ?? Double.greatestFiniteMagnitude),
                        .optionalText(kind?.rawValue), .optionalText(interface), .int(Int64(limit))])
        let traffic = { (text: String?) in text.flatMap(TrafficColumn.traffic) }
        var events: [CounterEvent] = []
        while try statement.step() {
            guard let kind = statement.text(1).flatMap(CounterEvent.Kind.init(rawValue:)) else { continue }
            events.append(CounterEvent(
                kind: kind, at: statement.double(0), interface: statement.text(2),
                ifindex: statement.isNull(3) ? nil : try statement.int32(3),
                previous: traffic(statement.text(4)), current: traffic(statement.text(5)),
                delta: traffic(statement.text(6)), detail: statement.text(7) ?? "",
                plan: statement.text(8).flatMap(PlanColumn.facts)))
        }
        return events
    }

    /// The newest `limit` events-lost moments, oldest first, each with whose figures it concerns
    /// (its interface; nil for everyone's): what labels periods at start. The newest, since a
    /// loss labels the periods that contain it and new figures are asked for most.
    public func lostEventTimes(limit: Int) throws(StoreError) -> [(at: Double, scope: String?)] {
        let statement = try connection.prepare(
            "SELECT at, interface FROM events WHERE kind = ?1 ORDER BY at DESC, id DESC LIMIT ?2", "read")
        statement.bind([.optionalText(CounterEvent.Kind.eventsLost.rawValue), .int(Int64(limit))])
        var moments: [(at: Double, scope: String?)] = []
        while try statement.step() { moments.append((statement.double(0), statement.text(1))) }
        return moments.reversed()
    }

    /// The aliases `ifmeter alias` set, name → alias (kept in `interfaces.alias`); one that is
    /// not an alias (a file edited by hand) is left out.
    public func aliases() throws(StoreError) -> [String: String] {
        let statement = try connection.prepare("SELECT name, alias FROM interfaces WHERE alias IS NOT NULL", "read")
        var result: [String: String] = [:]
        while try statement.step() {
            guard let name = statement.text(0), let alias = statement.text(1), InterfaceAlias.problem(alias) == nil else { continue }
            result[name] = alias
        }
        return result
    }

    /// Every name with history.
    public func interfaces() throws(StoreError) -> [StoredInterface] {
        let statement = try connection.prepare(
            "SELECT name, class, kind, first_seen, last_seen FROM interfaces ORDER BY name", "read")
        var result: [StoredInterface] = []
        while try statement.step() {
            result.append(StoredInterface(
                name: statement.text(0) ?? "", interfaceClass: statement.text(1),
                kind: statement.text(2) ?? "", firstSeen: statement.double(3), lastSeen: statement.double(4)))
        }
        return result
    }

    /// The current day or month of `name` so far, and where it ends up at the same pace.
    public func projection(_ name: String, resolution: Resolution, now: Int64) throws(StoreError) -> Projection {
        try projections([name], resolution: resolution, now: now)[name]!
    }

    /// `soFar` in `[start, end)` at `now`, scaled to the whole period.
    public static func project(_ soFar: Traffic, start: Int64, end: Int64, now: Int64) -> Projection {
        let pace = PeriodPace(start: Double(start), end: Double(end), at: Double(now))
        return Projection(
            start: start, end: end, soFar: soFar,
            projected: soFar.combined(with: .zero) { value, _ in pace.projected(value) },
            elapsedFraction: pace.elapsedFraction)
    }
}
