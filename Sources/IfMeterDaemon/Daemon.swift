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
        case loading
        /// Metering: samples, saves, and every command.
        case running(Metering)
        /// The final sample and save are taken; requests are no longer read.
        case stopping
    }

    /// What exists only while running: the store (behind its own thread), the sampler that
    /// reads the kernel (one feed per metered namespace), and the service they serve.
    final class Metering {
        let worker: StoreWorker
        let sampler: Sampler
        /// Builds `interfaces` answers from a copy of the service, off the loop.
        let answers: AnswerWorker
        var service: MeterService

        init(worker: StoreWorker, sampler: Sampler, answers: AnswerWorker, service: MeterService) {
            self.worker = worker
            self.sampler = sampler
            self.answers = answers
            self.service = service
        }
    }

    let loop: EventLoop
    let options: DaemonOptions
    let paths: Paths
    var config: DaemonConfig
    let server: Server
    let log: EstimateLog
    /// Set by the start and stop paths.
    private var lifecycle = Lifecycle.loading
    let startedAt: Double
    private let lock: StoreLock
    /// `paths.database` with every symlink in its directory resolved.
    private let databasePath: String
    /// What systemd passed at start.
    private let passed: PassedSockets
    private var signalSources: [EventSource] = []
    private var loadSource: EventSource?
    private var sampleTimer: EventSource?
    private var saveTimer: EventSource?
    /// Clients waiting for the answer to `sample`: one dump answers all of them.
    var sampleWaiters: [(client: Server.Client, id: RequestID?)] = []
    /// The one-shot timer that takes the requested sample.
    var requestedSample: EventSource?
    /// When a requested sample was last taken (CLOCK_MONOTONIC µs).
    var lastRequestedSample: UInt64?
    /// `/metrics` over HTTP, when configured or passed by systemd.
    var metricsServer: MetricsServer?
    /// When a peer other than an admin last had the daemon save before answering (µs).
    var lastUnprivilegedSave: UInt64?
    /// The metrics endpoint's expositions, rendered once per sample or save.
    private(set) lazy var expositions = ExpositionCache(
        loop: loop, state: { [unowned self] in self.expositionState }, input: { [unowned self] in self.metricsInput(process: $0) })
    var sampleDurations = Histogram(bounds: Histogram.sampleBounds)
    var saveDurations = Histogram(bounds: Histogram.saveBounds)

    /// The commands, answered over this daemon as their context (a value made per use, so the
    /// daemon does not hold itself).
    var handlers: RequestHandlers { RequestHandlers(context: self) }

    /// Checks the directories, takes systemd's sockets, locks the database and binds the socket.
    init(options: DaemonOptions, paths: Paths, config: DaemonConfig) throws(PlatformError) {
        self.options = options
        self.paths = paths
        self.config = config
        loop = try EventLoop()
        startedAt = SystemClock.now().wall
        try makeDirectories(paths.stateDirectory, mode: 0o755)
        try makeDirectories(paths.logDirectory, mode: 0o755)
        // Opened by its real path: SQLite's NOFOLLOW refuses a symlink anywhere in the name,
        // and systemd's DynamicUser makes /var/lib/ifmeter one.
        // The log and the socket likewise: each is used by the real path of the directory that
        // was checked, so a link on the way that changed afterwards cannot move them elsewhere.
        databasePath = try Self.trusted(paths.stateDirectory, role: "state") + "/" + Paths.databaseName
        let logPath = try Self.trusted(paths.logDirectory, role: "log") + "/" + Paths.estimateLogName
        passed = try PassedSockets.take()
        var socketPath = paths.socket
        if passed.listener == nil {
            try makeDirectories(Self.parentDirectory(paths.socket), mode: 0o755)
            socketPath = try Self.trusted(Self.parentDirectory(paths.socket), role: "socket") + "/"
                + Self.baseName(paths.socket)
        }
        do {
            lock = try StoreLock(databasePath: databasePath)
        } catch {
            throw PlatformError(error)
        }
        server = try Server(path: socketPath, passed: passed.listener, mode: config.socketMode,
                            group: config.socketGroup, limits: Self.limits(config), loop: loop)
        log = EstimateLog(path: logPath, maxSize: config.logMaxSize, keep: config.logFiles)
        try startMetrics(passed: passed.metrics)
        server.isAdmin = { [unowned self] uid, groups in self.isAdmin(uid: uid, groups: groups) }
        server.costOf = { request in
            let policy = CommandPolicy.of(request)
            return RequestCost(largeAnswer: policy.largeAnswer, offLoop: policy.offLoop)
        }
        server.onRequest = { [unowned self] request, client in self.handle(request, from: client) }
    }

    /// The real path of a directory the daemon writes in, once ``DirectoryTrust`` found nobody
    /// else can write there: 73 when it cannot be checked, 78 when another user could.
    static func trusted(_ path: String, role: String) throws(PlatformError) -> String {
        do {
            return try DirectoryTrust.check(path, role: role, program: "ifmeterd")
        } catch {
            throw PlatformError(error.kind == .unchecked ? .cannotCreate : .configuration, error.message)
        }
    }

    /// Runs until SIGTERM or SIGINT; returns the exit status.
    func run() -> Int32 {
        do throws(PlatformError) {
            signalSources.append(try loop.onSignal(SIGTERM) { [unowned self] in self.stop(signal: "SIGTERM") })
            signalSources.append(try loop.onSignal(SIGINT) { [unowned self] in self.stop(signal: "SIGINT") })
            signalSources.append(try loop.onSignal(SIGHUP) { [unowned self] in _ = self.reload(trigger: "SIGHUP") })
            for source in signalSources { source.setImportant() }
            try startLoading()
            notify("STATUS=loading \(paths.database)")
            if getenv("INVOCATION_ID") == nil {
                // In the foreground (not a systemd service): say how to ask it.
                Diagnostics.notice("counting; ask with: \(Self.clientCommand) --socket \(paths.socket)")
            }
            return try loop.run()
        } catch {
            Diagnostics.error("\(error)")
            return error.exitStatus
        }
    }

    /// The metering state, when running.
    var metering: Metering? {
        if case .running(let metering) = lifecycle { return metering }
        return nil
    }

    static func limits(_ config: DaemonConfig) -> Server.Limits {
        Server.Limits(
            maxLineLength: config.maxLineLength,
            admission: Admission.Limits(maxClients: config.maxClients, maxClientsPerUID: config.maxClientsPerUID,
                                        adminReserved: config.adminReservedClients),
            clientBuffer: config.clientBuffer,
            unreadPerUID: Self.unreadAnswersPerUID(clientBuffer: config.clientBuffer),
            idleTimeout: config.idleTimeout)
    }

    /// Unread answers one uid's connections may hold (``UIDShares``): 16 × `client_buffer`
    /// (16 MiB by default), room for several `interfaces` answers of thousands of links.
    static func unreadAnswersPerUID(clientBuffer: Int) -> Int {
        16 * clientBuffer
    }

    // MARK: Start

    /// Opens, checks and loads the database on another thread, so a slow disk or a large
    /// integrity check never keeps clients from hearing `ready: false`.
    private func startLoading() throws(PlatformError) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw PlatformError.system("pipe", errno) }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        let outcome = LoadOutcome()
        let path = databasePath
        let configuration = config.storeConfiguration
        let lock = self.lock
        // A plain thread, not Dispatch: libdispatch's workers adjust their priority, which the
        // service's syscall filter (~@resources) refuses.
        try BackgroundThread.run {
            outcome.result = Self.load(path: path, configuration: configuration, lock: lock)
            var byte: UInt8 = 1
            _ = write(writeEnd, &byte, 1)
        }
        loadSource = try loop.watch(fd: readEnd, events: UInt32(EPOLLIN.rawValue)) { [unowned self] _ in
            self.loadSource = nil
            close(readEnd)
            close(writeEnd)
            self.finishStart(outcome.result!)
        }
    }

    /// Opens and loads the store. A database another program holds (a backup, the sqlite3
    /// shell) is waited for as long as it is held, each try for SQLite's busy timeout, and said
    /// once: exiting after one try would leave the service to systemd's restart limit, and the
    /// daemon answers `ready: false` meanwhile, and stops at once on SIGTERM. Another ifmeterd
    /// on the database is no reason to wait: that fails at once (``StoreLock``).
    static func load(path: String, configuration: StoreConfiguration, lock: StoreLock?) -> Result<(Store, ServiceHistory), StoreError> {
        var waiting = false
        while true {
            let result = Result { () throws(StoreError) in
                let store = try Store(path: path, configuration: configuration, lock: lock)
                return (store, try store.loadHistory())
            }
            guard case .failure(let error) = result, case .locked(byPID: nil) = error.kind else { return result }
            if !waiting {
                Diagnostics.notice("database \(path) is held by another program (\(error.message)); waiting until it is let go")
                waiting = true
            }
        }
    }

    /// Loading → running: the first dump, the timers, and READY=1.
    private func finishStart(_ result: Result<(Store, ServiceHistory), StoreError>) {
        guard case .loading = lifecycle else { return }
        do throws(PlatformError) {
            let (store, history) = try result.mapError { PlatformError($0) }.get()
            for repair in store.repairs { Diagnostics.warning("database \(paths.database): repaired \(repair)") }
            store.waitWhenBusy(milliseconds: Self.busyWaitMilliseconds)
            let bootID: String
            let feeds: LinkFeeds
            var dump: (links: [Link], unparseable: Int)
            let owners: OwnerDirectory?
            do throws(KernelError) {
                bootID = try SystemClock.bootID()
                let own = try LinkFeed(eventSocket: passed.linkEvents)
                own.annotate = LinkFeed.reading(SysfsReader(root: options.sysfsRoot))
                feeds = LinkFeeds([own] + Self.insideFeeds(config.meterInside))
                owners = config.attributeOwners != nil ? try OwnerDirectory(paths: config.ownerPaths) : nil
                if owners != nil {
                    do {
                        try own.events.listenToPeers()
                    } catch {
                        Diagnostics.notice("\(error): a container's traffic sent after the last sample before it is removed "
                            + "is not counted (grant CAP_NET_BROADCAST; docs/NAMESPACES.md)")
                    }
                }
                dump = try feeds.startDump()
            } catch {
                throw PlatformError(error)
            }
            let now = SystemClock.now()
            var attribution = Attribution(scope: config.attributeOwners ?? .containers, graceSeconds: Double(config.ownerGrace))
            if let owners {
                dump.links = attribution.start(dump.links, at: now.wall, lookUp: owners.lookUp)
            }
            let sampler = try Sampler(feeds: feeds, attribution: attribution, owners: owners, loop: loop)
            let metering = Metering(worker: try StoreWorker(store, loop: loop), sampler: sampler,
                                    answers: try AnswerWorker((), loop: loop), service: MeterService(
                bootID: bootID, configuration: config.serviceConfiguration, history: history, at: startedAt))
            lifecycle = .running(metering)
            expositions.answers = metering.answers
            sampler.deliver = { [unowned self] read in self.ingest(read) }
            sampler.sampled = { [unowned self] seconds, waiting in self.sampled(seconds: seconds, waiting: waiting) }
            act(on: metering.service.start(links: dump.links, unparseable: dump.unparseable, at: now))
            try sampler.watchLinkEvents()
            try scheduleTimers()
            let count = metering.service.summary.presentLinks
            Diagnostics.notice("ready: \(count) interfaces, database \(paths.database), socket \(paths.socket)")
            notify("READY=1\nSTATUS=metering \(count) interfaces")
            save()
        } catch {
            Diagnostics.error(error.description)
            server.shutdown()
            loop.exit(error.exitStatus)
        }
    }

    /// A feed for each namespace `meter_inside` names, numbered from 1 in the order named; one
    /// that cannot be joined (no such namespace, no `CAP_SYS_ADMIN`) is said and left out, and
    /// the rest is metered as before.
    static func insideFeeds(_ names: [String]) -> [LinkFeed] {
        names.enumerated().compactMap { index, name in
            do {
                return try LinkFeed.inside(namespaceFile: "/run/netns/\(name)", namespace: NamespaceID(rawValue: UInt32(index + 1)),
                                           prefix: SubjectName.owned(.netns, name) + "/")
            } catch {
                Diagnostics.error("meter_inside: \(error); namespace \(name) is not metered (docs/NAMESPACES.md: "
                    + "under systemd it needs docs/examples/meter-inside.conf)")
                return nil
            }
        }
    }

    /// The longest a save or query waits for another program's database lock.
    static let busyWaitMilliseconds: Int32 = 100

    private func scheduleTimers() throws(PlatformError) {
        sampleTimer = try loop.every(.seconds(interval)) { [unowned self] in self.sample() }
        sampleTimer?.setImportant()
        saveTimer = try loop.every(.seconds(config.saveInterval)) { [unowned self] in self.save() }
    }

    /// The sampling interval in force: the command line's, else the config's.
    var interval: UInt64 { options.interval ?? config.interval }

    // MARK: Stop and reload

    /// Running → stopping: a last sample and save, then the loop exits.
    private func stop(signal: String) {
        Diagnostics.notice("\(signal): stopping")
        notify("STOPPING=1")
        if let metering {
            // A dump still out is applied first; no other follows it (the last is taken here).
            metering.sampler.sampleFinally()
            save()
            metering.worker.drain()
            metering.answers.drain()
        }
        lifecycle = .stopping
        server.shutdown()
        loop.exit(0)
    }

    /// Re-reads the config file; on any error the running configuration stays. Returns the
    /// error, if any, for the `reload` command.
    func reload(trigger: String) -> ConfigError? {
        notify("RELOADING=1")
        defer { notify("READY=1") }
        log.reopen()
        let fresh: DaemonConfig
        do {
            fresh = try DaemonConfig.load(path: paths.config, required: paths.configRequired)
        } catch {
            Diagnostics.error("\(trigger): \(error); keeping the running configuration")
            return error
        }
        config = fresh
        server.limits = Self.limits(fresh)
        log.maxSize = fresh.logMaxSize
        log.keep = fresh.logFiles
        if let metering {
            let configuration = fresh.storeConfiguration
            metering.worker.run({ store in store.configuration = configuration }, then: { _ in })
            metering.service.reconfigure(fresh.serviceConfiguration)
            watchPlans()
            sampleTimer?.setInterval(.seconds(interval), now: loop.now)
            saveTimer?.setInterval(.seconds(fresh.saveInterval), now: loop.now)
        }
        Diagnostics.notice("\(trigger): configuration reloaded from \(paths.config)")
        return nil
    }

    /// Tells systemd (when it is listening) about state changes.
    func notify(_ state: String) {
        _ = sd_notify(0, state)
    }

    /// `ifmeter` beside this binary when it is there (a build directory), else by name.
    static var clientCommand: String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return "ifmeter" }
        let client = parentDirectory(String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)) + "/ifmeter"
        return access(client, X_OK) == 0 ? client : "ifmeter"
    }

    private static func parentDirectory(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private static func baseName(_ path: String) -> String {
        path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
    }
}

/// The background load's result, handed to the loop thread through a pipe.
private final class LoadOutcome: @unchecked Sendable {
    var result: Result<(Store, ServiceHistory), StoreError>?
}
