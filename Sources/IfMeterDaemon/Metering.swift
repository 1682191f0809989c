import IfMeterPlans
import CMemory
import CSystemd
import IfMeterPlatform
import IfMeterCore
import IfMeterKernel
import IfMeterHistory
import IfMeterService
import IfMeterStore
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// What exists only while the daemon meters, and the I/O around the meter service: what the
/// ``Sampler`` read goes into the service; what the service counted goes to the store (on its
/// own thread), the estimate log, the journal and, through ``onEvent``, the watchers.
final class Metering {
    let sampler: Sampler
    /// The store, behind its own thread.
    let worker: StoreWorker
    /// Builds large answers from a copy of the service, off the loop.
    let answers: AnswerWorker
    /// What is counted now; answers from the store may change it (``StoreAnswer/update``).
    var service: MeterService
    private let log: EstimateLog
    /// The database as configured, for messages.
    private let database: String
    /// How long a container gone stays in the database (`retention_owners`); nil keeps it.
    var retentionOwners: Int64?
    /// Seconds between folds into the buckets (`fold_interval`); saves between them append to
    /// the save journal. 0: every save is a full one.
    var foldInterval: UInt64 = 0
    /// When the last full save began (CLOCK_MONOTONIC), for ``foldInterval``.
    private var lastFold = Stopwatch()
    /// False once an append or a reset of the save journal failed: every save is a full one.
    private var journalWorks = true
    /// The last sample whose deltas the last append holds, for `status`.
    private(set) var lastJournalAt: Double?
    /// NetworkManager's devices and their networks, with `networks = yes`.
    private(set) var networks: NetworkFeed?
    /// Whether applications are counted (docs/APPS.md), as the last sample found.
    var appsHealth: AppsHealth
    /// The scopes' parts (docs/SCOPES.md), with `apps = yes`: the local prefixes' writer, the
    /// links' coverage, and the last scope counters read.
    var prefixSync: PrefixSync?
    var coverage: ScopeCoverage?
    var lastScopes: ScopeCounts?
    /// What says the wall clock is synchronised, asked at each read (``ClockTrust``).
    private var clockSync = ClockSync()
    /// When the clocks were last read, for how far back a time source's stamp may be.
    private var lastClockLook: MeterInstant?
    /// Each counter and plan event, for the watchers.
    var onEvent: (CounterEvent) -> Void = { _ in }
    /// After each save, with how long it took.
    var onSaved: (_ seconds: Double) -> Void = { _ in }

    init(sampler: Sampler, worker: StoreWorker, answers: AnswerWorker, service: MeterService, log: EstimateLog,
         database: String, retentionOwners: Int64?) {
        self.sampler = sampler
        self.worker = worker
        self.answers = answers
        self.service = service
        self.log = log
        self.database = database
        self.retentionOwners = retentionOwners
        appsHealth = sampler.apps?.health ?? AppsHealth(counting: false, detail: "apps = no, or no cgroup2 hierarchy")
    }

    /// Splits interfaces' traffic between their networks from now on (docs/NETWORKS.md).
    func watchNetworks(loop: EventLoop) {
        let feed = NetworkFeed(metering: self)
        networks = feed
        feed.start(loop: loop)
    }

    /// Opens the estimate log again, for a rotation done outside (SIGHUP).
    func reopenLog() {
        log.reopen()
    }

    /// The estimate log's limits, from a reloaded configuration.
    func limitLog(maxSize: UInt64, keep: Int) {
        log.maxSize = maxSize
        log.keep = keep
    }

    /// What the sampler read, into the service; link events and owners found between samples
    /// may make a save due (a plan event, a link gone).
    func ingest(_ read: Sampler.Read) {
        if let health = read.appsHealth { appsHealth = health }
        if let scopes = read.scopes { lastScopes = scopes }
        coverage?.observe(events: read.linkEvents, scopes: read.scopes)
        observeClock(read.at)
        let ingested = service.ingest(linkEvents: read.linkEvents, readings: read.readings, apps: read.apps,
                                      scopes: read.scopes, at: read.at)
        act(on: ingested)
        if read.cause != .sample && ingested.wantsSave { save() }
    }

    /// Whether the wall clock is believed, for `status`.
    var clockHealth: ClockHealth {
        guard case .doubted(let since, let reason, _) = service.clock.state else { return ClockHealth(trusted: true) }
        return ClockHealth(trusted: false, doubtedSince: since, detail: Self.doubtText(reason))
    }

    static func doubtText(_ reason: ClockTrust.Reason) -> String {
        "\(reason); retention, retention_owners, metrics_keep_absent and the plans' periods and thresholds wait until "
            + "it is synchronised, comes back, or moves as the boot clock does for \(Int(ClockTrust.settleSeconds / 60)) min"
    }

    /// The clocks as read at the start dump, a sample or a link event, before it is ingested: a
    /// change in the wall clock's trust goes to the journal, once.
    func observeClock(_ instant: MeterInstant) {
        let window = (lastClockLook.map { instant.seconds(since: $0) } ?? 0) + 60
        lastClockLook = instant
        let synchronised = clockSync.synchronised(at: instant, window: window)
        switch service.observeClock(instant, synchronised: synchronised) {
        case .doubted(let reason)?:
            Diagnostics.warning("the wall clock is doubted: \(Self.doubtText(reason))")
        case .trusted(let regained)?:
            Diagnostics.notice("the wall clock is believed again (\(regained.rawValue)): retention, retention_owners, "
                + "metrics_keep_absent and the plans resume")
        case .stepped(let seconds)?:
            Diagnostics.notice("the wall clock was stepped by \(ClockTrust.Reason.span(abs(seconds)))"
                + " \(seconds > 0 ? "ahead" : "back") while synchronised: believed")
        case nil:
            break
        }
    }

    /// Tells watchers about each event, and the journal about those an admin should see; then
    /// keeps watch over the plans with what was counted.
    func act(on ingested: Ingested) {
        tell(ingested.events)
        for notice in ingested.notices { Diagnostics.warning(notice) }
        watchPlans(clockRead: true)
    }

    private func tell(_ events: [CounterEvent]) {
        for event in events {
            onEvent(event)
            if let plan = PlanEvent(event) {
                Diagnostics.log(plan.kind == .threshold ? .warning : .notice, plan.detail, fields: Self.journalFields(plan))
            } else if Self.journalledKinds.contains(event.kind) {
                Diagnostics.warning("\(event.kind.rawValue)\(event.interface.map { " on \($0)" } ?? ""): \(event.detail)")
            }
        }
    }

    /// Evaluates the plans (after every ingest): what fired goes out like counter events and is
    /// saved at once. A period whose saved traffic is not known yet is read from the store first.
    /// `clockRead`: the caller has just compared the clocks (with the ingest it acts on), so
    /// they are not read and compared again.
    func watchPlans(clockRead: Bool = false) {
        // The clocks as they read now, not at the last sample: a jump since must not end a period.
        let instant = SystemClock.now()
        if !clockRead { observeClock(instant) }
        let now = instant.wall
        if let request = service.planBaselinesNeeded(at: now) {
            worker.run({ store -> Result<[PlanBounds: [String: BucketTally]], StoreError> in
                Result { () throws(StoreError) in
                    var tallies: [PlanBounds: [String: BucketTally]] = [:]
                    for period in request.periods { tallies[period] = try store.queries.dailyTallies(from: period.start, to: period.end) }
                    return tallies
                }
            }, then: { [unowned self] result in
                switch result {
                case .success(let tallies):
                    service.takePlanBaselines(tallies, for: request)
                    watchPlans()
                case .failure(let error):
                    service.takePlanBaselines([:], for: request)
                    Diagnostics.error("reading the plans' periods from the database failed: \(error); tried again at the next sample")
                }
            })
        }
        let fired = service.watchPlans(at: now)
        tell(fired.events)
        if fired.wantsSave { save() }
    }

    /// A plan event's figures as journal fields (`journalctl PLAN=phone`).
    static func journalFields(_ event: PlanEvent) -> [(String, String)] {
        let plan = event.facts
        var fields = [("IFMETER_EVENT", event.counterKind.rawValue), ("PLAN", plan.plan), ("PLAN_DIRECTION", plan.direction),
                      ("PLAN_USED_BYTES", String(plan.used)), ("PLAN_LIMIT_BYTES", String(plan.limit)),
                      ("PLAN_PERIOD_START", String(plan.periodStart)), ("PLAN_PERIOD_END", String(plan.periodEnd))]
        if let threshold = plan.threshold { fields.append(("PLAN_THRESHOLD", ValueGrammar.percentText(threshold))) }
        if plan.whileDown { fields.append(("PLAN_WHILE_DOWN", "1")) }
        return fields
    }

    /// Events that also go to the journal: they say something is wrong with the host or ifmeter.
    static let journalledKinds: Set<CounterEvent.Kind> = [.reboot, .implausible, .clockJump, .eventsLost, .bucketsFolded]

    /// Appends to the save journal what was counted since the last save while a fold is not
    /// due and nothing but traffic is pending; else folds everything into the database
    /// (``fold()``). `full` (a stop) always folds.
    func save(full: Bool = false) {
        guard !full, journalWorks, foldInterval > 0, lastFold.seconds < Double(foldInterval),
              let record = service.beginJournal()
        else { return fold() }
        // What the record holds is counted up to the last sample ingested.
        let taken = service.summary.sampledAt?.wall
        worker.run({ store -> StoreError? in
            guard let journal = store.journal else {
                return StoreError(kind: .other, path: store.path + ".journal", operation: "append to", message: "not open")
            }
            do throws(StoreError) {
                try journal.append(record)
                return nil
            } catch {
                return error
            }
        }, then: { [unowned self] (error: StoreError?) in
            if let error {
                journalFailed(error)
                fold()
            } else {
                lastJournalAt = taken
            }
        })
    }

    /// The deltas an append failed to write are still pending: the next save folds them.
    private func journalFailed(_ error: StoreError) {
        guard journalWorks else { return }
        journalWorks = false
        Diagnostics.error("\(error); every save is a full one until a fold can start the journal afresh")
    }

    /// Saves pending traffic with the meter state and prunes a little, on the store's thread,
    /// then starts the save journal afresh; then, on the loop, takes the result and writes the
    /// estimate log's window. A failing save keeps everything for the next one.
    private func fold() {
        lastFold = Stopwatch()
        // The clocks as they read now: the save timer may run before any sample saw a jump, and
        // the cut-offs below come from this instant.
        let now = SystemClock.now()
        observeClock(now)
        let batch = service.beginSave(at: now.wall)
        // Nothing is deleted by a wall clock that is doubted: its cut-offs would be wrong.
        let prunes = service.clock.isTrusted
        // Containers gone longer than retention_owners go with this save, a hundred at a time.
        let expired = prunes ? retentionOwners.map {
            service.absentOwners(lastSeenBefore: batch.at - Double($0), limit: Self.ownersForgottenPerSave)
        } ?? [] : []
        worker.run({ store -> Folded in
            var folded = Folded(batch: batch)
            let started = Stopwatch()
            defer { folded.seconds = started.seconds }
            do throws(StoreError) {
                let records = folded.batch.presentRecords
                try store.writer.save(&folded.batch.writes, recording: records)
                store.ledger.wrote(folded.batch.writtenBatches)
            } catch {
                folded.error = error
                return folded
            }
            // The journal's records are in the database now. Failing here leaves records of
            // the save before in the file, which a start never reads (their sequence is past).
            // Tried at every fold, so a journal that failed (a full disk) comes back with room.
            if let journal = store.journal {
                do throws(StoreError) {
                    try journal.reset(sequence: store.writer.sequence)
                    folded.journalReset = true
                } catch {
                    folded.journalError = error
                }
            }
            do throws(StoreError) {
                if prunes { _ = try store.retention.prune(now: Int64(folded.batch.at)) }
                for name in expired { try store.retention.forget(name) }
            } catch {
                folded.pruneError = error
                return folded
            }
            // Answers of thousands of interfaces and saves leave free heap behind; give it
            // back once per save, on this thread, so the daemon's memory is what it holds.
            _ = ifm_malloc_trim()
            return folded
        }, then: { [unowned self] (folded: Folded) in
            if let error = folded.journalError { journalFailed(error) }
            if folded.journalReset, !journalWorks {
                journalWorks = true
                Diagnostics.notice("the save journal works again: saves between folds append to it")
            }
            finishSave(folded.batch, error: folded.error, pruneError: folded.pruneError, seconds: folded.seconds, expired: expired)
        })
    }

    /// What a fold did, on the store's thread.
    private struct Folded: Sendable {
        var batch: SaveBatch
        var error: StoreError?
        var pruneError: StoreError?
        var journalError: StoreError?
        var journalReset = false
        var seconds = 0.0
    }

    /// A churn of thousands of containers is forgotten over several saves, none of them long.
    static let ownersForgottenPerSave = 100

    private func finishSave(_ batch: SaveBatch, error: StoreError?, pruneError: StoreError?, seconds: Double, expired: [String]) {
        let outcome = service.finishSave(batch, error: error.map(SaveFailure.init))
        if error == nil, pruneError == nil {
            for name in expired { _ = service.forget(name, at: batch.at) }
            if !expired.isEmpty {
                Diagnostics.notice("forgot \(expired.count) container(s) and namespace(s) gone longer than retention_owners: "
                    + expired.prefix(5).joined(separator: ", ") + (expired.count > 5 ? ", …" : ""))
            }
        }
        onSaved(seconds)
        if let error = outcome.error {
            if outcome.previousError != error {
                Diagnostics.error("\(error); counting goes on in memory and the save will be retried")
            }
        } else {
            if outcome.droppedEvents > 0 {
                Diagnostics.warning("\(outcome.droppedEvents) counter events were not stored: the database could not be written for too long")
            }
            if outcome.recovered { Diagnostics.notice("saving to \(database) works again") }
            if let pruneError {
                Diagnostics.error("pruning old buckets failed: \(pruneError); it is tried again at the next save")
            }
            let summary = service.summary
            let sampled = summary.sampledAt.map { Int($0.wall) } ?? Int(batch.at)
            Daemon.notify("STATUS=metering \(summary.presentLinks) interfaces; last sample \(sampled)")
        }
        EstimateLogRecord.forEachRecord(of: outcome.log) { log.append(LineEncoder.line($0)) }
    }

    /// A last sample and save, then the threads finish what they were given, but for HTTP
    /// clients' questions not yet begun: the save does not wait for them.
    func finish() {
        // A dump still out is applied first; no other follows it (the last is taken here).
        sampler.sampleFinally()
        save(full: true)
        worker.discardWaiting(.later)
        answers.discardWaiting(.later)
        worker.drain()
        answers.drain()
    }
}

/// Elapsed CLOCK_MONOTONIC time since it was made.
struct Stopwatch {
    private let start = Stopwatch.nanoseconds()

    var seconds: Double { Double(Stopwatch.nanoseconds() &- start) / 1e9 }

    private static func nanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
