import CSystemd
import IfMeterCore
import IfMeterKernel
import IfMeterStore
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// The running service: one sd-event loop owning the meter, the store, the socket, the estimate
/// log and the timers. Start order: config → socket bound (clients are answered `ready: false`)
/// → database opened, checked and loaded off the loop → first sample → ready.
final class Daemon {
    let loop: EventLoop
    let options: DaemonOptions
    let paths: Paths
    var config: DaemonConfig
    var server: Server!
    var log: EstimateLog!
    var classifier: Classifier
    /// Verdicts by ifindex, with the name and kind they were made for.
    var classifications: [Int32: (name: String, kind: String, verdict: Classification)] = [:]

    private var lock: StoreLock?
    /// `paths.database` with every symlink in its directory resolved.
    private var databasePath: String
    var store: Store?
    var sampler: MeterSampler?
    var pending = PendingWrites()
    /// Every name's saved all-time total, kept in step with the database so `interfaces` never
    /// queries it.
    var savedTotals: [String: BucketTally] = [:]
    /// Traffic per name since the last save, for the estimate log.
    var logWindow: [String: (tally: BucketTally, epoch: Epoch)] = [:]
    /// Events since the last save: written to the estimate log when the database gets them.
    var logEvents: [CounterEvent] = []
    var logWindowStart: Double
    var ready = false
    let startedAt: Double
    var lastSample: MeterInstant?
    var lastSaveAt: Double?
    var saveError: StoreError?

    private var sources: [EventSource] = []
    private var sampleTimer: EventSource?
    private var saveTimer: EventSource?
    private var eventSource: EventSource?
    private var loadSource: EventSource?
    /// Clients waiting for the answer to `sample`: one dump answers all of them.
    var sampleWaiters: [(client: Server.Client, id: RequestID?)] = []
    /// The one-shot timer that takes the requested sample.
    var requestedSample: EventSource?
    /// When a requested sample was last taken (CLOCK_MONOTONIC µs).
    var lastRequestedSample: UInt64?
    /// When link events were lost, for the `events-lost` label.
    var lostEvents = LostEventTimes()
    /// What systemd passed at start.
    private var passed = PassedSockets()

    init(options: DaemonOptions, paths: Paths, config: DaemonConfig) throws(DaemonError) {
        self.options = options
        self.paths = paths
        self.config = config
        loop = try EventLoop()
        classifier = Classifier(rules: config.rules, sysfs: SysfsReader(root: options.sysfsRoot))
        startedAt = SystemClock.now().wall
        databasePath = paths.database
        logWindowStart = startedAt
    }

    /// Runs until SIGTERM or SIGINT; returns the exit status.
    func run() -> Int32 {
        do throws(DaemonError) {
            try makeDirectories(paths.stateDirectory, mode: 0o755)
            try makeDirectories(paths.logDirectory, mode: 0o755)
            // Opened by its real path: SQLite's NOFOLLOW refuses a symlink anywhere in the
            // name, and systemd's DynamicUser makes /var/lib/ifmeter one.
            databasePath = try DirectoryTrust.check(paths.stateDirectory, role: "state") + "/ifmeter.db"
            try DirectoryTrust.check(paths.logDirectory, role: "log")
            passed = try PassedSockets.take()
            if passed.listener == nil {
                try makeDirectories(parentDirectory(paths.socket), mode: 0o755)
                try DirectoryTrust.check(parentDirectory(paths.socket), role: "socket")
            }
            do {
                lock = try StoreLock(databasePath: databasePath)
            } catch {
                throw DaemonError(error)
            }
            server = try Server(path: paths.socket, passed: passed.listener, mode: config.socketMode, group: config.socketGroup,
                                limits: limits, loop: loop) { [unowned self] uid, groups in
                self.isAdmin(uid: uid, groups: groups)
            }
            server.onRequest = { [unowned self] request, client in self.handle(request, from: client) }
            log = EstimateLog(path: paths.log, maxSize: config.logMaxSize, keep: config.logFiles)
            sources.append(try loop.onSignal(SIGTERM) { [unowned self] in self.stop(signal: "SIGTERM") })
            sources.append(try loop.onSignal(SIGINT) { [unowned self] in self.stop(signal: "SIGINT") })
            sources.append(try loop.onSignal(SIGHUP) { [unowned self] in _ = self.reload(trigger: "SIGHUP") })
            for source in sources { source.setImportant() }
            try startLoading()
            notify("STATUS=loading \(paths.database)")
            return try loop.run()
        } catch {
            Diagnostics.error("\(error)")
            return error.exitStatus
        }
    }

    var limits: Server.Limits {
        Server.Limits(
            maxLineLength: config.maxLineLength,
            admission: Admission.Limits(maxClients: config.maxClients, maxClientsPerUID: config.maxClientsPerUID,
                                        adminReserved: config.adminReservedClients),
            clientBuffer: config.clientBuffer, idleTimeout: config.idleTimeout)
    }

    // MARK: Start

    /// Opens, checks and loads the database on another thread, so a slow disk or a large
    /// integrity check never keeps clients from hearing `ready: false`.
    private func startLoading() throws(DaemonError) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw DaemonError.system("pipe", errno) }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        let outcome = LoadOutcome()
        let path = databasePath
        let configuration = config.storeConfiguration
        let lock = self.lock
        // A plain thread, not Dispatch: libdispatch's workers adjust their priority, which the
        // service's syscall filter (~@resources) refuses.
        try BackgroundThread.run {
            do throws(StoreError) {
                let store = try Store(path: path, configuration: configuration, lock: lock)
                let loaded = try store.loadMeter()
                outcome.result = .success((store, loaded.state, loaded.knownNames))
            } catch {
                outcome.result = .failure(error)
            }
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

    private func finishStart(_ result: Result<(Store, MeterState?, [String: Double]), StoreError>) {
        do {
            let (store, state, names) = try result.get()
            store.waitWhenBusy(milliseconds: Self.busyWaitMilliseconds)
            self.store = store
            lostEvents = LostEventTimes(try store.events(kind: .eventsLost, limit: 100_000).map(\.at))
            savedTotals = try store.totals().mapValues(\.tally)
            let bootID = try SystemClock.bootID()
            let sampler = try MeterSampler(meter: Meter(
                bootID: bootID, configuration: config.meterConfiguration, restoring: state, knownNames: names),
                eventSocket: passed.linkEvents)
            let sysfs = classifier.sysfs
            sampler.annotate = { link in link.speedBitsPerSecond = sysfs.speed(of: link.name) }
            self.sampler = sampler
            eventSource = try loop.watch(fd: sampler.events.fileDescriptor, events: UInt32(EPOLLIN.rawValue)) {
                [unowned self] _ in self.drainEvents()
            }
            let now = SystemClock.now()
            take(try sampler.start(at: now))
            lastSample = now
            ready = true
            try scheduleTimers()
            let count = sampler.links.count
            Diagnostics.notice("ready: \(count) interfaces, database \(paths.database), socket \(paths.socket)")
            notify("READY=1\nSTATUS=metering \(count) interfaces")
            save()
        } catch let error as StoreError {
            fail(DaemonError(error))
        } catch let error as KernelError {
            fail(DaemonError(error))
        } catch let error as DaemonError {
            fail(error)
        } catch {
            fail(DaemonError(.software, "cannot start metering: \(error)"))
        }
    }

    /// The longest a save or query on the loop waits for another program's database lock.
    static let busyWaitMilliseconds: Int32 = 100

    private func fail(_ error: DaemonError) {
        Diagnostics.error(error.description)
        server?.shutdown()
        loop.exit(error.exitStatus)
    }

    private func scheduleTimers() throws(DaemonError) {
        sampleTimer = try loop.every(interval * 1_000_000) { [unowned self] in self.sample() }
        sampleTimer?.setImportant()
        saveTimer = try loop.every(config.saveInterval * 1_000_000) { [unowned self] in self.save() }
    }

    // MARK: Metering

    /// The sampling interval in force: the command line's, else the config's.
    var interval: UInt64 { options.interval ?? config.interval }

    func sample() {
        guard let sampler else { return }
        do {
            let now = SystemClock.now()
            take(try sampler.sample(at: now))
            lastSample = now
            broadcastRates(at: now)
        } catch {
            Diagnostics.error("sample failed: \(error)")
        }
    }

    private func drainEvents() {
        guard let sampler else { return }
        do {
            let output = try sampler.drainEvents()
            take(output)
            // A deleted interface's final counters are banked at once.
            if output.events.contains(where: { $0.kind == .deleted }) { save() }
        } catch {
            Diagnostics.error("reading link events failed: \(error)")
        }
    }

    /// The verdict for a link, recomputed only when its name or kind changed.
    func classification(of link: Link) -> Classification {
        if let cached = classifications[link.ifindex], cached.name == link.name, cached.kind == link.kind {
            return cached.verdict
        }
        let verdict = classifier.classify(link)
        classifications[link.ifindex] = (link.name, link.kind, verdict)
        return verdict
    }

    private func isIgnored(_ ifindex: Int32?) -> Bool {
        // Only a config rule can ignore; without one, no link needs classifying here.
        guard classifier.rules.contains(where: { $0.action == .ignore }),
              let ifindex, let link = sampler?.links[ifindex] else { return false }
        if case .ignored = classification(of: link) { return true }
        return false
    }

    /// Routes meter output to the pending save, the estimate log and watchers; interfaces a
    /// config rule ignores are dropped here.
    func take(_ output: MeterOutput) {
        var kept = MeterOutput()
        kept.deltas = output.deltas.filter { !isIgnored($0.ifindex) }
        kept.events = output.events.filter { !isIgnored($0.ifindex) }
        guard let store else { return }
        pending.add(kept, calendar: store.configuration.calendar, monthStartDay: store.configuration.monthStartDay(for:))
        for delta in kept.deltas {
            var entry = logWindow[delta.name] ?? (BucketTally(), delta.epoch)
            entry.tally += BucketTally(delta)
            entry.epoch = delta.epoch
            logWindow[delta.name] = entry
        }
        logEvents += kept.events
        for event in kept.events where event.kind == .eventsLost { lostEvents.record(event.at) }
        for event in kept.events {
            broadcast(event)
            if event.kind == .reboot || event.kind == .implausible || event.kind == .clockJump || event.kind == .eventsLost
                || event.kind == .bucketsFolded {
                Diagnostics.warning("\(event.kind.rawValue)\(event.interface.map { " on \($0)" } ?? ""): \(event.detail)")
            }
        }
    }

    /// Writes pending traffic with the meter state, prunes a little, and closes the estimate
    /// log's window. A failing save keeps everything for the next one.
    func save() {
        guard let store, let sampler else { return }
        let now = SystemClock.now().wall
        for link in sampler.links.values where !isIgnored(link.ifindex) {
            pending.note(InterfaceRecord(name: link.name, interfaceClass: classification(of: link).label,
                                         kind: link.kind, mac: link.address, lastSeen: now))
        }
        pending.setMeterState(sampler.meter.exportState())
        let saving = pending.unsavedTotals
        let dropped = pending.droppedEvents
        do {
            try store.save(&pending)
            if dropped > 0 {
                Diagnostics.warning("\(dropped) counter events were not stored: the database could not be written for too long")
            }
            for (name, tally) in saving { savedTotals[name, default: BucketTally()] += tally }
            try store.prune(now: Int64(now))
            if saveError != nil { Diagnostics.notice("saving to \(store.path) works again") }
            saveError = nil
            lastSaveAt = now
            notify("STATUS=metering \(sampler.links.count) interfaces; last sample \(Int(lastSample?.wall ?? now))")
        } catch {
            if saveError != error {
                Diagnostics.error("\(error); counting goes on in memory and the save will be retried")
            }
            saveError = error
        }
        writeLogWindow(until: now)
    }

    /// Writes the events and per-interface estimates since the last save: the log and the
    /// database are written together, and the encoding stays off the start and sample paths.
    private func writeLogWindow(until end: Double) {
        for event in logEvents {
            log.append(LineEncoder.encode(EventRecord(event)))
        }
        logEvents = []
        for (name, entry) in logWindow.sorted(by: { $0.key < $1.key }) {
            let link = sampler?.links.values.first { $0.name == name }
            let verdict = link.map(classification(of:))
            log.append(LineEncoder.encode(EstimateRecord(
                name: name, classification: verdict, start: logWindowStart, end: end,
                tally: entry.tally, epoch: entry.epoch,
                eventsLost: lostEvents.count(from: logWindowStart, to: end.nextUp))))
        }
        logWindow = [:]
        logWindowStart = end
    }

    // MARK: Lifecycle

    private func stop(signal: String) {
        Diagnostics.notice("\(signal): stopping")
        notify("STOPPING=1")
        if ready {
            sample()
            save()
        }
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
        classifier.rules = fresh.rules
        classifications = [:]
        store?.configuration = fresh.storeConfiguration
        sampler?.reconfigure(fresh.meterConfiguration)
        server.limits = limits
        log.maxSize = fresh.logMaxSize
        log.keep = fresh.logFiles
        if ready {
            sampleTimer?.setInterval(interval * 1_000_000, now: loop.now)
            saveTimer?.setInterval(fresh.saveInterval * 1_000_000, now: loop.now)
        }
        Diagnostics.notice("\(trigger): configuration reloaded from \(paths.config)")
        return nil
    }

    /// Tells systemd (when it is listening) about state changes.
    func notify(_ state: String) {
        _ = sd_notify(0, state)
    }

    private func parentDirectory(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}

/// The background load's result, handed to the loop thread through a pipe.
private final class LoadOutcome: @unchecked Sendable {
    var result: Result<(Store, MeterState?, [String: Double]), StoreError>?
}

/// Runs one closure on a new detached pthread.
enum BackgroundThread {
    static func run(_ body: @escaping @Sendable () -> Void) throws(DaemonError) {
        let box = Unmanaged.passRetained(ClosureBox(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            let box = Unmanaged<ClosureBox>.fromOpaque(context!).takeRetainedValue()
            box.body()
            return nil
        }, box)
        guard result == 0 else {
            Unmanaged<ClosureBox>.fromOpaque(box).release()
            throw DaemonError.system("pthread_create", result)
        }
        pthread_detach(thread)
    }

    private final class ClosureBox {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
