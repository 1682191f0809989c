import IfMeterCore
#if canImport(Glibc)
import Glibc
#endif

/// A data plan: a cap on some interfaces' traffic over a recurring period, with the shares of
/// it worth a warning (docs/PLANS.md). A value read from the config; the daemon's ``PlanWatch``
/// keeps watch over it.
public struct Plan: Hashable, Sendable {
    /// Which traffic counts against the limit.
    public enum Direction: String, Hashable, Sendable, CaseIterable {
        case rx, tx, total

        /// The bytes of `traffic` this direction counts.
        public func bytes(of traffic: Traffic) -> UInt64 {
            switch self {
            case .rx: traffic.rxBytes
            case .tx: traffic.txBytes
            case .total: traffic.rxBytes &+ traffic.txBytes < traffic.rxBytes ? .max : traffic.rxBytes + traffic.txBytes
            }
        }
    }

    /// One way of naming the plan's traffic: an interface's name or shell glob, a whole class,
    /// or networks (docs/NETWORKS.md) — one by its connection id, SSID or UUID, or every
    /// network that is (or is not) metered. A plan names interfaces or networks, not both.
    public enum Selector: Hashable, Sendable, CustomStringConvertible {
        case name(String)
        case interfaceClass(InterfaceClass)
        /// `plan[NAME].network = Home`: what crossed any interface while on that network.
        case network(String)
        /// `plan[NAME].metered = yes`: what crossed any interface while on a metered network.
        case metered(Bool)
        /// `plan[NAME].app = firefox` (any user's) or `= 1000/firefox`, a glob: a user's
        /// application, counted by cgroup (docs/APPS.md).
        case app(String)
        /// `plan[NAME].service = nginx.service`, a glob: a system service, counted by cgroup.
        case service(String)

        /// `plan[NAME].app`'s or `.service`'s value: a glob of a name as the subjects write them
        /// (``AppName``'s bytes, `%HH`, and `*?[]`), up to 80 bytes; an application's may begin
        /// with a uid as systemd writes it and `/`, a service's with `container/`. A value no
        /// subject could ever match is refused, not kept as a plan that never counts.
        public static func application(_ key: String, parsing text: String) throws(PlanError) -> Selector {
            var name = Substring(text)
            if key == "app", let slash = name.firstIndex(of: "/") {
                guard AppKind.uid(name[..<slash].utf8) != nil else { throw applicationError(key, text) }
                name = name[name.index(after: slash)...]
            }
            if name.hasPrefix(AppName.containerQualifier) { name = name.dropFirst(AppName.containerQualifier.count) }
            guard !name.isEmpty, text.utf8.count <= 80, isGlob(of: name) else { throw applicationError(key, text) }
            return key == "app" ? .app(text) : .service(text)
        }

        /// Whether `text` is a glob of ``AppName``'s names: its bytes, glob characters, and
        /// each `%` followed by two uppercase hex digits.
        static func isGlob(of text: Substring) -> Bool {
            let bytes = Array(text.utf8)
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "%") {
                    guard index + 2 < bytes.count, bytes[(index + 1)...(index + 2)].allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x46).contains($0) }) else { return false }
                    index += 3
                    continue
                }
                guard OwnerName.isNameByte(byte) || "*?[]!".utf8.contains(byte) else { return false }
                index += 1
            }
            return true
        }

        static func applicationError(_ key: String, _ text: String) -> PlanError {
            PlanError("\"\(text)\" names no \(key == "app" ? "application" : "service"): expected "
                + (key == "app" ? "a name such as firefox, or 1000/firefox for one user's" : "a unit such as nginx.service")
                + ", a glob such as nginx* allowed (letters, digits, '_', '.', '-', '@', %HH; up to 80 bytes)")
        }

        /// Whether it selects applications' subjects (docs/APPS.md).
        public var isApplication: Bool {
            switch self {
            case .app, .service: true
            case .name, .interfaceClass, .network, .metered: false
            }
        }

        /// `plan[NAME].network`'s value: a connection id, SSID or UUID, 1 to 256 bytes.
        public static func network(parsing text: String) throws(PlanError) -> Selector {
            guard !text.isEmpty, text.utf8.count <= 256 else {
                throw PlanError("name a network by its connection id, SSID or UUID (1 to 256 bytes)")
            }
            return .network(text)
        }

        /// `plan[NAME].metered`'s value: `yes` or `no`.
        public static func metered(parsing text: String) throws(PlanError) -> Selector {
            switch text {
            case "yes": return .metered(true)
            case "no": return .metered(false)
            default: throw PlanError("expected yes or no, got \"\(text)\"")
            }
        }

        /// Whether it selects networks rather than interfaces.
        public var isNetwork: Bool {
            switch self {
            case .network, .metered: true
            case .name, .interfaceClass, .app, .service: false
            }
        }

        /// Whether traffic on `network` is selected.
        public func matches(_ network: Network) -> Bool {
            switch self {
            case .network(let text):
                text == network.id || text == network.uuid || network.ssid.map { Array(text.utf8) == $0 } == true
            case .metered(let wanted): network.metered.isMetered == wanted
            case .name, .interfaceClass, .app, .service: false
            }
        }

        /// `wwan0`, `wwan*`, `class:cellular`.
        public init(parsing text: String) throws(PlanError) {
            if text.hasPrefix("class:") {
                let name = String(text.dropFirst("class:".count))
                guard let interfaceClass = InterfaceClass(rawValue: name) else {
                    throw PlanError("unknown interface class \"\(name)\" (expected one of: "
                        + InterfaceClass.allCases.map(\.rawValue).joined(separator: ", ") + ")")
                }
                self = .interfaceClass(interfaceClass)
            } else {
                // A subject of a kind plans name among interfaces (a container's, pod's, virtual
                // machine's or namespace's: docs/NAMESPACES.md) has a `:` of its own; the
                // longest, a pod's: `pod:`, a 63-byte namespace, `/`, a 253-byte name and a `#N`.
                let subject = SubjectKinds.kind(of: text).map { $0.kind.prefix != nil && $0.kind.planSelector == .interfaces } ?? false
                guard !text.isEmpty, text.utf8.count <= (subject ? 330 : 64), !text.contains(where: \.isWhitespace),
                      subject || !text.contains(where: { $0 == "/" || $0 == ":" }) else {
                    let kinds = SubjectKinds.all.filter { $0.prefix != nil && $0.planSelector == .interfaces }.map(\.form)
                    throw PlanError("\"\(text)\" is neither an interface name, a glob such as wwan*, "
                        + kinds.joined(separator: ", ") + ", nor class:CLASS")
                }
                self = .name(text)
            }
        }

        /// Whether a name with this class is selected.
        public func matches(_ name: String, interfaceClass: String?) -> Bool {
            switch self {
            case .name(let pattern): fnmatch(pattern, name, 0) == 0
            case .interfaceClass(let wanted): interfaceClass == wanted.rawValue
            case .app(let pattern): Self.matches(application: name, pattern)
            case .service(let pattern): name.hasPrefix("service:") && fnmatch(pattern, String(name.dropFirst(8)), 0) == 0
            case .network, .metered: false
            }
        }

        /// `firefox` matches any user's `app:UID/firefox`; `1000/firefox` one user's.
        static func matches(application name: String, _ pattern: String) -> Bool {
            guard name.hasPrefix("app:"), let slash = name.firstIndex(of: "/") else { return false }
            let whole = String(name.dropFirst(4)), application = String(name[name.index(after: slash)...])
            return fnmatch(pattern, pattern.contains("/") ? whole : application, 0) == 0
        }

        public var description: String {
            switch self {
            case .name(let pattern): pattern
            case .interfaceClass(let interfaceClass): "class:\(interfaceClass.rawValue)"
            case .network(let text): "network:\(text)"
            case .metered(let metered): "metered:\(metered ? "yes" : "no")"
            case .app(let pattern): "app:\(pattern)"
            case .service(let pattern): "service:\(pattern)"
            }
        }
    }

    public var name: String
    public var selectors: [Selector]
    public var direction: Direction
    /// Bytes in one period.
    public var limit: UInt64
    public var period: PlanPeriod
    /// Shares of the limit that are events when crossed, ascending (0.8 is 80 %).
    public var thresholds: [Double]
    /// All of its subjects' traffic, or only the internet's (``counted(_:)``).
    public var traffic: Counting

    public static let defaultThresholds = [0.8, 1.0]

    public init(name: String, selectors: [Selector], direction: Direction = .total, limit: UInt64,
                period: PlanPeriod, thresholds: [Double] = Plan.defaultThresholds, traffic: Counting = .all) {
        self.name = name
        self.selectors = selectors
        self.direction = direction
        self.limit = limit
        self.period = period
        self.thresholds = thresholds.sorted()
        self.traffic = traffic
    }

    /// Whether the name (with its class, if known) is in the plan.
    public func includes(_ name: String, interfaceClass: String?) -> Bool {
        selectors.contains { $0.matches(name, interfaceClass: interfaceClass) }
    }

    /// Whether traffic on `network` is in the plan.
    public func includes(_ network: Network) -> Bool {
        selectors.contains { $0.matches(network) }
    }

    /// Whether the plan counts networks' traffic rather than interfaces'.
    public var countsNetworks: Bool { selectors.contains(where: \.isNetwork) }

    /// Whether the plan counts applications' traffic (docs/APPS.md) rather than interfaces'.
    public var countsApplications: Bool { selectors.contains(where: \.isApplication) }

    /// Bytes at which a threshold is crossed (`limit × share`, rounded up).
    public func bytes(at threshold: Double) -> UInt64 {
        let exact = Double(limit) * threshold
        return exact >= 1.8e19 ? .max : UInt64(exact.rounded(.up))
    }

    /// What decides which traffic a period holds: a plan whose fingerprint changed starts its
    /// watch afresh, while a new limit or new thresholds keep what already fired. A plan on all
    /// traffic keeps the fingerprint it had before plans could count the internet alone.
    public var fingerprint: String {
        "\(selectors.map(\.description).joined(separator: ",")) \(direction.rawValue) \(period)"
            + (traffic == .all ? "" : " traffic \(traffic.rawValue)")
    }

    /// Whether a name is valid as a plan's (it is a config key and a label value).
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64
            && name.unicodeScalars.allSatisfy { scalar in
                ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                    || "-_.".unicodeScalars.contains(scalar)
            }
    }

    /// A limit in the one size grammar (``ValueGrammar/size(_:)``): `20G`, `20 GiB`, `500MB`,
    /// `1.5T`; at least one byte.
    public static func limit(parsing text: String) throws(PlanError) -> UInt64 {
        let bytes: UInt64
        do { bytes = try ValueGrammar.size(text) } catch { throw PlanError(error.description) }
        guard bytes > 0 else { throw PlanError("a limit of 0 bytes is crossed by the first byte; expected at least 1 byte") }
        return bytes
    }

    /// Parses thresholds: `80%, 100%`, `80 %, 100 %` or `80% 100%`, each in the one percentage
    /// grammar (``ValueGrammar/percent(_:)``), from 1 % to 1000 %.
    public static func thresholds(parsing text: String) throws(PlanError) -> [Double] {
        var shares: [Double] = []
        let parts = text.contains(",")
            ? text.split(separator: ",").map { $0.trimmingSpaces() }
            : text.split(separator: " ").map(String.init).reduce(into: [String]()) { parts, word in
                // `80 %` is one share written with a space.
                if word == "%", let last = parts.popLast() { parts.append(last + word) } else { parts.append(word) }
            }
        for part in parts {
            guard let share = try? ValueGrammar.percent(part), (0.01...10).contains(share) else {
                throw PlanError("expected shares of the limit from 1% to 1000% such as 80%, 100%, got \"\(part)\"")
            }
            shares.append(share)
        }
        guard !shares.isEmpty else { throw PlanError("expected at least one threshold such as 80%") }
        return Array(Set(shares)).sorted()
    }
}

/// A plan's recurring period. Every period begins at a local midnight (in the calendar's
/// zone), so it is a whole number of the daily buckets history keeps.
public enum PlanPeriod: Hashable, Sendable, CustomStringConvertible {
    /// A billing month from this day (1–28) to the same day of the next month.
    case month(startDay: Int)
    case day
    /// Seven days from this ISO weekday (1 is Monday, 7 Sunday).
    case week(firstWeekday: Int)
    /// `count` days at a time, the first of them beginning on `from` (a date as a day number:
    /// days since 1970-01-01).
    case days(Int, from: Int)

    static let weekdays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

    /// `month` (from `monthStartDay`), `month 15`, `day`, `week`, `week sunday`,
    /// `7 days from 2026-12-01`.
    public init(parsing text: String, monthStartDay: Int) throws(PlanError) {
        let words = text.split(separator: " ").map(String.init)
        switch words.first {
        case "month" where words.count == 1:
            self = .month(startDay: monthStartDay)
        case "month" where words.count == 2:
            guard let day = Int(words[1]), (1...28).contains(day) else {
                throw PlanError("a billing month starts on a day from 1 to 28, got \"\(words[1])\"")
            }
            self = .month(startDay: day)
        case "day" where words.count == 1:
            self = .day
        case "week" where words.count <= 2:
            let day = words.count == 2 ? Self.weekdays.firstIndex(of: words[1].lowercased()) : 0
            guard let day else { throw PlanError("a week starts on a weekday such as monday, got \"\(words[1])\"") }
            self = .week(firstWeekday: day + 1)
        case let count? where words.count == 4 && words[1] == "days" && words[2] == "from":
            guard let days = Int(count), (1...366).contains(days) else {
                throw PlanError("a period of days is 1 to 366 days long, got \"\(count)\"")
            }
            guard let date = DayNumber.parsing(words[3]) else {
                throw PlanError("expected a date as YYYY-MM-DD, got \"\(words[3])\"")
            }
            self = .days(days, from: date)
        default:
            throw PlanError("expected a period such as month, month 15, day, week, week sunday or 7 days from 2026-12-01, got \"\(text)\"")
        }
    }

    /// The longest this period can be, in days (what daily history must cover).
    public var longestDays: Int {
        switch self {
        case .month: 31
        case .day: 1
        case .week: 7
        case .days(let count, _): count
        }
    }

    /// The period containing `time`: from a local midnight to the local midnight that starts the
    /// next one (so across a DST change a day is 23 or 25 hours).
    public func bounds(containing time: Int64, calendar: BucketCalendar) -> PlanBounds {
        switch self {
        case .month(let startDay):
            let start = calendar.start(of: .month, containing: time, monthStartDay: startDay)
            return PlanBounds(start: start, end: calendar.end(of: .month, startingAt: start, monthStartDay: startDay))
        case .day:
            let start = calendar.start(of: .day, containing: time)
            return PlanBounds(start: start, end: calendar.end(of: .day, startingAt: start))
        case .week(let firstWeekday):
            let today = calendar.dayNumber(containing: time)
            // 1970-01-01 was a Thursday (ISO weekday 4).
            let weekday = ((today % 7 + 7) % 7 + 3) % 7 + 1
            let first = today - (weekday - firstWeekday + 7) % 7
            return PlanBounds(start: calendar.startOfDay(number: first), end: calendar.startOfDay(number: first + 7))
        case .days(let count, let from):
            let today = calendar.dayNumber(containing: time)
            let offset = today - from
            let index = offset >= 0 ? offset / count : -((-offset + count - 1) / count)
            let first = from + index * count
            return PlanBounds(start: calendar.startOfDay(number: first), end: calendar.startOfDay(number: first + count))
        }
    }

    public var description: String {
        switch self {
        case .month(let day): "month \(day)"
        case .day: "day"
        case .week(let weekday): "week \(Self.weekdays[weekday - 1])"
        case .days(let count, let from): "\(count) days from \(DayNumber.date(from))"
        }
    }

}

/// One period of a plan: `[start, end)` in Unix seconds.
public struct PlanBounds: Hashable, Sendable {
    public var start: Int64
    public var end: Int64

    public init(start: Int64, end: Int64) {
        self.start = start
        self.end = end
    }

    public func contains(_ time: Int64) -> Bool { start <= time && time < end }
}

/// Why a plan in the config cannot be used.
public struct PlanError: Error, Hashable, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
