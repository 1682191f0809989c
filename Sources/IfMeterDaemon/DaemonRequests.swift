import IfMeterCore
import IfMeterKernel
import IfMeterHistory
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
            if CommandPolicy.of(command).adminOnly { try requireAdmin(client) }
            switch command {
            case .status: server.send(LineEncoder.success(status(), id: id), to: client)
            case .interfaces: try answerInterfaces(id, client)
            case .usage:
                let job = try usage(request, from: client)
                try answerFromStore(id, client) { store in LineEncoder.success(try job(store), id: id) }
            case .query:
                let job = try query(request, from: client)
                try answerFromStore(id, client) { store in LineEncoder.success(try job(store), id: id) }
            case .events:
                let job = try events(request, from: client)
                try answerFromStore(id, client) { store in LineEncoder.success(try job(store), id: id) }
            case .sample: try requestSample(id, client)
            case .metrics: reply(try metricsResult(request), id, client)
            case .importHistory: try importHistory(request, id, client)
            case .watch:
                client.watchID = .some(id)
                server.send(LineEncoder.success(rates(), id: id, stream: "rates"), to: client)
            case .reload:
                if let error = reload(trigger: "reload requested by uid \(client.uid)") {
                    throw WireError(.configError, "\(error); the running configuration stays")
                }
                reply(AdminResult(done: "configuration reloaded from \(paths.config)"), id, client)
            case .forget: try forget(request, id, client)
            }
        } catch {
            server.send(LineEncoder.failure(WireError(answering: error, id: id)), to: client)
        }
    }

    /// The metering state, or `not_ready`.
    func running() throws(WireError) -> Metering {
        guard let metering else { throw WireError(.notReady, "ifmeterd is not metering now") }
        return metering
    }

    func reply(_ result: some JSONWritable, _ id: RequestID?, _ client: Server.Client) {
        server.send(LineEncoder.success(result, id: id), to: client)
    }

    func fail(_ code: ErrorCode, _ message: String, _ id: RequestID?, _ client: Server.Client) {
        server.send(LineEncoder.failure(WireError(code, message, id: id)), to: client)
    }

    func required(_ value: String?, _ field: String) throws(WireError) -> String {
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
        let waiters = sampleWaiters
        sampleWaiters = []
        sample { [unowned self] in
            let summary = self.metering?.service.summary
            let result = SampleResult(sampledAt: summary?.sampledAt?.wall ?? 0, interfaces: summary?.presentLinks ?? 0)
            for (client, id) in waiters where client.isOpen {
                self.reply(result, id, client)
                self.server.answered(client)
            }
        }
    }

    func status() -> StatusResult {
        let summary = metering?.service.summary
        let running = summary != nil
        return StatusResult(
            ready: running, version: IfMeterVersion.string, pid: getpid(), startedAt: startedAt,
            interval: interval, saveInterval: config.saveInterval,
            lastSampleAt: summary?.sampledAt?.wall, source: running ? "netlink" : nil,
            interfaces: summary?.presentLinks,
            store: summary.map { StoreHealth(path: paths.database, healthy: $0.saveError == nil,
                                             lastSaveAt: $0.lastSaveAt, error: $0.saveError?.description) },
            socket: paths.socket, timeZone: running ? (config.timeZone == .utc ? "utc" : "local") : nil,
            linkEvents: metering.map { LinkEventsHealth(origin: $0.feeds.own.events.origin, receiveBuffer: $0.feeds.own.events.receiveBufferSize) },
            metrics: metricsServer.map { server in
                (options.metricsListen ?? config.metricsListen).map { MetricsAddress(host: $0.host, port: server.port).description }
                    ?? ":\(server.port)"
            })
    }

    func interfaces() -> InterfacesResult {
        Self.interfaces(of: metering?.service)
    }

    static func interfaces(of service: MeterService?) -> InterfacesResult {
        let figures = service?.snapshot().interfaces ?? []
        return InterfacesResult(interfaces: figures.map(InterfaceResult.init), footnote: EstimateLabel.footnote)
    }

    /// `interfaces`, built and encoded on the answers' thread from a copy of the service taken
    /// now: the loop goes on serving `status`, samples and watchers meanwhile.
    func answerInterfaces(_ id: RequestID?, _ client: Server.Client) throws(WireError) {
        let metering = try running()
        let service = metering.service
        server.holdRequests(of: client)
        metering.answers.run({ _ in
            let result = Self.interfaces(of: service)
            // About 650 bytes an interface (veths, idle); more for busy ones with long names.
            return LineEncoder.success(result, id: id, capacity: 1024 * (result.interfaces.count + 4))
        }, then: { [unowned self] (line: [UInt8]) in
            self.server.send(line, to: client)
            self.server.answered(client)
        })
    }

    // MARK: Watchers

    func rates() -> RatesResult {
        guard let service = metering?.service else { return RatesResult(at: 0, interfaces: []) }
        return RatesResult(at: service.summary.sampledAt?.wall ?? 0,
                           interfaces: service.rates().map { RatesResult.Entry(name: $0.name, rate: RateResult($0.rate)) })
    }

    func broadcastRates() {
        let watchers = server.clients.values.filter { $0.watchID != nil }
        guard !watchers.isEmpty else { return }
        let result = rates()
        for client in watchers {
            server.send(LineEncoder.success(result, id: client.watchID!, stream: "rates"), to: client)
        }
    }

    func broadcast(_ event: CounterEvent) {
        for client in server.clients.values where client.watchID != nil {
            server.send(LineEncoder.success(event, id: client.watchID!, stream: "event"), to: client)
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
