import IfMeterCore
import IfMeterHistory
import IfMeterStore
import IfMeterWire

extension RequestHandlers {
    /// `percentile`: the subjects chosen as `query` chooses them, their 5-minute rows read on
    /// the store's thread as `usage` reads them (unsaved traffic added), each subject's slots
    /// given to ``BurstablePercentile``.
    func percentile(_ request: PercentileRequest.Checked) throws -> StoreJob<PercentileResult> {
        let job = try query(QueryRequest.Checked(subjects: request.subjects, tables: []))
        let (span, now) = (request.span, Int64(context.now.rounded(.down)))
        return { store in try PercentileAnswers.result(job, span: span, now: now, store: store) }
    }
}

/// The 95th percentile of each subject of a query, from the rows a `usage` of 5-minute
/// buckets answers: what `usage period=5min` says of a slot is what the percentile takes.
enum PercentileAnswers {
    /// Subjects read together: a month of slots is about 9000 rows each.
    static let run = 16

    /// The slots a subject's figure counts, and where its period ends.
    struct Bounds: Hashable {
        var start: Int64
        var end: Int64
        var periodEnd: Int64
    }

    /// `subject`'s slots for `span` as of `now`: the period in the subject's calendar (its
    /// billing day), or the range, cut at the last slot that ended by `now`.
    static func bounds(_ span: PercentileRequest.Checked.Span, of subject: UsageSubject, now: Int64,
                       configuration: HistoryConfiguration) -> Bounds {
        let calendar = configuration.calendar
        let day = switch subject {
        case .interface(let name): configuration.monthStartDay(for: name)
        case .interfaceClass: configuration.defaultMonthStartDay
        // As a merge's rows and projection: its first member's billing day.
        case .merged(let names): configuration.monthStartDay(for: names.first ?? "")
        }
        let (start, periodEnd): (Int64, Int64)
        switch span {
        case .period(.month):
            start = calendar.start(of: .month, containing: now, monthStartDay: day)
            periodEnd = calendar.end(of: .month, startingAt: start, monthStartDay: day)
        case .period(.lastMonth):
            periodEnd = calendar.start(of: .month, containing: now, monthStartDay: day)
            start = calendar.start(of: .month, containing: periodEnd - 1, monthStartDay: day)
        case .period(.day):
            start = calendar.start(of: .day, containing: now)
            periodEnd = calendar.end(of: .day, startingAt: start)
        case .range(let from, let to):
            (start, periodEnd) = (from, to ?? now)
        }
        let lastEnded = calendar.start(of: .fiveMinutes, containing: now)
        return Bounds(start: start, end: max(start, min(periodEnd, lastEnded)), periodEnd: periodEnd)
    }

    static func result(_ job: QueryJob, span: PercentileRequest.Checked.Span, now: Int64, store: Store) throws -> PercentileResult {
        try job.checkNames(store)
        let configuration = store.configuration
        let slots = job.subjects.map { Self.bounds(span, of: $0, now: now, configuration: configuration) }
        let retainedFrom = configuration.retention.fiveMinutes.map { now - $0 }
        let period = switch span {
        case .period(let period): period.rawValue
        case .range: "range"
        }
        var entries: [PercentileEntry] = []
        entries.reserveCapacity(job.subjects.count)
        guard let from = slots.map(\.start).min(), let to = slots.map(\.end).max() else {
            return PercentileResult(subjects: [], footnote: job.head.footnote)
        }
        let table = UsageTable(period: .fiveMinutes, from: from, to: max(from + 1, to))
        var reader = try UsageReader([table], for: job.subjects, store: store, context: job.context, maximumRows: .max)
        var start = 0
        while start < job.subjects.count {
            let end = min(start + run, job.subjects.count)
            let tables = try reader.tables(job.subjects[start..<end])
            for (offset, usage) in tables.enumerated() {
                let index = start + offset
                entries.append(entry(usage, bounds: slots[index], subject: job.head.subjects[index], period: period,
                                     retainedFrom: retainedFrom, base: baseLabels(job.subjects[index], job.context)))
            }
            start = end
        }
        return PercentileResult(subjects: entries, footnote: job.head.footnote)
    }

    /// The labels every figure of `subject` carries, whatever its rows say.
    static func baseLabels(_ subject: UsageSubject, _ context: UsageContext) -> [String] {
        let (name, tunnel): (String, Bool) = switch subject {
        case .interface(let name): (name, context.tunnels.contains(name))
        case .interfaceClass(let interfaceClass): ("", interfaceClass == .tunnel)
        case .merged(let names): (names.joined(separator: "+"), names.contains { context.tunnels.contains($0) })
        }
        return BucketTally().labels(tunnel: tunnel, subject: name).map(\.rawValue)
    }

    /// One subject's figure from its 5-minute rows: the rows in its slots, their continuity
    /// summed and their labels joined.
    static func entry(_ usage: UsageResult, bounds: Bounds, subject: QuerySubject, period: String, retainedFrom: Int64?,
                      base: [String]) -> PercentileEntry {
        let rows = usage.rows.filter { Int64($0.start) >= bounds.start && Int64($0.start) < bounds.end }
        var labels = base
        var continuity = Continuity()
        for row in rows {
            for label in row.labels where !labels.contains(label) { labels.append(label) }
            continuity.resets += row.continuity.resets
            continuity.gaps += row.continuity.gaps
            continuity.implausibleDropped += row.continuity.implausibleDropped
            continuity.eventsLost += row.continuity.eventsLost
            continuity.imported = continuity.imported || row.continuity.imported
        }
        let figure = BurstablePercentile(buckets: rows.map { (Int64($0.start), $0.traffic) }, from: bounds.start, to: bounds.end)
        return PercentileEntry(name: subject.name, class: subject.class, period: period, start: bounds.start, end: bounds.end,
                               periodEnd: bounds.periodEnd, figure: figure, retainedFrom: retainedFrom,
                               continuity: continuity, labels: labels)
    }
}
