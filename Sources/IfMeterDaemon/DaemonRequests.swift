import IfMeterPlatform
import IfMeterServer
import IfMeterCore
import IfMeterKernel
import IfMeterRequests
import IfMeterService
import IfMeterWire
import IfMeterJSON
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
    private let metricsEndpoint: MetricsEndpoint
    let configPath: String
    /// The metering state, when the daemon runs.
    private let metering: () -> Metering?
    private let statusNow: () -> StatusResult
    private let reloadNow: (_ uid: UInt32) -> String?
    /// Clients waiting for the answer to `sample`: one dump answers all of them.
    private var sampleWaiters: [(client: Server.Client, id: RequestID?)] = []
    /// The one-shot timer that takes the requested sample.
    private var requestedSample: EventSource?
    /// When the requested sample is taken.
    private var samplePace = SamplePace()

    init(loop: EventLoop, server: Server, metrics: MetricsEndpoint, configPath: String, metering: @escaping () -> Metering?,
         status: @escaping () -> StatusResult, reload: @escaping (_ uid: UInt32) -> String?) {
        self.loop = loop
        self.server = server
        self.metricsEndpoint = metrics
        self.configPath = configPath
        self.metering = metering
        self.statusNow = status
        self.reloadNow = reload
    }

    /// The commands, answered over this context (a value made per use, so it does not hold
    /// itself).
    private var handlers: RequestHandlers { RequestHandlers(context: self) }

    var service: MeterService? { metering()?.service }
    var isMetering: Bool { metering() != nil }
    var now: Double { SystemClock.now().wall }

    func handle(_ request: Request, from client: Server.Client) {
        let id = request.id
        let peer = Peer(uid: client.uid, isAdmin: client.isAdmin)
        switch handlers.answer(request, from: peer) {
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
    func answer(_ request: Request, reply: @escaping ([UInt8]) -> Void) {
        switch handlers.answer(request, from: Self.httpPeer) {
        case .watch, .afterSample:
            reply(LineEncoder.failure(WireError(.badRequest, "not over HTTP: use the socket's watch or sample", id: request.id)))
        case let answer: carryOut(answer, id: request.id, lane: .later, reply: reply)
        }
    }

    /// Who an HTTP request is from: nobody the daemon knows, never an admin.
    static let httpPeer = Peer(uid: UInt32(bitPattern: -2), isAdmin: false)

    /// A `query` or `events` request from the page: its result itself, from the store's thread,
    /// on the loop (nothing written to be read back), or what refused it.
    func result(of request: Request, then done: @escaping (Result<any JSONWritable & Sendable, WireError>) -> Void) {
        let job: RequestHandlers.StoreJob<any JSONWritable & Sendable>
        do {
            job = try handlers.storeJob(request)
        } catch {
            return done(.failure(WireError(answering: error, id: nil)))
        }
        guard let metering = metering() else { return done(.failure(WireError(.notReady, "ifmeterd is not metering now"))) }
        metering.worker.run(in: .later, { store -> Result<any JSONWritable & Sendable, WireError> in
            do {
                return .success(try job(store))
            } catch {
                return .failure(WireError(answering: error, id: nil))
            }
        }, then: done)
    }

    /// The line, or the work on the answers' or store's thread whose result is the line; HTTP
    /// clients' work waits in the workers' later lane, behind the socket's and the daemon's own.
    private func carryOut(_ answer: Answer, id: RequestID?, lane: WorkLane, parts: Parts? = nil,
                          reply: @escaping ([UInt8]) -> Void) {
        switch answer {
        case .line(let line): reply(line)
        case .offLoop(let build):
            guard let metering = metering() else { return reply(Self.notMetering(id)) }
            metering.answers.run(in: lane, { _ in build() }, then: reply)
        case .fromStore(let job):
            guard let metering = metering() else { return reply(Self.notMetering(id)) }
            metering.worker.run(in: lane, { store in job(store) }, then: { [unowned self] (answer: StoreAnswer) in
                answer.update?(&metering.service, now)
                reply(answer.line)
            })
        case .streamedFromStore(let job):
            guard let metering = metering() else { return reply(Self.notMetering(id)) }
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

    func status() -> StatusResult { statusNow() }

    func reload(requestedBy uid: UInt32) -> String? { reloadNow(uid) }

    func forgetPending(_ name: String) -> Bool {
        metering()?.service.forget(name, at: now) ?? false
    }

    func metrics(_ request: MetricsRequest) -> MetricsResult {
        metricsEndpoint.metrics(request)
    }

    /// An import writes beside the service: everything counted is handed to a save first, and
    /// the import (on the store's thread after it) sees it saved.
    func saveBeforeImport() {
        guard let metering = metering(), metering.service.summary.hasUnsavedTraffic else { return }
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
        guard let metering = metering() else { return answer() }
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
