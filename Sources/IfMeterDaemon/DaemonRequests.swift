import IfMeterHTTP
import IfMeterPlatform
import IfMeterServer
import IfMeterCore
import IfMeterKernel
import IfMeterMetrics
import IfMeterRequests
import IfMeterService
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// The daemon as the request handlers' context, and the wiring that carries out their answers:
/// a line is sent, a store job goes to the store's thread, an answer built from a copy of the
/// service goes to the answers' thread, a `sample` waits for one, a `watch` begins.
extension Daemon: MeteringContext {
    var service: MeterService? { metering?.service }
    var isMetering: Bool { metering != nil }
    var now: Double { SystemClock.now().wall }
    var configPath: String { paths.config }

    func handle(_ request: Request, from client: Server.Client) {
        let id = request.id
        switch handlers.answer(request, from: Peer(uid: client.uid, isAdmin: client.isAdmin)) {
        case .line(let line): server.send(line, to: client)
        case .watch(let line):
            client.watchID = .some(id)
            server.send(line, to: client)
        case .afterSample: requestSample(id, client)
        case .offLoop(let build):
            guard let metering else { return server.send(Self.notMetering(id), to: client) }
            server.holdRequests(of: client)
            metering.answers.run({ _ in build() }, then: { [unowned self] (line: [UInt8]) in
                self.server.send(line, to: client)
                self.server.answered(client)
            })
        case .fromStore(let job):
            guard let metering else { return server.send(Self.notMetering(id), to: client) }
            server.holdRequests(of: client)
            metering.worker.run({ store in job(store) }, then: { [unowned self] (answer: StoreAnswer) in
                answer.update?(&metering.service, self.now)
                self.server.send(answer.line, to: client)
                self.server.answered(client)
            })
        }
    }

    private static func notMetering(_ id: RequestID?) -> [UInt8] {
        LineEncoder.failure(WireError(.notReady, "ifmeterd is not metering now", id: id))
    }

    /// Root, the daemon's own user, and members of `admin_group` may change state.
    func isAdmin(uid: uid_t, groups: [gid_t]) -> Bool {
        uid == 0 || uid == getuid() || config.adminGroup.map(groups.contains) == true
    }

    func reload(requestedBy uid: UInt32) -> String? {
        reload(trigger: "reload requested by uid \(uid)").map { "\($0)" }
    }

    func forgetPending(_ name: String) -> Bool {
        metering?.service.forget(name, at: now) ?? false
    }

    func metrics(_ request: MetricsRequest) -> MetricsResult {
        let format: ExpositionFormat = request.format == .openmetrics ? .openMetrics : .prometheus
        let bytes = exposition(ExpositionKey(format: format, gzip: false, process: request.process)).body
        return MetricsResult(contentType: format.contentType, text: String(decoding: bytes, as: UTF8.self))
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
            linkEvents: metering.map { LinkEventsHealth(origin: $0.sampler.feeds.own.events.origin,
                                                        receiveBuffer: $0.sampler.feeds.own.events.receiveBufferSize) },
            metrics: metricsServer.map { server in
                (options.metricsListen ?? config.metricsListen).map { MetricsAddress(host: $0.host, port: server.port).description }
                    ?? ":\(server.port)"
            })
    }

    /// Answers come from the database, so traffic counted but not yet saved is saved first:
    /// the save is handed to the store's thread before the question, which sees it. Only
    /// then: a client asking for a thousand interfaces' history costs one save, not a thousand.
    ///
    /// A save is an fsync: peers other than admins (any local user, from any number of uids)
    /// force one at most every ``forcedSaveSpacing``; between those their answers are from the
    /// store as it is, and say so (``EstimateLabel/unsavedNotIncluded``). Returns whether the
    /// answer holds everything counted.
    func saveBeforeAnswering(isAdmin: Bool) -> Bool {
        guard metering?.service.summary.hasUnsavedTraffic == true else { return true }
        if !isAdmin {
            if let last = lastUnprivilegedSave, loop.now &- last < EventLoop.microseconds(Self.forcedSaveSpacing) { return false }
            lastUnprivilegedSave = loop.now
        }
        save()
        return true
    }

    /// How often peers other than admins may have the daemon save before answering.
    static let forcedSaveSpacing: Duration = .seconds(10)

    // MARK: sample

    /// Most samples one non-admin peer can cause: one a second, whoever asks how often.
    static let requestedSampleSpacing: Duration = .seconds(1)

    /// `sample` is answered after a fresh sample. Requests arriving before it is taken share
    /// it (one dump, however many ask); for non-admins it is taken at most once a second, so a
    /// pipelined flood costs one dump a second and the periodic schedule is untouched.
    private func requestSample(_ id: RequestID?, _ client: Server.Client) {
        sampleWaiters.append((client, id))
        server.holdRequests(of: client)
        let now = loop.now
        let earliest = client.isAdmin ? now : (lastRequestedSample.map { $0 + EventLoop.microseconds(Self.requestedSampleSpacing) } ?? now)
        let when = max(now, earliest)
        if let requestedSample {
            if client.isAdmin { requestedSample.reschedule(at: now) }
            return
        }
        do {
            requestedSample = try loop.after(.microseconds(when - now)) { [unowned self] in self.answerSampleWaiters() }
        } catch {
            let waiters = sampleWaiters
            sampleWaiters = []
            for (client, id) in waiters where client.isOpen {
                server.send(LineEncoder.failure(WireError(answering: error, id: id)), to: client)
                server.answered(client)
            }
        }
    }

    private func answerSampleWaiters() {
        requestedSample = nil
        lastRequestedSample = loop.now
        let waiters = sampleWaiters
        sampleWaiters = []
        sample { [unowned self] in
            for (client, id) in waiters where client.isOpen {
                self.server.send(self.handlers.sampled(id: id), to: client)
                self.server.answered(client)
            }
        }
    }

    // MARK: watchers

    func broadcastRates() {
        let watchers = server.clients.values.filter { $0.watchID != nil }
        guard !watchers.isEmpty else { return }
        let result = handlers.rates()
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
