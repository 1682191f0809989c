import IfMeterCore
import IfMeterKernel
import IfMeterService
import IfMeterStore
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// The socket API (docs/PROTOCOL.md): one handler per command, answered on the loop.
extension Daemon {
    func handle(_ request: Request, from client: Server.Client) {
        let id = request.id
        guard let version = request.v else {
            return fail(.badRequest, "field \"v\" is missing (this ifmeterd speaks protocol \(protocolVersion))", id, client)
        }
        guard version == protocolVersion else {
            return fail(.unsupportedVersion, "protocol version \(version) is not supported; this ifmeterd speaks \(protocolVersion)", id, client)
        }
        guard let name = request.cmd else { return fail(.badRequest, "field \"cmd\" is missing", id, client) }
        guard let command = Command(rawValue: name) else {
            let known = Command.allCases.map(\.rawValue).joined(separator: ", ")
            return fail(.unknownCommand, "unknown command \"\(name)\"; known: \(known)", id, client)
        }
        guard metering != nil || command == .status || command == .metrics else {
            return fail(.notReady, "ifmeterd is starting (loading its database and taking the first sample); ask again shortly", id, client)
        }
        do {
            if command.isAdmin { try requireAdmin(client) }
            switch command {
            case .status: reply(status(), id, client)
            case .interfaces: reply(interfaces(), id, client)
            case .usage: reply(try usage(request), id, client)
            case .query: server.send(LineEncoder.success(try query(request), id: id), to: client)
            case .events: reply(try events(request), id, client)
            case .sample: try requestSample(id, client)
            case .metrics: reply(try metricsResult(request), id, client)
            case .importHistory: reply(try importHistory(request), id, client)
            case .watch:
                client.watchID = .some(id)
                server.send(LineEncoder.encode(Response.success(rates(), id: id, stream: "rates")), to: client)
            case .reload:
                if let error = reload(trigger: "reload requested by uid \(client.uid)") {
                    throw WireError(.configError, "\(error); the running configuration stays")
                }
                reply(AdminResult(done: "configuration reloaded from \(paths.config)"), id, client)
            case .forget:
                let name = try required(request.interface, "interface")
                let metering = try running()
                let stored = try metering.store.forget(name)
                guard metering.service.forget(name) || stored else {
                    throw WireError(.unknownInterface, "no interface named \"\(name)\" has ever been seen")
                }
                reply(AdminResult(done: "history of \(name) deleted"), id, client)
            }
        } catch let error as WireError {
            fail(error.code, error.message, id, client)
        } catch let error as StoreError {
            fail(.storeError, error.description, id, client)
        } catch {
            fail(.storeError, "\(error)", id, client)
        }
    }

    /// The metering state, or `not_ready`.
    private func running() throws(WireError) -> Metering {
        guard let metering else { throw WireError(.notReady, "ifmeterd is not metering now") }
        return metering
    }

    private func reply<T: Encodable & Sendable>(_ result: T, _ id: RequestID?, _ client: Server.Client) {
        server.send(LineEncoder.encode(Response.success(result, id: id)), to: client)
    }

    private func fail(_ code: ErrorCode, _ message: String, _ id: RequestID?, _ client: Server.Client) {
        server.send(LineEncoder.failure(WireError(code, message, id: id)), to: client)
    }

    private func required(_ value: String?, _ field: String) throws(WireError) -> String {
        guard let value, !value.isEmpty else { throw WireError(.badRequest, "field \"\(field)\" is missing") }
        return value
    }

    /// Root, the daemon's own user, and members of `admin_group` may change state.
    func isAdmin(uid: uid_t, groups: [gid_t]) -> Bool {
        uid == 0 || uid == getuid() || config.adminGroup.map(groups.contains) == true
    }

    private func requireAdmin(_ client: Server.Client) throws(WireError) {
        guard isAdmin(uid: client.uid, groups: client.groups) else {
            throw WireError(.permissionDenied, "only root, uid \(getuid()) or the admin group may do this (you are uid \(client.uid))")
        }
    }

    // MARK: Commands

    /// Most samples one non-admin peer can cause: one a second, whoever asks how often.
    static let requestedSampleSpacing: UInt64 = 1_000_000

    /// `sample` is answered after a fresh sample. Requests arriving before it is taken share
    /// it (one dump, however many ask); for non-admins it is taken at most once a second, so a
    /// pipelined flood costs one dump a second and the periodic schedule is untouched.
    private func requestSample(_ id: RequestID?, _ client: Server.Client) throws {
        sampleWaiters.append((client, id))
        server.holdRequests(of: client)
        let now = loop.now
        let earliest = client.isAdmin ? now : (lastRequestedSample.map { $0 + Self.requestedSampleSpacing } ?? now)
        let when = max(now, earliest)
        if let requestedSample {
            if client.isAdmin { requestedSample.reschedule(at: now) }
            return
        }
        requestedSample = try loop.after(when - now) { [unowned self] in self.answerSampleWaiters() }
    }

    private func answerSampleWaiters() {
        requestedSample = nil
        lastRequestedSample = loop.now
        sample()
        let waiters = sampleWaiters
        sampleWaiters = []
        let service = metering?.service
        let result = SampleResult(sampledAt: service?.lastSample?.wall ?? 0, interfaces: service?.links.count ?? 0)
        for (client, id) in waiters where client.isOpen {
            reply(result, id, client)
            server.answered(client)
        }
    }

    func status() -> StatusResult {
        let service = metering?.service
        let running = service != nil
        return StatusResult(
            ready: running, version: IfMeterVersion.string, pid: getpid(), startedAt: startedAt,
            interval: interval, saveInterval: config.saveInterval,
            lastSampleAt: service?.lastSample?.wall, source: running ? "netlink" : nil,
            interfaces: service?.links.count,
            store: service.map { StoreHealth(path: paths.database, healthy: $0.saveError == nil,
                                             lastSaveAt: $0.lastSaveAt, error: $0.saveError?.description) },
            socket: paths.socket, timeZone: running ? (config.timeZone == .utc ? "utc" : "local") : nil,
            linkEvents: metering.map { LinkEventsHealth(origin: $0.feed.events.origin, receiveBuffer: $0.feed.events.receiveBufferSize) },
            metrics: metricsServer.map { server in
                (options.metricsListen ?? config.metricsListen).map { MetricsAddress(host: $0.host, port: server.port).description }
                    ?? ":\(server.port)"
            })
    }

    func interfaces() -> InterfacesResult {
        let figures = metering?.service.snapshot().interfaces ?? []
        return InterfacesResult(interfaces: figures.map(InterfaceResult.init), footnote: EstimateLabel.footnote)
    }

    func usage(_ request: Request) throws -> UsageResult {
        let metering = try running()
        let subject: UsageSubject
        switch (request.interface, request.class) {
        case (let name?, nil): subject = .interface(name)
        case (nil, let className?): subject = .interfaceClass(try interfaceClass(className))
        default: throw WireError(.badRequest, "give exactly one of \"interface\" and \"class\"")
        }
        let usage = try UsageQuery(period: request.period, from: request.from, to: request.to, projection: request.projection)
        saveBeforeAnswering()
        let context = usageContext(metering.service)
        if case .interface(let name) = subject, let unknown = try UsageAnswers.unknown([name], store: metering.store, context: context).first {
            throw Self.unknownInterface(unknown)
        }
        var table = try UsageAnswers.tables([subject], [usage], store: metering.store, context: context)[0]
        // `usage` projects a day or month only for an interface, and says which interface or class it was asked for.
        (table.interface, table.class) = (request.interface, request.class)
        return table
    }

    /// `query`: the subjects a view is about, each with every table it asked for, and the
    /// status and interface entries when asked: a whole view in one round trip.
    func query(_ request: Request) throws -> QueryResult {
        let metering = try running()
        let parts = try (request.include ?? []).map { name throws(WireError) -> QueryPart in
            guard let part = QueryPart(rawValue: name) else {
                throw WireError(.badRequest, "unknown part \"\(name)\" in \"include\"; known: \(QueryPart.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return part
        }
        let queries = try (request.usage ?? []).map { spec throws(WireError) in
            try UsageQuery(period: spec.period, from: spec.from, to: spec.to, projection: spec.projection)
        }
        let everyInterface = metering.service.snapshot().interfaces.map(InterfaceResult.init)
        let chosen: [InterfaceResult]
        var subjects: [UsageSubject]
        switch (request.interfaces, request.class) {
        case (let names?, nil):
            let byName = Dictionary(everyInterface.map { ($0.name, $0) }) { first, _ in first }
            chosen = names.compactMap { byName[$0] }
            subjects = names.map { .interface($0) }
        case (nil, let className?):
            let interfaceClass = try interfaceClass(className)
            chosen = everyInterface.filter { $0.class == className }
            subjects = request.sum == true ? [.interfaceClass(interfaceClass)] : chosen.map { .interface($0.name) }
        case (nil, nil):
            let selection = try request.select.map { name throws(WireError) -> QuerySelection in
                guard let selection = QuerySelection(rawValue: name) else {
                    throw WireError(.badRequest, "unknown selection \"\(name)\"; known: \(QuerySelection.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                return selection
            } ?? .shown
            chosen = selection.pick(everyInterface)
            subjects = chosen.map { .interface($0.name) }
        default:
            throw WireError(.badRequest, "give at most one of \"interfaces\" and \"class\"")
        }
        if !queries.isEmpty { saveBeforeAnswering() }
        let context = usageContext(metering.service)
        if let names = request.interfaces,
           let unknown = try UsageAnswers.unknown(names, store: metering.store, context: context).first {
            throw Self.unknownInterface(unknown)
        }
        let classes = Dictionary(everyInterface.map { ($0.name, $0.class) }) { first, _ in first }
        return QueryResult(
            status: parts.contains(.status) ? status() : nil,
            subjects: subjects.map { subject in
                switch subject {
                case .interface(let name): QuerySubject(name: name, class: classes[name] ?? "unknown")
                case .interfaceClass(let interfaceClass): QuerySubject(name: nil, class: interfaceClass.rawValue)
                }
            },
            interfaces: parts.contains(.interfaces) ? chosen : nil,
            usage: try UsageAnswers.tables(subjects, queries, store: metering.store, context: context),
            footnote: EstimateLabel.footnote)
    }

    private func interfaceClass(_ name: String) throws(WireError) -> InterfaceClass {
        guard let interfaceClass = InterfaceClass(rawValue: name) else {
            throw WireError(.badRequest, "unknown class \"\(name)\"; known: \(InterfaceClass.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return interfaceClass
    }

    static func unknownInterface(_ name: String) -> WireError {
        WireError(.unknownInterface, "no interface named \"\(name)\" has ever been seen")
    }

    /// What usage tables take from the service, as of now.
    private func usageContext(_ service: MeterService) -> UsageContext {
        let figures = service.snapshot().interfaces
        return UsageContext(
            tunnels: Set(figures.filter(\.isTunnel).map(\.name)), lostEvents: service.lostEvents,
            known: Set(figures.map(\.name)), now: SystemClock.now().wall)
    }

    /// Answers come from the database, so traffic counted but not yet saved is saved first.
    /// Only then: a client asking for a thousand interfaces' history costs one save, not a
    /// thousand (each rewrites every interface's epoch).
    private func saveBeforeAnswering() {
        if metering?.service.pending.hasUnsavedTraffic == true { save() }
    }

    /// A row as answered; `tunnel` for a tunnel's figures, `eventsLost` the events-lost
    /// events in its period. The one place a usage row's labels are decided.
    static func row(_ row: UsageRow, tunnel: Bool = false, eventsLost: Int = 0) -> UsageRowResult {
        UsageRowResult(UsageRowFields(
            start: Double(row.start), end: Double(row.end), continuity: row.tally.continuity(eventsLost: eventsLost),
            labels: row.tally.labels(tunnel: tunnel, eventsLost: eventsLost).map(\.rawValue)), traffic: row.tally.traffic)
    }

    /// `import`: another meter's history into the store, then the service's saved figures
    /// read again so every answer includes it.
    func importHistory(_ request: Request) throws -> ImportResult {
        let metering = try running()
        guard request.source == "vnstat" else {
            throw WireError(.badRequest, "unknown source \"\(request.source ?? "")\"; known: vnstat")
        }
        let path = try required(request.path, "path")
        guard path.hasPrefix("/") else { throw WireError(.badRequest, "field \"path\" must be absolute, got \"\(path)\"") }
        let database = try VnStatDatabase(path: path, utc: request.utc ?? false)
        saveBeforeAnswering()
        let dryRun = request.dryRun ?? false
        let reports = try metering.store.importVnStat(database, dryRun: dryRun)
        if !dryRun {
            metering.service.replaceSaved(totals: try metering.store.totals().mapValues(\.tally),
                                          interfaces: try metering.store.interfaces())
        }
        return ImportResult(source: "vnstat", path: path, dryRun: dryRun, interfaces: reports.map { report in
            ImportResult.Interface(
                name: report.name, buckets: Dictionary(uniqueKeysWithValues: report.buckets.map { ($0.key.rawValue, $0.value) }),
                alreadyImported: report.alreadyImported, overlapSkipped: report.overlapSkipped,
                totalRxBytes: report.total.rxBytes, totalTxBytes: report.total.txBytes,
                overlapFrom: report.overlap?.from, overlapTo: report.overlap?.to)
        })
    }

    func events(_ request: Request) throws -> EventsResult {
        let store = try running().store
        let kind = try request.kind.map { name throws(WireError) -> CounterEvent.Kind in
            guard let kind = CounterEvent.Kind(rawValue: name) else {
                throw WireError(.badRequest, "unknown event kind \"\(name)\"; known: \(CounterEvent.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return kind
        }
        let limit = request.limit ?? 1000
        saveBeforeAnswering()
        let events = try store.events(from: request.from?.seconds, to: request.to?.seconds, kind: kind,
                                      interface: request.interface, limit: limit)
        return EventsResult(events: events)
    }

    // MARK: Watchers

    func rates() -> RatesResult {
        guard let service = metering?.service else { return RatesResult(at: 0, interfaces: []) }
        return RatesResult(at: service.lastSample?.wall ?? 0,
                           interfaces: service.rates().map { RatesResult.Entry(name: $0.name, rate: RateResult($0.rate)) })
    }

    func broadcastRates() {
        let watchers = server.clients.values.filter { $0.watchID != nil }
        guard !watchers.isEmpty else { return }
        let result = rates()
        for client in watchers {
            server.send(LineEncoder.encode(Response.success(result, id: client.watchID!, stream: "rates")), to: client)
        }
    }

    func broadcast(_ event: CounterEvent) {
        for client in server.clients.values where client.watchID != nil {
            server.send(LineEncoder.encode(Response.success(event, id: client.watchID!, stream: "event")), to: client)
        }
    }
}

extension RateResult {
    init(_ rate: Rate) {
        self.init(rxBytesPerSecond: rate.rxBytesPerSecond, txBytesPerSecond: rate.txBytesPerSecond,
                  smoothedRxBytesPerSecond: rate.smoothedRxBytesPerSecond,
                  smoothedTxBytesPerSecond: rate.smoothedTxBytesPerSecond)
    }
}

extension InterfaceResult where Fields == InterfaceFields {
    /// The answer for one name, present or absent: the one place its fields and labels are set.
    init(_ figures: InterfaceFigures) {
        let present = figures.present
        self.init(InterfaceFields(
            name: figures.name, ifindex: present?.ifindex, class: figures.interfaceClass,
            classReason: figures.classReason, kind: figures.kind,
            operstate: present.map(\.operState.rawValue) ?? "absent",
            epoch: present?.tracked.map { EpochResult(
                EpochFields(bootID: $0.epoch.bootID, ifindex: $0.ifindex, generation: $0.epoch.generation,
                            since: $0.epoch.since), traffic: $0.last) },
            rate: present?.rate.map(RateResult.init),
            continuity: figures.total.continuity(since: figures.since, eventsLost: figures.eventsLost),
            labels: figures.labels.map(\.rawValue), lastSeen: figures.lastSeen), traffic: figures.total.traffic)
    }
}
