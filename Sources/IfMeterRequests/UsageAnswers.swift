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
    let queries: [UsageTable]
    let store: Store
    let context: UsageContext
    let footnotes: Bool
    let maximumRows: Int
    /// What is answered, counted as it is: a name asked twice is answered twice, and a total
    /// or a class's sum is a row too. Each table counts at least one, since an empty one is
    /// answered as well.
    private var answered = 0
    private var totals: [String: (tally: BucketTally, since: Double)]?
    private var interfaceRecords: [StoredInterface]?
    /// What a save committed since the question was asked is in the store now, not unsaved.
    private let unsaved: UnsavedTraffic

    init(_ queries: [UsageTable], store: Store, context: UsageContext, footnotes: Bool = false,
         maximumRows: Int = UsageAnswers.maximumRows) {
        (self.queries, self.store, self.context, self.footnotes, self.maximumRows) = (queries, store, context, footnotes, maximumRows)
        unsaved = context.unsaved.unwritten(in: store.ledger)
    }

    /// `subjects`' tables, each subject's in the order of the queries.
    mutating func tables(_ subjects: some Collection<UsageSubject>) throws -> [UsageResult] {
        let names = subjects.compactMap { subject -> String? in
            if case .interface(let name) = subject { return name }
            return nil
        }
        let nameSet = Set(names)
        var columns: [[UsageResult]] = []
        let unsaved = self.unsaved
        let calendar = store.configuration.calendar
        let (store, context, maximumRows, footnotes) = (self.store, self.context, self.maximumRows, self.footnotes)
        for query in queries {
            let resolution = Resolution(rawValue: query.period.rawValue)
            let (from, to) = (query.from ?? .min, query.to ?? .max)
            func unsavedBuckets(_ name: String) -> [Int64: BucketTally] {
                resolution.map { unsaved.buckets(of: name, resolution: $0, from: from, to: to) } ?? [:]
            }
            func end(_ name: String) -> (Int64) -> Int64 {
                { calendar.end(of: resolution!, startingAt: $0, monthStartDay: store.configuration.monthStartDay(for: name)) }
            }
            var byName: [String: [UsageRow]] = [:]
            if let resolution, !names.isEmpty {
                guard var read = try store.queries.usageByName(
                    resolution: resolution, from: query.from, to: query.to, names: nameSet,
                    keep: { name, rows in query.keep(rows, adding: unsavedBuckets(name), end: end(name)) },
                    maximumRows: maximumRows - answered)
                else {
                    throw UsageAnswers.tooLarge(query.period, maximumRows)
                }
                // Names with nothing saved in the range yet.
                for name in nameSet where read[name] == nil {
                    let buckets = unsavedBuckets(name)
                    if !buckets.isEmpty { read[name] = query.keep([], adding: buckets, end: end(name)) }
                }
                byName = read
            } else if resolution == nil {
                if totals == nil { totals = try UsageAnswers.totals(store, adding: unsaved) }
            }
            var projections: [String: Projection] = [:]
            if query.projection, let resolution, resolution == .day || resolution == .month, !names.isEmpty {
                let now = Int64(context.now)
                var unread: [String] = []
                for name in nameSet {
                    // The current period's row, unsaved part added, is among the rows read when
                    // the range holds it and no `top` left it out: no second read.
                    let start = calendar.start(of: resolution, containing: now, monthStartDay: store.configuration.monthStartDay(for: name))
                    guard query.top == nil, from <= start, start < to else {
                        unread.append(name)
                        continue
                    }
                    let soFar = byName[name]?.last { $0.start == start }?.tally.traffic ?? .zero
                    projections[name] = StoreQueries.project(soFar, start: start, end: end(name)(start), now: now)
                }
                if !unread.isEmpty {
                    projections.merge(try store.queries.projections(unread, resolution: resolution, now: now) { name, start in
                        unsaved.buckets(of: name, resolution: resolution, from: start, to: start + 1)[start]?.traffic ?? .zero
                    }) { first, _ in first }
                }
            }
            var column: [UsageResult] = []
            for subject in subjects {
                let rows: [UsageRow]
                var projection: ProjectionResult?
                let tunnel: Bool
                switch subject {
                case .interface(let name):
                    tunnel = context.tunnels.contains(name)
                    if resolution != nil {
                        rows = byName[name] ?? []
                    } else {
                        rows = totals?[name].map { [UsageAnswers.totalRow([$0], now: context.now)] } ?? []
                    }
                    projection = projections[name].map(ProjectionResult.init)
                case .interfaceClass(let interfaceClass):
                    tunnel = interfaceClass == .tunnel
                    let known = context.classMembers[interfaceClass.rawValue] ?? []
                    if let resolution {
                        var buckets: [Int64: BucketTally] = [:]
                        for member in known {
                            buckets.merge(unsavedBuckets(member)) { sum, more in
                                var sum = sum
                                sum += more
                                return sum
                            }
                        }
                        rows = query.keep(try store.queries.usage(subject, resolution: resolution, from: query.from, to: query.to),
                                          adding: buckets, end: end(known.first ?? ""))
                    } else {
                        if interfaceRecords == nil { interfaceRecords = try store.queries.interfaces() }
                        let members = Set(interfaceRecords!.filter { $0.interfaceClass == interfaceClass.rawValue }.map(\.name))
                            .union(known)
                        let tallies = totals!.filter { members.contains($0.key) }.map(\.value)
                        rows = tallies.isEmpty ? [] : [UsageAnswers.totalRow(tallies, now: context.now)]
                    }
                }
                answered += max(1, rows.count)
                guard answered <= maximumRows else { throw UsageAnswers.tooLarge(query.period, maximumRows) }
                let (interface, className): (String?, String?) = switch subject {
                case .interface(let name): (name, nil)
                case .interfaceClass(let interfaceClass): (nil, interfaceClass.rawValue)
                }
                // A class's sum is labelled by its members' own losses too (a container's, under `virtual`).
                var members: [String] = []
                if let className, context.lostEvents.hasScoped {
                    if interfaceRecords == nil { interfaceRecords = try store.queries.interfaces() }
                    members = interfaceRecords!.filter { $0.interfaceClass == className }.map(\.name)
                }
                column.append(UsageResult(
                    interface: interface, class: className, period: query.period.rawValue,
                    rows: rows.map { row in
                        UsageAnswers.row(row, tunnel: tunnel, subject: interface ?? "",
                                   eventsLost: interface.map { context.lostEvents.count(from: Double(row.start), to: Double(row.end), for: $0) }
                                       ?? context.lostEvents.count(from: Double(row.start), to: Double(row.end), forAny: members))
                    },
                    projection: projection, footnote: footnotes ? EstimateLabel.footnote : nil))
            }
            columns.append(column)
        }
        var result: [UsageResult] = []
        result.reserveCapacity(subjects.count * queries.count)
        for index in columns.first?.indices ?? 0..<0 {
            for column in columns { result.append(column[index]) }
        }
        return result
    }
}

/// Usage tables for many subjects and periods: one store query per period, whatever the number
/// of interfaces (the `usage` and `query` commands both answer through it).
enum UsageAnswers {
    /// `footnotes` on each table (a `usage` answer's one table); a `query` answer has one for all.
    static func tables(_ subjects: [UsageSubject], _ queries: [UsageTable], store: Store, context: UsageContext,
                       footnotes: Bool = false, maximumRows: Int = Self.maximumRows) throws -> [UsageResult] {
        var reader = UsageReader(queries, store: store, context: context, footnotes: footnotes, maximumRows: maximumRows)
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
    static func totals(_ store: Store, adding unsaved: UnsavedTraffic) throws -> [String: (tally: BucketTally, since: Double)] {
        var totals = try store.queries.totals()
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
