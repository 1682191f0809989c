import IfMeterCore
import IfMeterJSON

/// `percentile`: the 95th percentile of 5-minute rates of each subject chosen as `query`
/// chooses them, over a period or a range (docs/PROTOCOL.md).
public struct PercentileRequest: CommandRequestType {
    public static let command = Command.percentile
    public static let policy = CommandPolicy(largeAnswer: true, offLoop: true)
    public static let fields: [RequestField<Self>] = [
        .strings("interfaces", { $0.interfaces }, { $0.interfaces = $1 }, form: .repeated("interface")),
        .string("class", { $0.class }, { $0.class = $1 }),
        .string("select", { $0.select }, { $0.select = $1 }),
        .bool("sum", { $0.sum }, { $0.sum = $1 }),
        .string("period", { $0.period }, { $0.period = $1 }),
        .time("from", { $0.from }, { $0.from = $1 }),
        .time("to", { $0.to }, { $0.to = $1 }),
    ]

    /// The periods it takes, each in a subject's own calendar (its billing day).
    public enum Period: String, Hashable, Sendable, CaseIterable {
        case month
        case lastMonth = "last-month"
        case day
    }

    /// What is asked for, checked.
    public struct Checked: Hashable, Sendable {
        public enum Span: Hashable, Sendable {
            case period(Period)
            /// Slots whose starts lie in `[from, to)`; `to` nil is now.
            case range(from: Int64, to: Int64?)
        }

        public var subjects: QueryRequest.Checked.Subjects
        public var span: Span
    }

    public var interfaces: [String]?
    public var `class`: String?
    public var select: String?
    public var sum: Bool?
    /// A ``Period``'s name; `month` when neither it nor `from` is given.
    public var period: String?
    public var from: TimeArgument?
    public var to: TimeArgument?

    public init() {}

    public init(interfaces: [String]? = nil, class: String? = nil, select: QuerySelection? = nil, sum: Bool? = nil,
                period: Period? = nil, from: TimeArgument? = nil, to: TimeArgument? = nil) {
        (self.interfaces, self.class, self.select, self.sum) = (interfaces, `class`, select?.rawValue, sum)
        (self.period, self.from, self.to) = (period?.rawValue, from, to)
    }

    /// The span, then the subjects as `query` checks them.
    public func checked() throws(WireError) -> Checked {
        let span: Checked.Span
        switch (period, from) {
        case (let name?, nil):
            guard to == nil else { throw WireError(.badRequest, "\"to\" goes with \"from\", not with \"period\"") }
            span = .period(try known(name, Period.self, "period"))
        case (nil, let from?):
            let (start, end) = (from.floorSeconds, to?.ceilingSeconds)
            if let end, end <= start {
                throw WireError(.badRequest, "\"from\" must be before \"to\" (from \(start), to \(end))")
            }
            span = .range(from: start, to: end)
        case (nil, nil):
            guard to == nil else { throw WireError(.badRequest, "\"to\" needs \"from\"") }
            span = .period(.month)
        default: throw WireError(.badRequest, "give \"period\" or \"from\" (and \"to\"), not both")
        }
        var query = QueryRequest()
        (query.interfaces, query.class, query.select, query.sum) = (interfaces, self.class, select, sum)
        return Checked(subjects: try query.checked().subjects, span: span)
    }
}

/// One subject's 95th percentile (``BurstablePercentile``) with what it rests on.
public struct PercentileEntry: Hashable, Sendable, JSONWritable, JSONReadable {
    /// The subject; nil for a class summed.
    public var name: String?
    public var `class`: String
    /// `month`, `last-month`, `day` or `range`.
    public var period: String
    /// The slots counted: starts in `[start, end)`; `end` is the last slot that ended by now.
    public var start: Int64
    public var end: Int64
    /// Where the period ends (later than `end` while it runs).
    public var periodEnd: Int64
    public var figure: BurstablePercentile
    /// The earliest 5-minute bucket `retention_5min` keeps now: slots before it have no bucket
    /// whatever they carried. Nil when they are kept forever.
    public var retainedFrom: Int64?
    public var continuity: Continuity
    public var labels: [String]

    public init(name: String?, class: String, period: String, start: Int64, end: Int64, periodEnd: Int64,
                figure: BurstablePercentile, retainedFrom: Int64?, continuity: Continuity, labels: [String]) {
        (self.name, self.class, self.period, self.start, self.end, self.periodEnd) = (name, `class`, period, start, end, periodEnd)
        (self.figure, self.retainedFrom, self.continuity, self.labels) = (figure, retainedFrom, continuity, labels)
    }

    /// Whether part of the period is older than what retention keeps.
    public var outlivedRetention: Bool { retainedFrom.map { start < $0 } ?? false }

    public func write(to w: inout JSONWriter) {
        let f = figure
        w.beginObject()
        w.key("class"); w.string(self.class)
        w.key("continuity"); continuity.write(to: &w)
        w.key("coverage"); w.number(f.coverage)
        w.key("end"); w.number(end)
        w.key("labels"); w.strings(labels)
        if f.slots > 0 {
            w.key("max_bits_per_second"); w.number(BurstablePercentile.bitsPerSecond(f.maxBytes))
            w.key("max_bytes"); w.number(f.maxBytes)
            w.key("max_direction"); w.string(f.maxIsTx ? "tx" : "rx")
        }
        if let name { w.key("name"); w.string(name) }
        w.key("percentile"); w.number(f.percent)
        w.key("period"); w.string(period)
        w.key("period_end"); w.number(periodEnd)
        w.key("rank"); w.number(f.rank)
        if let retainedFrom { w.key("retained_from"); w.number(retainedFrom) }
        if f.slots > 0 {
            w.key("rx_bits_per_second"); w.number(BurstablePercentile.bitsPerSecond(f.rxBytes))
            w.key("rx_bytes"); w.number(f.rxBytes)
        }
        w.key("slots"); w.number(f.slots)
        w.key("slots_with_traffic"); w.number(f.slotsWithTraffic)
        w.key("start"); w.number(start)
        if f.slots > 0 {
            w.key("total_bits_per_second"); w.number(BurstablePercentile.bitsPerSecond(f.totalBytes))
            w.key("total_bytes"); w.number(f.totalBytes)
            w.key("tx_bits_per_second"); w.number(BurstablePercentile.bitsPerSecond(f.txBytes))
            w.key("tx_bytes"); w.number(f.txBytes)
        }
        w.endObject()
    }

    /// The rates are read from the bytes they were written from.
    public init(reading r: inout JSONReader) throws {
        var f = BurstablePercentile(percent: 95, slots: 0, slotsWithTraffic: 0, rank: 0, rxBytes: 0, txBytes: 0, totalBytes: 0)
        self.init(name: nil, class: "", period: "", start: 0, end: 0, periodEnd: 0, figure: f, retainedFrom: nil,
                  continuity: Continuity(), labels: [])
        var started = false
        try r.readObject { r, key in
            switch key {
            case "name": name = try r.readString()
            case "class": self.class = try r.readString()
            case "continuity": continuity = try Continuity(reading: &r)
            case "end": end = try r.readInt64()
            case "labels": labels = try r.readStrings()
            case "percentile": f.percent = try r.readInt()
            case "period": period = try r.readString()
            case "period_end": periodEnd = try r.readInt64()
            case "rank": f.rank = try r.readInt()
            case "retained_from": retainedFrom = try r.readInt64()
            case "rx_bytes": f.rxBytes = try r.readUInt64()
            case "slots": f.slots = try r.readInt()
            case "slots_with_traffic": f.slotsWithTraffic = try r.readInt()
            case "start": start = try r.readInt64(); started = true
            case "total_bytes": f.totalBytes = try r.readUInt64()
            case "tx_bytes": f.txBytes = try r.readUInt64()
            default: try r.skipValue()
            }
        }
        guard started else { throw missing("start", in: "a percentile", r) }
        figure = f
    }
}

/// The `percentile` answer: one entry a subject, in the order chosen.
public struct PercentileResult: Hashable, Sendable, JSONWritable, JSONReadable {
    public var subjects: [PercentileEntry]
    public var footnote: String

    public init(subjects: [PercentileEntry], footnote: String) {
        (self.subjects, self.footnote) = (subjects, footnote)
    }

    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("footnote"); w.string(footnote)
        w.key("subjects")
        w.beginArray()
        for entry in subjects { entry.write(to: &w) }
        w.endArray()
        w.endObject()
    }

    public init(reading r: inout JSONReader) throws {
        self.init(subjects: [], footnote: "")
        try r.readObject { r, key in
            switch key {
            case "subjects": try r.readArray { subjects.append(try PercentileEntry(reading: &$0)) }
            case "footnote": footnote = try r.readString()
            default: try r.skipValue()
            }
        }
    }
}
