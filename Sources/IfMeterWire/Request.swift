
/// The protocol version this build speaks.
public let protocolVersion = 1

/// A request's `id`, echoed in its response: a number or a string, as the client chose.
public enum RequestID: Hashable, Sendable {
    case number(Int64)
    case string(String)
}

/// A point in time in a request: RFC 3339 text or Unix seconds.
public struct TimeArgument: Hashable, Sendable {
    public var seconds: Double

    /// The times a request may name: 1970-01-01 to 9999-12-31 in Unix seconds. Anything else
    /// (1e30, -1, NaN from a hand-built parser) is refused where it enters, so no conversion
    /// further in can trap on it.
    public static let acceptedSeconds: ClosedRange<Double> = 0...253_402_300_799

    /// The whole seconds at or below this time; in range by construction once validated.
    public var floorSeconds: Int64 { Int64(seconds.rounded(.down)) }
    /// The whole seconds at or above this time.
    public var ceilingSeconds: Int64 { Int64(seconds.rounded(.up)) }

    public init(seconds: Double) { self.seconds = seconds }
}

/// One request line, as sent. Every field is optional here so a request with a bad field can
/// still be answered under its own `id`; ``rangeProblem`` and the command that reads it say what
/// is wrong.
public struct Request: Hashable, Sendable {
    public var v: Int?
    public var id: RequestID?
    public var cmd: String?
    public var interface: String?
    public var `class`: String?
    public var period: String?
    public var from: TimeArgument?
    public var to: TimeArgument?
    public var kind: String?
    public var limit: Int?
    /// `query`: how many of the chosen subjects to pass over before the first answered.
    public var offset: Int?
    public var projection: Bool?
    /// `metrics`: `prometheus` (text 0.0.4, the default) or `openmetrics`.
    public var format: String?
    /// `metrics`: whether to include the daemon's `process_*` metrics (default true).
    public var process: Bool?
    /// `import`: `vnstat`.
    public var source: String?
    /// `import`: the database file (absolute).
    public var path: String?
    /// `import`: report what would be imported, change nothing.
    public var dryRun: Bool?
    /// `import`: vnStat ran with `UseUTC 1` (its dates are UTC, not local time).
    public var utc: Bool?
    /// `query`: these names, in this order.
    public var interfaces: [String]?
    /// `query`: which names when none are listed (``QuerySelection``; default `shown`).
    public var select: String?
    /// `query` with `class`: the class summed as one subject rather than its members.
    public var sum: Bool?
    /// `query`: what to answer besides the tables (``QueryPart``).
    public var include: [String]?
    /// `query`: the tables, each subject's in this order.
    public var usage: [UsageSpec]?

    public init(v: Int? = protocolVersion, id: RequestID? = nil, cmd: String?, interface: String? = nil,
                class: String? = nil, period: String? = nil, from: TimeArgument? = nil,
                to: TimeArgument? = nil, kind: String? = nil, limit: Int? = nil, projection: Bool? = nil,
                format: String? = nil, process: Bool? = nil) {
        self.v = v
        self.id = id
        self.cmd = cmd
        self.interface = interface
        self.class = `class`
        self.period = period
        self.from = from
        self.to = to
        self.kind = kind
        self.limit = limit
        self.projection = projection
        self.format = format
        self.process = process
    }

    /// A request for `command`; the other fields as the command takes them.
    public init(_ command: Command, id: RequestID? = nil, interface: String? = nil, class: String? = nil,
                period: UsagePeriod? = nil, from: TimeArgument? = nil, to: TimeArgument? = nil,
                kind: String? = nil, limit: Int? = nil, projection: Bool? = nil, format: String? = nil,
                process: Bool? = nil) {
        self.init(id: id, cmd: command.rawValue, interface: interface, class: `class`, period: period?.rawValue, from: from,
                  to: to, kind: kind, limit: limit, projection: projection, format: format, process: process)
    }

    /// The limits on numbers from a peer (docs/PROTOCOL.md), checked once here so handlers may
    /// convert them freely. Nil when every field is in range.
    public var rangeProblem: String? {
        let accepted = TimeArgument.acceptedSeconds
        for (field, time) in [("from", from), ("to", to)] + (usage ?? []).flatMap({ [("usage.from", $0.from), ("usage.to", $0.to)] }) {
            if let time, !accepted.contains(time.seconds) {
                return "field \"\(field)\" must be a time from 1970-01-01 to 9999-12-31 "
                    + "(Unix seconds 0 to \(Int64(accepted.upperBound)))"
            }
        }
        if let offset, !(0...Self.maximumOffset).contains(offset) {
            return "field \"offset\" must be 0 to \(Self.maximumOffset)"
        }
        if let limit, !Self.acceptedLimit.contains(limit) {
            return "field \"limit\" must be \(Self.acceptedLimit.lowerBound) to \(Self.acceptedLimit.upperBound)"
        }
        for spec in usage ?? [] {
            for (field, count) in [("usage.last", spec.last), ("usage.top", spec.top)] {
                if let count, !Self.acceptedLimit.contains(count) {
                    return "field \"\(field)\" must be \(Self.acceptedLimit.lowerBound) to \(Self.acceptedLimit.upperBound)"
                }
            }
        }
        return nil
    }

    /// How many events one `events` request may ask for, and rows per subject a `query` table.
    public static let acceptedLimit: ClosedRange<Int> = 1...100_000
    /// The largest `offset`: past any number of subjects a daemon holds.
    public static let maximumOffset = 100_000_000
}
