import IfMeterPlatform
import IfMeterServer
import IfMeterCore
import IfMeterKernel
import IfMeterRequests
import IfMeterService
import IfMeterStore
import IfMeterWire
import IfMeterJSON
import IfMeterMetrics
#if canImport(Glibc)
import Glibc
#endif

/// The daemon as the request handlers' context, and the wiring that carries out their answers:
/// a line is sent, a store job goes to the store's thread, an answer built from a copy of the
/// service goes to the answers' thread, a `sample` waits for one, a `watch` begins; and what
/// watchers are sent after each sample and event.
final class DaemonRequests: MeteringContext {
    private let loop: EventLoop
    private let server: Server
    private let state: DaemonState
    private let metricsEndpoint: MetricsEndpoint
    private let reloader: Reloader
    /// Clients waiting for the answer to `sample`: one dump answers all of them.
    private var sampleWaiters: [(client: Server.Client, id: RequestID?)] = []
    /// The one-shot timer that takes the requested sample.
    private var requestedSample: EventSource?
    /// When the requested sample is taken.
    private var samplePace = SamplePace()

    init(loop: EventLoop, server: Server, state: DaemonState, metrics: MetricsEndpoint, reloader: Reloader) {
        (self.loop, self.server, self.state, self.metricsEndpoint, self.reloader) = (loop, server, state, metrics, reloader)
    }

    /// The commands, answered over this context (a value made per use, so it does not hold
    /// itself).
    private var handlers: RequestHandlers { RequestHandlers(context: self) }

    var service: MeterService? { state.metering?.service }
    var isMetering: Bool { state.metering != nil }
    var now: Double { SystemClock.now().wall }
    var configPath: String { state.paths.config }

    func handle(_ line: RequestLine, from client: Server.Client) {
        let id = line.id
        let peer = Peer(uid: client.uid, isAdmin: client.isAdmin)
        switch handlers.answer(line, from: peer) {
        case .watch(let line):
            client.watchID = .some(id)
            server.send(line, to: client)
        case .afterSample: requestSample(id, client)
        case .line(let line): server.send(line, to: client)
        case let answer:
            server.holdRequests(of: client)
            let parts = Parts(send: { [server] part in server.send(part, to: client, partOfAnswer: true) }, tear: { [server] in
                server.close(client)
                server.answered(client)
            })
            carryOut(answer, id: id, lane: .first, parts: parts) { [server] line in
                server.send(line, to: client, partOfAnswer: true)
                server.answered(client)
            }
        }
    }

    /// What a reader does with a line handed over in parts (``Answer/streamedFromStore(_:)``):
    /// sends each part as it comes, and, if the line cannot be finished, `tear`s it (closes).
    private struct Parts {
        var send: ([UInt8]) -> Void
        var tear: () -> Void
    }

    /// A request from the HTTP API (docs/PROTOCOL.md, "Over HTTP"): answered as the socket
    /// answers a peer that is not an admin; `reply` gets the line, at once or, for work done
    /// on another thread, later on the loop. Only commands that read come here.
    func answer(_ line: RequestLine, reply: @escaping ([UInt8]) -> Void) {
        switch handlers.answer(line, from: Self.httpPeer) {
        case .watch, .afterSample:
            reply(LineEncoder.failure(WireError(.badRequest, "not over HTTP: use the socket's watch or sample", id: line.id)))
        case let answer: carryOut(answer, id: line.id, lane: .later, reply: reply)
        }
    }

    /// Who an HTTP request is from: nobody the daemon knows, never an admin.
    static let httpPeer = Peer(uid: UInt32(bitPattern: -2), isAdmin: false)

    /// A `query` from the page as its job for the store's thread, or what refuses it now.
    func storeJob(_ request: QueryRequest) -> Result<RequestHandlers.StoreJob<QueryResult>, WireError> {
        Result { try handlers.storeJob(request) }.mapError { WireError(answering: $0, id: nil) }
    }

    /// An `events` request from the page as its job for the store's thread, likewise.
    func storeJob(_ request: EventsRequest) -> Result<RequestHandlers.StoreJob<EventsResult>, WireError> {
        Result { try handlers.storeJob(request) }.mapError { WireError(answering: $0, id: nil) }
    }

    /// A `percentile` request of the daemon's own, likewise.
    func storeJob(_ request: PercentileRequest) -> Result<RequestHandlers.StoreJob<PercentileResult>, WireError> {
        Result { try handlers.storeJob(request) }.mapError { WireError(answering: $0, id: nil) }
    }

    /// Works out this month's 95th percentile of the Ethernet, Wi-Fi and cellular interfaces
    /// present (at most ``MetricsExposition/maximumPercentiles``, by name) for `/metrics` and the
    /// page (docs/METRICS.md); kept until the next time. Every 5 minutes, and after each fold.
    func refreshPercentiles() {
        guard let snapshot = state.metering?.service.snapshot() else { return }
        let uplinks: Set<String> = [InterfaceClass.ethernet.rawValue, InterfaceClass.wifi.rawValue, InterfaceClass.cellular.rawValue]
        let names = snapshot.interfaces.filter { $0.present != nil && uplinks.contains($0.interfaceClass) }.map(\.name).sorted()
            .prefix(MetricsExposition.maximumPercentiles)
        guard !names.isEmpty else { return state.percentiles = nil }
        results(storeJob(PercentileRequest(interfaces: Array(names), period: .month))) { [state] result in
            switch result {
            case .success(let answer): state.percentiles = answer
            case .failure(let error): Diagnostics.warning("the 95th percentiles for /metrics and the page: \(error.message)")
            }
        }
    }

    /// The results of a page's store jobs, each as its own type or what refused it: run in turn
    /// on the store's thread, in the HTTP clients' lane, and handed to `done` together, once,
    /// on the loop (nothing written to be read back).
    func results<each Value>(_ jobs: repeat Result<RequestHandlers.StoreJob<each Value>, WireError>,
                             then done: @escaping (repeat Result<each Value, WireError>) -> Void) {
        guard let metering = state.metering else { return done(repeat Self.refused(each jobs)) }
        metering.worker.run(in: .later, Self.work(repeat each jobs), then: { (results: (repeat Result<each Value, WireError>)) in
            done(repeat each results)
        })
    }

    /// The jobs as one, for the store's thread: their results in turn.
    private static func work<each Value>(_ jobs: repeat Result<RequestHandlers.StoreJob<each Value>, WireError>)
        -> @Sendable (Store) -> (repeat Result<each Value, WireError>) {
        let jobs = (repeat each jobs)
        return { store in (repeat run(each jobs, store)) }
    }

    private static func run<Value>(_ job: Result<RequestHandlers.StoreJob<Value>, WireError>, _ store: Store) -> Result<Value, WireError> {
        job.flatMap { job in Result { try job(store) }.mapError { WireError(answering: $0, id: nil) } }
    }

    private static func refused<Value>(_ job: Result<RequestHandlers.StoreJob<Value>, WireError>) -> Result<Value, WireError> {
        job.flatMap { _ in .failure(WireError(.notReady, "ifmeterd is not metering now")) }
    }

    /// The line, or the work on the answers' or store's thread whose result is the line; HTTP
    /// clients' work waits in the workers' later lane, behind the socket's and the daemon's own.
    private func carryOut(_ answer: Answer, id: RequestID?, lane: WorkLane, parts: Parts? = nil,
                          reply: @escaping ([UInt8]) -> Void) {
        switch answer {
        case .line(let line): reply(line)
        case .offLoop(let build):
            guard let metering = state.metering else { return reply(Self.notMetering(id)) }
            metering.answers.run(in: lane, { _ in build() }, then: reply)
        case .fromStore(let job):
            guard let metering = state.metering else { return reply(Self.notMetering(id)) }
            metering.worker.run(in: lane, { store in job(store) }, then: { [unowned self] (answer: StoreAnswer) in
                answer.update?(&metering.service, now)
                reply(answer.line)
            })
        case .streamedFromStore(let job):
            guard let metering = state.metering else { return reply(Self.notMetering(id)) }
            // Without a reader that takes parts, they are held and the line answered whole.
            var held: [UInt8] = []
            var sent = false
            metering.worker.run(in: lane, { store, handOver in job(store, handOver) }, parts: { part in
                if let parts {
                    parts.send(part)
                    sent = true
                } else {
                    held += part
                }
            }, then: { ending in
                if case .torn(let error) = ending {
                    Diagnostics.warning("an answer could not be finished after its first part was sent: \(error.message)")
                    if sent { return parts!.tear() }
                }
                reply(ending.whole(after: held))
            })
        case .watch(let line): reply(line)
        case .afterSample: reply(LineEncoder.failure(WireError(.badRequest, "not answered here", id: id)))
        }
    }

    /// The watch stream's `rates` line as of the last sample.
    func ratesLine() -> [UInt8] {
        LineEncoder.success(handlers.rates(), id: nil, stream: "rates")
    }

    private static func notMetering(_ id: RequestID?) -> [UInt8] {
        LineEncoder.failure(WireError(.notReady, "ifmeterd is not metering now", id: id))
    }

    func status() -> StatusResult { state.status() }

    func reload(requestedBy uid: UInt32) -> String? {
        reloader.reload(trigger: "reload requested by uid \(uid)").map { "\($0)" }
    }

    func forgetPending(_ name: String) -> Bool {
        state.metering?.service.forget(name, at: now) ?? false
    }

    func metrics(_ request: MetricsRequest.Checked) -> MetricsResult {
        metricsEndpoint.metrics(request)
    }

    /// An import writes beside the service: everything counted is handed to a save first, and
    /// the import (on the store's thread after it) sees it saved.
    func saveBeforeImport() {
        guard let metering = state.metering, metering.service.summary.hasUnsavedTraffic else { return }
        metering.save()
    }

    // MARK: sample

    /// `sample` is answered after a fresh sample, taken as ``SamplePace`` says.
    private func requestSample(_ id: RequestID?, _ client: Server.Client) {
        sampleWaiters.append((client, id))
        server.holdRequests(of: client)
        let now = loop.now
        let previous = samplePace.pending
        let at = samplePace.request(now: now, isAdmin: client.isAdmin)
        if let requestedSample {
            if at != previous { requestedSample.reschedule(at: at) }
            return
        }
        do {
            requestedSample = try loop.after(.microseconds(at - now)) { [unowned self] in answerSampleWaiters() }
        } catch {
            samplePace.abandon()
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
        samplePace.taken(at: loop.now)
        let waiters = sampleWaiters
        sampleWaiters = []
        let answer = { [unowned self] in
            for (client, id) in waiters where client.isOpen {
                server.send(handlers.sampled(id: id), to: client)
                server.answered(client)
            }
        }
        guard let metering = state.metering else { return answer() }
        metering.sampler.sample(then: answer)
    }

    // MARK: watchers

    /// The rates after a sample, to every watcher.
    func broadcastRates() {
        let watchers = server.clients.values.filter { $0.watchID != nil }
        guard !watchers.isEmpty else { return }
        let result = handlers.rates()
        for client in watchers {
            server.send(LineEncoder.success(result, id: client.watchID!, stream: "rates"), to: client)
        }
    }

    /// A counter or plan event, to every watcher.
    func broadcast(_ event: CounterEvent) {
        for client in server.clients.values where client.watchID != nil {
            server.send(LineEncoder.success(event, id: client.watchID!, stream: "event"), to: client)
        }
    }
}
