import CSystemd
import IfMeterHTTP
import IfMeterPlatform
import IfMeterServer
import IfMeterCore
import IfMeterKernel
import IfMeterOwners
import IfMeterMetrics
import IfMeterRequests
import IfMeterHistory
import IfMeterService
import IfMeterStore
import IfMeterWire
import IfMeterPresentation
#if canImport(Glibc)
import Glibc
#endif

/// The running service's lifecycle and I/O: one sd-event loop, the socket, the store, the
/// kernel feed, the estimate log and the timers. What is counted belongs to ``MeterService``.
///
/// Start order: config → directories checked, socket bound (clients are answered
/// `ready: false`) → ``Lifecycle/loading``: database opened, checked and loaded off the loop →
/// first dump → ``Lifecycle/running`` → SIGTERM → ``Lifecycle/stopping``.
final class Daemon {
    /// What the daemon is doing, and so what it may do.
    enum Lifecycle {
        /// The database is loading on another thread. Only `status` is answered; nothing is
        /// sampled or saved.
        case loading(Loading)
        /// Metering: samples, saves, and every command.
        case running(Metering)
        /// The final sample and save are taken; requests are no longer read.
        case stopping
    }

    /// What the start checked and took, for the metering it begins.
    struct Loading {
        /// The database's lock, held from before the socket is bound; the store keeps it.
        var lock: StoreLock
        /// `paths.database` with every symlink in its directory resolved.
        var databasePath: String
        /// The estimate log's, likewise.
        var logPath: String
        /// The link-event sockets systemd passed, if it did: the own namespace's, and the peers'.
        var linkEvents: Int32?
        var peerEvents: Int32?
    }

    private let loop: EventLoop
    /// What the roles read of the daemon: lifecycle, configuration, the start's facts.
    private let state: DaemonState
    private let server: Server
    /// The loop's sources the daemon keeps, so they stay on (the timers are the state's).
    private var signals: [EventSource] = []
    private var loadSource: EventSource?
    private let metrics: MetricsEndpoint
    private let web: WebEndpoint
    private let requests: DaemonRequests
    private let reloader: Reloader

    private var options: DaemonOptions { state.options }
    private var paths: Paths { state.paths }
    private var config: DaemonConfig { state.config }
    private var metering: Metering? { state.metering }

    /// Checks the directories, takes systemd's sockets, locks the database and binds the socket.
    init(options: DaemonOptions, paths: Paths, config: DaemonConfig) throws(PlatformError) {
        loop = try EventLoop()
        try makeDirectories(paths.stateDirectory, mode: 0o755)
        try makeDirectories(paths.logDirectory, mode: 0o755)
        // Opened by its real path: SQLite's NOFOLLOW refuses a symlink anywhere in the name,
        // and systemd's DynamicUser makes /var/lib/ifmeter one.
        // The log and the socket likewise: each is used by the real path of the directory that
        // was checked, so a link on the way that changed afterwards cannot move them elsewhere.
        let databasePath = try Self.trusted(paths.stateDirectory, role: "state") + "/" + Paths.databaseName
        let logPath = try Self.trusted(paths.logDirectory, role: "log") + "/" + Paths.estimateLogName
        let passed = try PassedSockets.take()
        var socketPath = paths.socket
        if passed.listener == nil {
            try makeDirectories(Self.parentDirectory(paths.socket), mode: 0o755)
            socketPath = try Self.trusted(Self.parentDirectory(paths.socket), role: "socket") + "/"
                + Self.baseName(paths.socket)
        }
        let lock: StoreLock
        do {
            lock = try StoreLock(databasePath: databasePath)
        } catch {
            throw PlatformError(error)
        }
        state = DaemonState(options: options, paths: paths, config: config, lifecycle: .loading(Loading(
            lock: lock, databasePath: databasePath, logPath: logPath, linkEvents: passed.linkEvents, peerEvents: passed.peerEvents)))
        server = try Server(path: socketPath, passed: passed.listener.flatMap { FileDescriptor(adopting: $0) }, mode: config.socketMode,
                            group: config.socketGroup, limits: Self.limits(config), loop: loop)
        var listening = passed.metrics.flatMap { FileDescriptor(adopting: $0) }
        if listening == nil, let address = options.metricsListen ?? config.metricsListen {
            listening = try HTTPServer.listen(on: address)
        }
        metrics = MetricsEndpoint(loop: loop, state: state)
        reloader = Reloader(state: state, server: server, metrics: metrics, loop: loop)
        requests = DaemonRequests(loop: loop, server: server, state: state, metrics: metrics, reloader: reloader)
        web = try WebEndpoint(listening: listening, loop: loop, state: state, metrics: metrics, requests: requests)
        state.httpPort = web.port
        server.isAdmin = { [unowned self] uid, groups in isAdmin(uid: uid, groups: groups) }
        server.costOf = { line in
            let policy = CommandPolicy.of(line)
            return RequestCost(largeAnswer: policy.largeAnswer, offLoop: policy.offLoop)
        }
        server.onRequest = { [requests] line, client in requests.handle(line, from: client) }
    }

    /// Runs until SIGTERM or SIGINT; returns the exit status.
    func run() -> Int32 {
        do throws(PlatformError) {
            signals.append(try loop.onSignal(SIGTERM) { [unowned self] in stop(signal: "SIGTERM") })
            signals.append(try loop.onSignal(SIGINT) { [unowned self] in stop(signal: "SIGINT") })
            signals.append(try loop.onSignal(SIGHUP) { [reloader] in _ = reloader.reload(trigger: "SIGHUP") })
            for source in signals { source.setImportant() }
            try startLoading()
            Self.notify("STATUS=loading \(paths.database)")
            if getenv("INVOCATION_ID") == nil {
                // In the foreground (not a systemd service): say how to ask it.
                Diagnostics.notice("counting; ask with: \(Self.clientCommand) --socket \(paths.socket)")
                if let url = pageURL { Diagnostics.notice("page: \(url) (and \(url)metrics)") }
            }
            return try loop.run()
        } catch {
            Diagnostics.error("\(error)")
            return error.exitStatus
        }
    }

    /// Where the page is served, for a person to open; nil without a listener.
    private var pageURL: String? {
        guard let port = web.port else { return nil }
        let host = (options.metricsListen ?? config.metricsListen)?.host ?? ""
        let shown = host.isEmpty || host == "0.0.0.0" || host == "::" ? "localhost" : host.contains(":") ? "[\(host)]" : host
        return "http://\(shown):\(port)/"
    }

    /// Root, the daemon's own user, and members of `admin_group` may change state.
    private func isAdmin(uid: uid_t, groups: [gid_t]) -> Bool {
        uid == 0 || uid == getuid() || config.adminGroup.map(groups.contains) == true
    }

    // MARK: Start

    /// Opens, checks and loads the database on another thread, so a slow disk or a large
    /// integrity check never keeps clients from hearing `ready: false`.
    private func startLoading() throws(PlatformError) {
        guard case .loading(let loading) = state.lifecycle else { return }
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw PlatformError.system("pipe", errno) }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        let outcome = LoadOutcome(readEnd: readEnd, writeEnd: writeEnd)
        let configuration = config.historyConfiguration
        // A plain thread, not Dispatch: libdispatch's workers adjust their priority, which the
        // service's syscall filter (~@resources) refuses.
        try BackgroundThread.run(named: "ifmeterd-load") {
            outcome.result = Self.load(path: loading.databasePath, configuration: configuration, lock: loading.lock)
            var byte: UInt8 = 1
            _ = write(writeEnd, &byte, 1)
        }
        loadSource = try loop.watch(fd: readEnd, events: UInt32(EPOLLIN.rawValue)) { [unowned self] _ in
            loadSource = nil
            outcome.closePipe()
            finishStart(outcome.result!)
        }
    }

    /// Loading → running: the first dump, the timers, and READY=1.
    private func finishStart(_ result: Result<(Store, ServiceHistory), StoreError>) {
        guard case .loading(let loading) = state.lifecycle else { return }
        do throws(PlatformError) {
            let (store, history) = try result.mapError { PlatformError($0) }.get()
            for repair in store.repairs { Diagnostics.warning("database \(paths.database): repaired \(repair)") }
            store.waitWhenBusy(milliseconds: Self.busyWaitMilliseconds)
            let (sampler, bootID, dump) = try startSampler(linkEvents: loading.linkEvents, peerEvents: loading.peerEvents,
                                                           appNames: history.apps?.names ?? [:])
            let now = SystemClock.now()
            // The applications' first read with the links' start dump: their baselines together
            // (docs/APPS.md, "Counting"). No dump is out yet, so the reader is the loop's now.
            let appRead = sampler.apps?.read(now: now.sinceBootNanoseconds)
            let scopeRead = sampler.scopes?.read()
            let metering = Metering(
                sampler: sampler, worker: try StoreWorker(store, named: "ifmeterd-store", loop: loop),
                answers: try AnswerWorker((), named: "ifmeterd-answer", loop: loop),
                service: MeterService(bootID: bootID, configuration: config.serviceConfiguration, history: history, at: state.startedAt),
                log: EstimateLog(path: loading.logPath, maxSize: config.logMaxSize, keep: config.logFiles),
                database: paths.database, retentionOwners: config.retention.owners)
            metering.foldInterval = config.foldInterval
            state.lifecycle = .running(metering)
            metrics.renderOn(metering.answers)
            metering.onEvent = { [requests] event in requests.broadcast(event) }
            // A fold may hold a slot's traffic the last refresh did not have yet.
            metering.onSaved = { [metrics, requests] seconds in
                metrics.saved(seconds: seconds)
                requests.refreshPercentiles()
            }
            sampler.deliver = { [unowned metering] read in metering.ingest(read) }
            sampler.sampled = { [requests, metrics] seconds, waiting in
                requests.broadcastRates()
                metrics.sampled(seconds: seconds) { for done in waiting { done() } }
            }
            // The clock first: the start's plans and save must not act on one that jumped while
            // the daemon was down.
            metering.observeClock(now)
            metering.act(on: metering.service.start(links: dump.links, unparseable: dump.unparseable, apps: appRead,
                                                         scopes: scopeRead, at: now))
            Self.startScopes(metering, config: config, links: dump.links, scopes: scopeRead, loop: loop)
            try sampler.watchLinkEvents()
            if config.networks { metering.watchNetworks(loop: loop) }
            try scheduleTimers()
            let count = metering.service.summary.presentLinks
            Diagnostics.notice("ready: \(count) interfaces, database \(paths.database), socket \(paths.socket)")
            Self.notify("READY=1\nSTATUS=metering \(count) interfaces")
            metering.save()
        } catch {
            Diagnostics.error(error.description)
            server.shutdown()
            loop.exit(error.exitStatus)
        }
    }

    /// The feeds (the daemon's namespace, then `meter_inside`'s), their start dump attributed
    /// to owners when configured, and the sampler over them.
    private func startSampler(linkEvents: Int32?, peerEvents: Int32?, appNames: [UInt64: String]) throws(PlatformError)
        -> (Sampler, bootID: String, dump: (links: [Link], unparseable: Int)) {
        let bootID: String
        let feeds: LinkFeeds
        var dump: (links: [Link], unparseable: Int)
        let owners: OwnerDirectory?
        do throws(KernelError) {
            bootID = try SystemClock.bootID()
            let own = try LinkFeed(eventSocket: linkEvents)
            own.annotate = LinkFeed.reading(SysfsReader(root: options.sysfsRoot))
            feeds = LinkFeeds([own] + Self.insideFeeds(config.meterInside))
            owners = config.attributeOwners != nil ? try OwnerDirectory(paths: config.ownerPaths) : nil
            if owners == nil {
                // Unread, it would hold up to its buffer of kernel memory for nothing.
                if let peerEvents { FileDescriptor(adopting: peerEvents)?.close() }
            } else {
                do {
                    try own.listenToPeers(adopting: peerEvents)
                } catch {
                    Diagnostics.notice("\(error): a container's traffic sent after the last sample before it is removed "
                        + "is not counted (grant CAP_NET_BROADCAST; docs/NAMESPACES.md)")
                }
            }
            dump = try feeds.startDump()
        } catch {
            throw PlatformError(error)
        }
        var attribution = Attribution(scope: config.attributeOwners ?? .containers, grace: .seconds(config.ownerGrace))
        if let owners {
            dump.links = attribution.start(dump.links, at: SystemClock.now().wall, lookUp: owners.lookUp)
        }
        return (try Sampler(feeds: feeds, attribution: attribution, owners: owners, apps: Self.appReader(config, names: appNames),
                            scopes: config.apps ? ScopeReader(pinDirectory: config.appsPins) : nil, loop: loop), bootID, dump)
    }

    private func scheduleTimers() throws(PlatformError) {
        state.sampleTimer = try loop.every(.seconds(state.interval)) { [state] in state.metering?.sampler.sample() }
        state.sampleTimer?.setImportant()
        state.saveTimer = try loop.every(.seconds(config.saveInterval)) { [state] in state.metering?.save() }
        state.percentileTimer = try loop.every(.seconds(UInt64(BurstablePercentile.slotSeconds))) { [requests] in requests.refreshPercentiles() }
        requests.refreshPercentiles()
    }

    // MARK: Stop

    /// Running → stopping: a last sample and save, then the loop exits.
    private func stop(signal: String) {
        Diagnostics.notice("\(signal): stopping")
        Self.notify("STOPPING=1")
        metering?.finish()
        state.lifecycle = .stopping
        server.shutdown()
        loop.exit(0)
    }

    /// Tells systemd (when it is listening) about state changes.
    static func notify(_ state: String) {
        _ = sd_notify(0, state)
    }
}
