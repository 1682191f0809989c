import IfMeterCore
import IfMeterKernel
import IfMeterHistory
import IfMeterService
import IfMeterStore
import IfMeterWire

/// The commands answered from the database. Each is checked on the loop, against what the
/// service knows now, and becomes a job for the store's thread (``StoreWorker``); the client's
/// next requests wait for its answer, everyone else is served meanwhile.
extension Daemon {
    /// Work on the store's thread that answers one request.
    typealias StoreJob<Result> = @Sendable (Store) throws -> Result

    /// Hands `answer` to the store's thread; its line (or its error's) goes to `client`.
    func answerFromStore(_ id: RequestID?, _ client: Server.Client,
                         _ answer: @escaping StoreJob<[UInt8]>) throws(WireError) {
        let metering = try running()
        server.holdRequests(of: client)
        metering.worker.run({ store in Self.line(id) { try answer(store) } }, then: { [unowned self] line in
            self.server.send(line, to: client)
            self.server.answered(client)
        })
    }

    /// `body`'s answer line, or the line of the error it threw.
    static func line(_ id: RequestID?, _ body: () throws -> [UInt8]) -> [UInt8] {
        do {
            return try body()
        } catch {
            return LineEncoder.failure(WireError(answering: error, id: id))
        }
    }

    /// `usage`: one subject, one period.
    func usage(_ request: Request, from client: Server.Client?) throws -> StoreJob<UsageResult> {
        let metering = try running()
        let subject: UsageSubject
        switch (request.interface, request.class) {
        case (let name?, nil): subject = .interface(name)
        case (nil, let className?): subject = .interfaceClass(try interfaceClass(className))
        default: throw WireError(.badRequest, "give exactly one of \"interface\" and \"class\"")
        }
        let usage = try UsageQuery(period: request.period, from: request.from, to: request.to, projection: request.projection)
        let complete = saveBeforeAnswering(for: client)
        var unfinished = usageContext(metering.service, names: request.interface.map { [$0] } ?? [])
        unfinished.unsavedNotIncluded = !complete
        let context = unfinished
        return { store in
            if case .interface(let name) = subject, let unknown = try UsageAnswers.unknown([name], store: store, context: context).first {
                throw Self.unknownInterface(unknown)
            }
            var table = try UsageAnswers.tables([subject], [usage], store: store, context: context)[0]
            (table.interface, table.class) = (request.interface, request.class)
            return table
        }
    }

    /// `query`: the subjects a view is about, each with every table it asked for, and the
    /// status and interface entries when asked: a whole view in one round trip.
    func query(_ request: Request, from client: Server.Client?) throws -> StoreJob<QueryResult> {
        let metering = try running()
        let parts = try (request.include ?? []).map { name throws(WireError) -> QueryPart in
            guard let part = QueryPart(rawValue: name) else {
                throw WireError(.badRequest, "unknown part \"\(name)\" in \"include\"; known: \(QueryPart.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return part
        }
        let queries = try (request.usage ?? []).map { spec throws(WireError) in
            try UsageQuery(period: spec.period, from: spec.from, to: spec.to, projection: spec.projection, last: spec.last, top: spec.top)
        }
        let service = metering.service
        let chosen: [InterfaceFigures]
        let subjects: [UsageSubject]
        switch (request.interfaces, request.class) {
        case (let names?, nil):
            chosen = service.figures(named: names)
            subjects = names.map { .interface($0) }
        case (nil, let className?):
            let interfaceClass = try interfaceClass(className)
            chosen = service.snapshot().interfaces.filter { $0.interfaceClass == className }
            subjects = request.sum == true ? [.interfaceClass(interfaceClass)] : chosen.map { .interface($0.name) }
        case (nil, nil):
            let selection = try request.select.map { name throws(WireError) -> QuerySelection in
                guard let selection = QuerySelection(rawValue: name) else {
                    throw WireError(.badRequest, "unknown selection \"\(name)\"; known: \(QuerySelection.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                return selection
            } ?? .shown
            chosen = selection.pick(service.snapshot().interfaces)
            subjects = chosen.map { .interface($0.name) }
        default:
            throw WireError(.badRequest, "give at most one of \"interfaces\" and \"class\"")
        }
        let complete = queries.isEmpty || saveBeforeAnswering(for: client)
        var unfinished = usageContext(service, figures: chosen)
        unfinished.unsavedNotIncluded = !complete
        let context = unfinished
        let classes = Dictionary(chosen.map { ($0.name, $0.interfaceClass) }) { first, _ in first }
        let answered = QueryResult(
            status: parts.contains(.status) ? status() : nil,
            subjects: subjects.map { subject in
                switch subject {
                case .interface(let name): QuerySubject(name: name, class: classes[name] ?? "unknown")
                case .interfaceClass(let interfaceClass): QuerySubject(name: nil, class: interfaceClass.rawValue)
                }
            },
            interfaces: parts.contains(.interfaces) ? chosen.map(InterfaceResult.init) : nil,
            usage: [], footnote: EstimateLabel.footnote)
        let names = request.interfaces
        return { store in
            if let names, let unknown = try UsageAnswers.unknown(names, store: store, context: context).first {
                throw Self.unknownInterface(unknown)
            }
            var result = answered
            result.usage = try UsageAnswers.tables(subjects, queries, store: store, context: context)
            return result
        }
    }

    func events(_ request: Request, from client: Server.Client?) throws -> StoreJob<EventsResult> {
        _ = try running()
        let kind = try request.kind.map { name throws(WireError) -> CounterEvent.Kind in
            guard let kind = CounterEvent.Kind(rawValue: name) else {
                throw WireError(.badRequest, "unknown event kind \"\(name)\"; known: \(CounterEvent.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return kind
        }
        let limit = request.limit ?? 1000
        let complete = saveBeforeAnswering(for: client)
        return { store in
            EventsResult(events: try store.events(from: request.from?.seconds, to: request.to?.seconds, kind: kind,
                                                  interface: request.interface, limit: limit),
                         unsavedNotIncluded: complete ? nil : true)
        }
    }

    /// `import`: another meter's history into the store, then the service's saved figures
    /// read again so every answer includes it.
    func importHistory(_ request: Request, _ id: RequestID?, _ client: Server.Client) throws {
        let metering = try running()
        guard request.source == "vnstat" else {
            throw WireError(.badRequest, "unknown source \"\(request.source ?? "")\"; known: vnstat")
        }
        let path = try required(request.path, "path")
        guard path.hasPrefix("/") else { throw WireError(.badRequest, "field \"path\" must be absolute, got \"\(path)\"") }
        let (utc, dryRun) = (request.utc ?? false, request.dryRun ?? false)
        _ = saveBeforeAnswering(for: nil)  // an admin's: always complete
        server.holdRequests(of: client)
        metering.worker.run({ store in
            var saved: (totals: [String: BucketTally], interfaces: [StoredInterface])?
            let line = Self.line(id) {
                let reports = try store.importVnStat(try VnStatDatabase(path: path, utc: utc), dryRun: dryRun)
                if !dryRun { saved = (try store.totals().mapValues(\.tally), try store.interfaces()) }
                return LineEncoder.success(ImportResult(source: "vnstat", path: path, dryRun: dryRun, interfaces: reports.map { report in
                    ImportResult.Interface(
                        name: report.name, buckets: Dictionary(uniqueKeysWithValues: report.buckets.map { ($0.key.rawValue, $0.value) }),
                        alreadyImported: report.alreadyImported, overlapSkipped: report.overlapSkipped,
                        totalRxBytes: report.total.rxBytes, totalTxBytes: report.total.txBytes,
                        overlapFrom: report.overlap?.from, overlapTo: report.overlap?.to)
                }), id: id)
            }
            return (line, saved)
        }, then: { [unowned self] (line: [UInt8], saved: (totals: [String: BucketTally], interfaces: [StoredInterface])?) in
            // Every save handed over before the import is in `saved`; later ones add to it when they finish.
            if let saved { metering.service.replaceSaved(totals: saved.totals, interfaces: saved.interfaces) }
            self.server.send(line, to: client)
            self.server.answered(client)
        })
    }

    /// `forget`: the name's pending traffic is dropped at once, so no later save writes it; its
    /// history goes from the store; and what saves already handed over add back is dropped
    /// again when the deletion is done.
    func forget(_ request: Request, _ id: RequestID?, _ client: Server.Client) throws {
        let metering = try running()
        let name = try required(request.interface, "interface")
        let known = metering.service.forget(name, at: SystemClock.now().wall)
        server.holdRequests(of: client)
        metering.worker.run({ store in Result { () throws(StoreError) in try store.forget(name) } }, then: { [unowned self] result in
            _ = metering.service.forget(name, at: SystemClock.now().wall)
            let line = Self.line(id) {
                guard try result.get() || known else { throw Self.unknownInterface(name) }
                return LineEncoder.success(AdminResult(done: "history of \(name) deleted"), id: id)
            }
            self.server.send(line, to: client)
            self.server.answered(client)
        })
    }

    func interfaceClass(_ name: String) throws(WireError) -> InterfaceClass {
        guard let interfaceClass = InterfaceClass(rawValue: name) else {
            throw WireError(.badRequest, "unknown class \"\(name)\"; known: \(InterfaceClass.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return interfaceClass
    }

    static func unknownInterface(_ name: String) -> WireError {
        WireError(.unknownInterface, "no interface named \"\(name)\" has ever been seen")
    }

    /// What usage tables about `figures` take from the service, as of now.
    func usageContext(_ service: MeterService, figures: [InterfaceFigures]) -> UsageContext {
        UsageContext(tunnels: Set(figures.filter(\.isTunnel).map(\.name)), lostEvents: service.summary.lostEvents,
                     known: Set(figures.map(\.name)), now: SystemClock.now().wall)
    }

    /// ``usageContext(_:figures:)`` of the names given.
    func usageContext(_ service: MeterService, names: [String]) -> UsageContext {
        usageContext(service, figures: service.figures(named: names))
    }

    /// Answers come from the database, so traffic counted but not yet saved is saved first:
    /// the save is handed to the store's thread before the question, which sees it. Only
    /// then: a client asking for a thousand interfaces' history costs one save, not a thousand.
    ///
    /// A save is an fsync: peers other than admins (any local user, from any number of uids)
    /// force one at most every ``forcedSaveSpacing``; between those their answers are from the
    /// store as it is, and say so (``EstimateLabel/unsavedNotIncluded``). `client` nil is the
    /// daemon itself. Returns whether the answer holds everything counted.
    func saveBeforeAnswering(for client: Server.Client?) -> Bool {
        guard metering?.service.summary.hasUnsavedTraffic == true else { return true }
        if let client, !client.isAdmin {
            if let last = lastUnprivilegedSave, loop.now &- last < Self.forcedSaveSpacing { return false }
            lastUnprivilegedSave = loop.now
        }
        save()
        return true
    }

    /// How often peers other than admins may have the daemon save before answering (µs).
    static let forcedSaveSpacing: UInt64 = 10_000_000

    /// A row as answered; `tunnel` for a tunnel's figures, `eventsLost` the events-lost
    /// events in its period, `unsaved` when the answer leaves out what was not saved. The one
    /// place a usage row's labels are decided.
    static func row(_ row: UsageRow, tunnel: Bool = false, eventsLost: Int = 0, unsaved: Bool = false) -> UsageRowResult {
        UsageRowResult(UsageRowFields(
            start: Double(row.start), end: Double(row.end), continuity: row.tally.continuity(eventsLost: eventsLost),
            labels: (row.tally.labels(tunnel: tunnel, eventsLost: eventsLost) + (unsaved ? [.unsavedNotIncluded] : [])).map(\.rawValue)),
            traffic: row.tally.traffic)
    }
}

extension InterfaceFigures: SelectableInterface {
    public var selectionClass: String { interfaceClass }
    public var isUp: Bool { present?.operState == .up }
    public var isAbsent: Bool { present == nil }
    public var carriedTraffic: Bool { total.traffic.rxBytes != 0 || total.traffic.txBytes != 0 }
}
