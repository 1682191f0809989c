import IfMeterPlans
import IfMeterCore

/// What the daemon knows about an interface besides its traffic.
public struct InterfaceRecord: Hashable, Sendable {
    public var name: String
    public var interfaceClass: String?
    public var kind: String
    public var mac: String
    public var lastSeen: Double

    public init(name: String, interfaceClass: String?, kind: String, mac: String, lastSeen: Double) {
        self.name = name
        self.interfaceClass = interfaceClass
        self.kind = kind
        self.mac = mac
        self.lastSeen = lastSeen
    }
}

/// The meter's output not yet in the database, already folded into spans of buckets so memory
/// stays bounded however long the disk stays full. Saved in one transaction with the meter state
/// it belongs to; kept (and added to) when a save fails.
public struct PendingWrites: Sendable {
    // What the store writes; only these folds change them.
    /// Each name's traffic: its buckets and the unsaved part of its total. Dense, not a
    /// dictionary: a busy link's entry is 120 bytes, and a dictionary of 4000 kept 8192 slots
    /// of it and its name, 1.1 MB (docs/BENCHMARKS.md).
    public private(set) var traffic = DenseTable<String, PendingTraffic>()
    public private(set) var events: [CounterEvent] = []
    /// Records of links that went (deleted, vanished) since the last save.
    public private(set) var interfaces: [String: InterfaceRecord] = [:]
    /// The meter state these writes lead to, saved in the same transaction.
    public internal(set) var meterState: MeterState?
    /// Plans whose watch changed (a threshold fired, a period began), saved with the events
    /// that say so.
    public var planStates: [String: PlanState] = [:]
    /// Networks whose record changed (seen, switched away from), by UUID.
    public var networks: [String: NetworkRecord] = [:]
    /// The application counters' rows that changed (docs/APPS.md, "Counting").
    public var apps: AppCounterWrite?
    /// The interface scope program's map as last read, when it changed (docs/SCOPES.md).
    public var scopes: ScopeCounterState?
    /// Each plan's part of ``traffic`` in its period, kept as deltas arrive (``PlanRouting``).
    public private(set) var planTallies = PlanTallies()
    /// Events left out because too many piled up unsaved; the daemon reports the number.
    public private(set) var droppedEvents = 0
    /// The calendar the spans' buckets were decided with.
    public private(set) var calendar = BucketCalendar()
    private var spanCount = 0

    /// Events kept in memory while saves fail; beyond this only their number is kept.
    static let maximumEvents = 100_000
    /// Spans kept in memory while saves fail (about 100 bytes each, a span a link every five
    /// minutes); past this the oldest 5-minute, then hourly, buckets are folded into the
    /// coarser ones down to three quarters of it.
    public var maximumSpans = 200_000

    public init() {}

    public var isEmpty: Bool {
        traffic.isEmpty && events.isEmpty && interfaces.isEmpty && meterState == nil && planStates.isEmpty
            && networks.isEmpty && apps == nil && scopes == nil
    }

    /// Folds a meter output into each name's spans (so into every resolution's bucket and the
    /// all-time total).
    /// With `routing`, each delta also counts toward its name's plans (``planTallies``).
    public mutating func add(_ output: MeterOutput, calendar: BucketCalendar, monthStartDay: (String) -> Int,
                             routing: PlanRouting? = nil) {
        self.calendar = calendar
        // Taken out while deltas are added: a copy of the sums someone still holds is made
        // once here, not at every delta.
        var plans = planTallies
        planTallies = PlanTallies()
        defer { planTallies = plans }
        // A window's first sample brings nearly every busy name: room for them at once, not
        // by doublings that leave up to half the table unused.
        if traffic.isEmpty { traffic.reserveCapacity(output.deltas.count) }
        for delta in output.deltas {
            let tally = BucketTally(delta)
            let time = Int64(delta.at.rounded(.down))
            // Changed in place by position: the entry is not copied out and back.
            if let index = traffic.position(of: delta.name) {
                if let routing { plans.add(tally, slot: traffic[position: index].planSlot, at: time, routing: routing) }
                let took = traffic[position: index].take(tally, at: time, epoch: delta.epoch, calendar: calendar)
                if took.overflowed {
                    append(CounterEvent(
                        kind: .implausible, at: delta.at, interface: delta.name, ifindex: delta.ifindex,
                        delta: delta.traffic, detail: "the total would pass 2^64 − 1; held there"))
                }
                if took.newSpan { spanCount += 1 }
            } else {
                let day = monthStartDay(delta.name)
                let slot = routing?.slot(of: delta.name) ?? -1
                if let routing { plans.add(tally, slot: slot, at: time, routing: routing) }
                traffic[delta.name] = PendingTraffic(
                    first: PendingTraffic.span(at: time, tally: tally, calendar: calendar, monthStartDay: day),
                    epoch: delta.epoch, monthStartDay: day, planSlot: slot)
                spanCount += 1
            }
        }
        if events.isEmpty, output.events.count <= Self.maximumEvents {
            events = output.events
        } else {
            for event in output.events { append(event) }
        }
        if spanCount > maximumSpans, let last = output.deltas.last { fold(at: last.at) }
    }

    /// Sums each plan's traffic afresh from the spans, for `routing` (new plans, members or periods).
    public mutating func sumPlans(for routing: PlanRouting) {
        var tallies = PlanTallies(for: routing)
        for index in traffic.values.indices {
            let slot = routing.slot(of: traffic.keys[index])
            traffic[position: index].planSlot = slot
            guard slot != -1 else { continue }
            for span in traffic.values[index].spans { tallies.add(span.tally, slot: slot, at: span.from, routing: routing) }
        }
        planTallies = tallies
    }

    /// Every bucket the spans write, each once per name, with the name.
    public func forEachBucket<Failure: Error>(
        _ body: (String, Resolution, Int64, BucketTally) throws(Failure) -> Void
    ) throws(Failure) {
        for (name, entry) in traffic {
            try entry.forEachBucket(calendar: calendar) { (resolution, start, tally) throws(Failure) in
                try body(name, resolution, start, tally)
            }
        }
    }

    /// Bounds memory while saves keep failing: every delta is in every resolution, so folding
    /// the oldest spans of an hour (then of a day) into one span that no longer writes its
    /// 5-minute (then hourly) bucket loses resolution, never traffic. An event says how many went.
    private mutating func fold(at time: Double) {
        let target = maximumSpans * 3 / 4
        var dropped: [Resolution: Int] = [:]
        for (finest, coarser) in [(Resolution.fiveMinutes, Resolution.hour), (.hour, .day)] where spanCount > target {
            let oldest = traffic.flatMap { name, entry in
                entry.spans.filter { $0.finest == finest }.map { (name: name, from: $0.from) }
            }.sorted { $0.from < $1.from }
            // A span folded into its coarser bucket's span is one fewer; the first of a bucket
            // becomes that span.
            var groups: [String: Set<Int64>] = [:]
            for (name, entry) in traffic {
                for span in entry.spans where span.finest == coarser {
                    groups[name, default: []].insert(
                        calendar.start(of: coarser, containing: span.from, monthStartDay: Int(entry.monthStartDay)))
                }
            }
            var folding: [String: Set<Int64>] = [:]
            var merges = 0
            for span in oldest where spanCount - merges > target {
                let day = Int(traffic[span.name]?.monthStartDay ?? 1)
                folding[span.name, default: []].insert(span.from)
                dropped[finest, default: 0] += 1
                if !groups[span.name, default: []].insert(
                    calendar.start(of: coarser, containing: span.from, monthStartDay: day)).inserted {
                    merges += 1
                }
            }
            for (name, froms) in folding {
                guard var entry = traffic[name] else { continue }
                var kept: [PendingTraffic.Span] = []
                var folded: [Int64: PendingTraffic.Span] = [:]
                for span in entry.spans {
                    let start = calendar.start(of: coarser, containing: span.from, monthStartDay: Int(entry.monthStartDay))
                    if span.finest == coarser || (span.finest == finest && froms.contains(span.from)) {
                        if var into = folded[start] {
                            into.tally += span.tally
                            folded[start] = into
                        } else {
                            folded[start] = PendingTraffic.Span(from: span.from, until: span.from, finest: coarser,
                                                                tally: span.tally)
                        }
                    } else {
                        kept.append(span)
                    }
                }
                let spans = folded.values.sorted { $0.from < $1.from } + kept
                spanCount += spans.count - entry.spanCount
                entry.replaceSpans(with: spans)
                traffic[name] = entry
            }
        }
        guard !dropped.isEmpty else { return }
        let counts = dropped.sorted { $0.key.index < $1.key.index }.map { "\($0.value) \($0.key.rawValue)" }
        append(CounterEvent(kind: .bucketsFolded, at: time, detail: "the database could not be written for long: "
            + "\(counts.joined(separator: " and ")) buckets of unsaved traffic dropped to bound memory; "
            + "their traffic stays in the coarser buckets and the totals"))
    }

    private mutating func append(_ event: CounterEvent) {
        if events.count < Self.maximumEvents {
            events.append(event)
        } else {
            droppedEvents += 1
        }
    }

    /// True when traffic or events are waiting: what a query must see saved first.
    public var hasUnsavedTraffic: Bool { !traffic.isEmpty || !events.isEmpty }

    /// The not yet saved part of `name`'s total.
    public func unsavedTotal(of name: String) -> BucketTally? { traffic[name]?.total }

    /// The not yet saved part of `name`'s traffic in `bounds` (a plan's period: whole days, so
    /// a span is inside or outside it).
    public func unsavedTally(of name: String, in bounds: PlanBounds) -> BucketTally? {
        traffic[name]?.tally(in: bounds)
    }

    /// Each name's traffic in `bounds`, for the names that have some there.
    public func forEachTally(in bounds: PlanBounds, _ body: (String, BucketTally) -> Void) {
        for (name, entry) in traffic {
            if let tally = entry.tally(in: bounds) { body(name, tally) }
        }
    }

    /// The meter state to save with the traffic: always the newest.
    public mutating func setMeterState(_ state: MeterState) {
        meterState = state
    }

    /// Takes back an older batch whose save failed, under what was counted since: traffic adds
    /// up, its events come first, and the newer meter state and records win.
    public mutating func restore(older batch: PendingWrites) {
        for (name, older) in batch.traffic {
            guard var entry = traffic.removeValue(forKey: name) else {
                traffic[name] = older
                spanCount += older.spanCount
                continue
            }
            let newer = entry.spans
            entry.replaceSpans(with: older.spans + newer)
            spanCount += older.spanCount
            traffic[name] = entry
        }
        let newer = events
        events = []
        for event in batch.events + newer { append(event) }
        droppedEvents += batch.droppedEvents
        interfaces.merge(batch.interfaces) { newer, _ in newer }
        meterState = meterState ?? batch.meterState
        planStates.merge(batch.planStates) { newer, _ in newer }
        networks.merge(batch.networks) { newer, _ in newer }
        apps = apps ?? batch.apps
        scopes = scopes ?? batch.scopes
        planTallies.merge(batch.planTallies)
        if traffic.isEmpty { calendar = batch.calendar }
        if spanCount > maximumSpans, let last = events.last { fold(at: last.at) }
    }

    /// Drops everything not yet saved about `name` (its history is being deleted).
    public mutating func forget(_ name: String) {
        spanCount -= traffic.removeValue(forKey: name)?.spanCount ?? 0
        planTallies = PlanTallies()
        events.removeAll { $0.interface == name }
        interfaces[name] = nil
    }

    public mutating func note(_ record: InterfaceRecord) {
        interfaces[record.name] = record
    }
}
