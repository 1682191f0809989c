import IfMeterCore
import IfMeterHistory
import IfMeterService
import IfMeterStore
import IfMeterWire

extension UsageTable {
    /// The rows of one subject this table keeps, in the order answered, once `unsaved` buckets
    /// in the table's range are added to them (`end` gives a new row's end from its start).
    func keep(_ rows: [UsageRow], adding unsaved: [Int64: BucketTally] = [:], end: (Int64) -> Int64 = { $0 }) -> [UsageRow] {
        let rows = unsaved.isEmpty ? rows : UsageAnswers.merge(rows, unsaved, end: end)
        if let last { return Array(rows.suffix(last)) }
        if let top {
            return Array(rows.sorted {
                let (a, b) = ($0.tally.traffic, $1.tally.traffic)
                return (a.rxBytes &+ a.txBytes, $1.start) > (b.rxBytes &+ b.txBytes, $0.start)
            }.prefix(top))
        }
        return rows
    }
}

/// What usage tables need from the service, taken on the loop so the tables themselves can be
/// read from the store on its own thread.
public struct UsageContext: Sendable {
    /// Names whose figures are a tunnel's (labelled `tunnel-double-counted`).
    var tunnels: Set<String>
    var lostEvents: LostEvents
    /// Names the service knows (present, or with history it has seen).
    var known: Set<String>
    var now: Double
    /// What was counted and is not in the store yet, added to what it holds.
    var unsaved = UnsavedTraffic()
    /// The members of each class asked for as a sum, as the service knows them: whose unsaved
    /// traffic the sum adds.
    var classMembers: [String: [String]] = [:]
}

/// The tables of one answer's subjects, read in runs of subjects (a streamed answer is written
/// run by run): what every run shares — the unsaved traffic as of this store, the totals, the
/// interfaces' records, the rows answered so far against the budget — is read or counted once.
/// Lives on the store's thread for one job: no save runs between its runs.
struct UsageReader {
    let asked: [UsageTable]
    let store: StoreQueries
    let context: UsageContext
    let footnotes: Bool
    let maximumRows: Int
    /// What is answered, counted as it is: a name asked twice is answered twice, and a total
    /// or a class's sum is a row too. Each table counts at least one, since an empty one is
    /// answered as well.
    private var answered = 0
    /// Every name's total, unsaved part added; read only when a table is of totals.
    private let totals: [String: (tally: BucketTally, since: Double)]
    /// Every name's record, for a class's members; read only when some subject is a class whose
    /// total, or whose members' own lost events, are answered.
    private let interfaceRecords: [StoredInterface]
    /// What a save committed since the question was asked is in the store now, not unsaved.
    private let unsaved: UnsavedTraffic

    /// A reader of `tables` for `subjects` (read later, all at once or in runs of them).
    init(_ tables: [UsageTable], for subjects: some Collection<UsageSubject>, store: Store, context: UsageContext,
         footnotes: Bool = false, maximumRows: Int = UsageAnswers.maximumRows) throws {
        (asked, self.store, self.context, self.footnotes, self.maximumRows) = (tables, store.queries, context, footnotes, maximumRows)
        let unsaved = context.unsaved.unwritten(in: store.ledger)
        self.unsaved = unsaved
        let answersTotals = tables.contains { Resolution(rawValue: $0.period.rawValue) == nil }
        totals = answersTotals ? try UsageAnswers.totals(self.store, adding: unsaved) : [:]
        let asksClasses = subjects.contains { if case .interfaceClass = $0 { true } else { false } }
        interfaceRecords = asksClasses && (answersTotals || context.lostEvents.hasScoped) ? try self.store.interfaces() : []
    }

    /// `subjects`' tables, each subject's in the order of the tables asked for.
    mutating func tables(_ subjects: some Collection<UsageSubject>) throws -> [UsageResult] {
        let names = Set(subjects.compactMap { subject -> String? in
            if case .interface(let name) = subject { return name }
            return nil
        })
        var columns: [[UsageResult]] = []
        var answered = self.answered
        for table in asked {
            if let resolution = Resolution(rawValue: table.period.rawValue) {
                let read = BucketRead(table: table, resolution: resolution, unsaved: unsaved, configuration: store.configuration)
                columns.append(try bucketColumn(read, subjects, names: names, answered: &answered))
            } else {
                columns.append(try column(table, subjects, answered: &answered) { subject in (totalRows(of: subject), nil) })
            }
        }
        self.answered = answered
        return Self.interleaved(columns, count: subjects.count * asked.count)
    }

    /// One table of buckets for every subject: the names' rows read at once, their
    /// projections, and each class's sum.
    private func bucketColumn(_ read: BucketRead, _ subjects: some Collection<UsageSubject>, names: Set<String>,
                              answered: inout Int) throws -> [UsageResult] {
        let byName = try rowsByName(read, names: names, budget: maximumRows - answered)
        let projections = try projections(read, names: names, rows: byName)
        return try column(read.table, subjects, answered: &answered) { subject throws in
            switch subject {
            case .interface(let name): return (byName[name] ?? [], projections[name])
            case .interfaceClass: return (try classRows(read, subject), nil)
            case .merged(let names):
                let rows = try classRows(read, subject)
                return (rows, mergedProjection(read, rows, first: names.first))
            }
        }
    }

    /// One table's results, a subject's rows and projection from `rows`, each counted against
    /// the answer's budget as it is made.
    private func column(
        _ table: UsageTable, _ subjects: some Collection<UsageSubject>, answered: inout Int,
        rows: (UsageSubject) throws -> (rows: [UsageRow], projection: Projection?)
    ) throws -> [UsageResult] {
        var column: [UsageResult] = []
        for subject in subjects {
            let (rows, projection) = try rows(subject)
            answered += max(1, rows.count)
            guard answered <= maximumRows else { throw UsageAnswers.tooLarge(table.period, maximumRows) }
            column.append(result(subject, period: table.period, rows: rows, projection: projection))
        }
        return column
    }

    /// The rows of every name asked for, unsaved buckets added, including names with nothing
    /// saved in the range yet: one store query, of at most `budget` rows.
    private func rowsByName(_ read: BucketRead, names: Set<String>, budget: Int) throws -> [String: [UsageRow]] {
        guard !names.isEmpty else { return [:] }
        guard var byName = try store.usageByName(
            resolution: read.resolution, from: read.table.from, to: read.table.to, names: names,
            keep: { name, rows in read.keep(rows, of: name) }, maximumRows: budget)
        else {
            throw UsageAnswers.tooLarge(read.table.period, maximumRows)
        }
        for name in names where byName[name] == nil {
            let buckets = read.unsavedBuckets(of: name)
            if !buckets.isEmpty { byName[name] = read.table.keep([], adding: buckets, end: read.end(of: name)) }
        }
        return byName
    }

    /// The current day's or month's projection of each name, when the table asks for one.
    private func projections(_ read: BucketRead, names: Set<String>,
                             rows byName: [String: [UsageRow]]) throws -> [String: Projection] {
        guard read.table.projection, read.resolution == .day || read.resolution == .month, !names.isEmpty else { return [:] }
        let now = Int64(context.now)
        let (resolution, configuration) = (read.resolution, store.configuration)
        var projections: [String: Projection] = [:]
        var unread: [String] = []
        for name in names {
            // The current period's row, unsaved part added, is among the rows read when the
            // range holds it and no `top` left it out: no second read.
            let start = configuration.calendar.start(of: resolution, containing: now,
                                                     monthStartDay: configuration.monthStartDay(for: name))
            guard read.table.top == nil, read.from <= start, start < read.to else {
                unread.append(name)
                continue
            }
            let soFar = byName[name]?.last { $0.start == start }?.tally.traffic ?? .zero
            projections[name] = StoreQueries.project(soFar, start: start, end: read.end(of: name)(start), now: now)
        }
        guard !unread.isEmpty else { return projections }
        let unsaved = self.unsaved
        projections.merge(try store.projections(unread, resolution: resolution, now: now) { name, start in
            unsaved.buckets(of: name, resolution: resolution, from: start, to: start + 1)[start]?.traffic ?? .zero
        }) { first, _ in first }
        return projections
    }

    /// A class's (or a merge's) buckets, summed in the store, with its known members' unsaved
    /// buckets added.
    private func classRows(_ read: BucketRead, _ subject: UsageSubject) throws -> [UsageRow] {
        let known: [String] = switch subject {
        case .interfaceClass(let interfaceClass): context.classMembers[interfaceClass.rawValue] ?? []
        case .merged(let names): names
        case .interface: []
        }
        var buckets: [Int64: BucketTally] = [:]
        for member in known {
            buckets.merge(read.unsavedBuckets(of: member)) { sum, more in
                var sum = sum
                sum += more
                return sum
            }
        }
        return read.table.keep(try store.usage(subject, resolution: read.resolution, from: read.table.from, to: read.table.to),
                               adding: buckets, end: read.end(of: known.first ?? ""))
    }

    /// A merge's projection of the current day or month (its first member's calendar), from
    /// its summed rows, when the table asks for one and its range holds the current period.
    private func mergedProjection(_ read: BucketRead, _ rows: [UsageRow], first name: String?) -> Projection? {
        guard read.table.projection, read.resolution == .day || read.resolution == .month, read.table.top == nil,
              let name else { return nil }
        let now = Int64(context.now)
        let configuration = store.configuration
        let start = configuration.calendar.start(of: read.resolution, containing: now,
                                                 monthStartDay: configuration.monthStartDay(for: name))
        guard read.from <= start, start < read.to else { return nil }
        let soFar = rows.last { $0.start == start }?.tally.traffic ?? .zero
        return StoreQueries.project(soFar, start: start, end: read.end(of: name)(start), now: now)
    }

    /// A subject's total as one row; none for a subject without history.
    private func totalRows(of subject: UsageSubject) -> [UsageRow] {
        switch subject {
        case .interface(let name):
            return totals[name].map { [UsageAnswers.totalRow([$0], now: context.now)] } ?? []
        case .interfaceClass(let interfaceClass):
            let members = Set(recordedMembers(of: interfaceClass.rawValue))
                .union(context.classMembers[interfaceClass.rawValue] ?? [])
            let tallies = totals.filter { members.contains($0.key) }.map(\.value)
            return tallies.isEmpty ? [] : [UsageAnswers.totalRow(tallies, now: context.now)]
        case .merged(let names):
            let tallies = Set(names).compactMap { totals[$0] }
            return tallies.isEmpty ? [] : [UsageAnswers.totalRow(tallies, now: context.now)]
        }
    }

    /// The names whose records give them `className`.
    private func recordedMembers(of className: String) -> [String] {
        interfaceRecords.filter { $0.interfaceClass == className }.map(\.name)
    }

    /// One subject's table as answered, its rows labelled.
    private func result(_ subject: UsageSubject, period: UsagePeriod, rows: [UsageRow], projection: Projection?) -> UsageResult {
        if case .merged(let names) = subject { return mergedResult(names, period: period, rows: rows, projection: projection) }
        let (interface, className, tunnel): (String?, String?, Bool) = switch subject {
        case .interface(let name): (name, nil, context.tunnels.contains(name))
        case .interfaceClass(let interfaceClass): (nil, interfaceClass.rawValue, interfaceClass == .tunnel)
        case .merged: (nil, nil, false)
        }
        // A class's sum is labelled by its members' own losses too (a container's, under `virtual`).
        let members = className.map { context.lostEvents.hasScoped ? recordedMembers(of: $0) : [] } ?? []
        return UsageResult(
            interface: interface, class: className, period: period.rawValue,
            rows: rows.map { row in
                UsageAnswers.row(row, tunnel: tunnel, subject: interface ?? "",
                                 eventsLost: interface.map { context.lostEvents.count(from: Double(row.start), to: Double(row.end), for: $0) }
                                     ?? context.lostEvents.count(from: Double(row.start), to: Double(row.end), forAny: members))
            },
            projection: projection.map(ProjectionResult.init), footnote: footnotes ? EstimateLabel.footnote : nil)
    }

    /// A merge's table, named `a+b`: each row labelled with the union of what its members'
    /// rows would be (a tunnel's, a container's, their lost events), in the first member's order.
    private func mergedResult(_ names: [String], period: UsagePeriod, rows: [UsageRow], projection: Projection?) -> UsageResult {
        UsageResult(
            interface: UsageSubject.mergedName(names), class: nil, period: period.rawValue,
            rows: rows.map { row in
                let (start, end) = (Double(row.start), Double(row.end))
                var labels: [String] = []
                for name in names {
                    let lost = context.lostEvents.count(from: start, to: end, for: name)
                    for label in row.tally.labels(tunnel: context.tunnels.contains(name), eventsLost: lost, subject: name)
                    where !labels.contains(label.rawValue) { labels.append(label.rawValue) }
                }
                let lost = context.lostEvents.count(from: start, to: end, forAny: names)
                return UsageRowResult(UsageRowFields(start: start, end: end, continuity: row.tally.continuity(eventsLost: lost),
                                                     labels: labels), traffic: row.tally.traffic)
            },
            projection: projection.map(ProjectionResult.init), footnote: footnotes ? EstimateLabel.footnote : nil)
    }

    /// Each subject's tables together, in the order asked: the columns (one a table) read
    /// row by row.
    private static func interleaved(_ columns: [[UsageResult]], count: Int) -> [UsageResult] {
        var result: [UsageResult] = []
        result.reserveCapacity(count)
        for index in columns.first?.indices ?? 0..<0 {
            for column in columns { result.append(column[index]) }
        }
        return result
    }
}

/// One table of buckets as it is read: its resolution and range, and what is unsaved in it.
private struct BucketRead {
    let table: UsageTable
    let resolution: Resolution
    let unsaved: UnsavedTraffic
    let configuration: HistoryConfiguration

    var from: Int64 { table.from ?? .min }
    var to: Int64 { table.to ?? .max }

    func unsavedBuckets(of name: String) -> [Int64: BucketTally] {
        unsaved.buckets(of: name, resolution: resolution, from: from, to: to)
    }

    /// A new row's end from its start, in `name`'s calendar (its billing day).
    func end(of name: String) -> (Int64) -> Int64 {
        let (configuration, resolution) = (configuration, resolution)
        let monthStartDay = configuration.monthStartDay(for: name)
        return { configuration.calendar.end(of: resolution, startingAt: $0, monthStartDay: monthStartDay) }
    }

    /// `name`'s rows as the table keeps them, its unsaved buckets added.
    func keep(_ rows: [UsageRow], of name: String) -> [UsageRow] {
        table.keep(rows, adding: unsavedBuckets(of: name), end: end(of: name))
    }
}

/// Usage tables for many subjects and periods: one store query per period, whatever the number
/// of interfaces (the `usage` and `query` commands both answer through it).
enum UsageAnswers {
    /// `footnotes` on each table (a `usage` answer's one table); a `query` answer has one for all.
    static func tables(_ subjects: [UsageSubject], _ queries: [UsageTable], store: Store, context: UsageContext,
                       footnotes: Bool = false, maximumRows: Int = Self.maximumRows) throws -> [UsageResult] {
        var reader = try UsageReader(queries, for: subjects, store: store, context: context, footnotes: footnotes,
                                     maximumRows: maximumRows)
        return try reader.tables(subjects)
    }

    /// Most rows one answer holds (about 250 bytes each as JSON), every table's rows counted
    /// as answered (an empty table as one): every view at 4000 links asks far fewer (`days`
    /// keeps 30 per interface), and no question fills the daemon's memory.
    static let maximumRows = 200_000

    static func tooLarge(_ period: UsagePeriod, _ maximumRows: Int) -> WireError {
        WireError(.badRequest, "the \(period.rawValue) rows asked for pass \(maximumRows) in one answer; "
            + "ask for fewer interfaces, a shorter range (from, to) or fewer rows each (last, top)")
    }

    /// Every name's saved total with its unsaved part added, and names with only unsaved traffic.
    static func totals(_ store: StoreQueries, adding unsaved: UnsavedTraffic) throws -> [String: (tally: BucketTally, since: Double)] {
        var totals = try store.totals()
        for name in unsaved.names {
            guard let more = unsaved.total(of: name) else { continue }
            if var saved = totals[name] {
                saved.tally += more.tally
                totals[name] = saved
            } else {
                totals[name] = (more.tally, Double(more.since))
            }
        }
        return totals
    }

    /// `rows` (oldest first) with `unsaved` buckets added: into the row of the same start, or as
    /// rows of their own ending at `end(start)`.
    static func merge(_ rows: [UsageRow], _ unsaved: [Int64: BucketTally], end: (Int64) -> Int64) -> [UsageRow] {
        var merged = rows
        var left = unsaved
        for index in merged.indices {
            if let more = left.removeValue(forKey: merged[index].start) { merged[index].tally += more }
        }
        guard !left.isEmpty else { return merged }
        merged += left.map { UsageRow(start: $0.key, end: end($0.key), tally: $0.value) }
        return merged.sorted { $0.start < $1.start }
    }

    /// Everything since the earliest member was first seen, to now, in one row.
    static func totalRow(_ members: [(tally: BucketTally, since: Double)], now: Double) -> UsageRow {
        var tally = BucketTally()
        for member in members { tally += member.tally }
        return UsageRow(start: Int64(members.map(\.since).min()!), end: Int64(now.rounded(.up)), tally: tally)
    }

    /// A row as answered; `tunnel` for a tunnel's figures, `eventsLost` the events-lost
    /// events in its period. The one place a usage row's labels are decided.
    static func row(_ row: UsageRow, tunnel: Bool = false, subject: String = "", eventsLost: Int = 0) -> UsageRowResult {
        UsageRowResult(UsageRowFields(
            start: Double(row.start), end: Double(row.end), continuity: row.tally.continuity(eventsLost: eventsLost),
            labels: row.tally.labels(tunnel: tunnel, eventsLost: eventsLost, subject: subject).map(\.rawValue)),
            traffic: row.tally.traffic)
    }

    /// Names `store` or the service knows; the others, in the order given, are unknown.
    static func unknown(_ names: [String], store: Store, context: UsageContext) throws -> [String] {
        var unknown: [String] = []
        for name in names where !context.known.contains(name) {
            if try store.queries.total(name) == nil { unknown.append(name) }
        }
        return unknown
    }
}

extension ProjectionResult {
    init(_ projected: Projection) {
        self.init(start: Double(projected.start), end: Double(projected.end), elapsedFraction: projected.elapsedFraction,
                  rxBytes: projected.projected.rxBytes, txBytes: projected.projected.txBytes,
                  labels: projected.labels.map(\.rawValue))
    }
}
