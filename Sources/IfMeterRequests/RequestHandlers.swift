import IfMeterCore
import IfMeterService
import IfMeterStore
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// The socket API's commands (docs/PROTOCOL.md): a request and its peer in, how to answer it
/// out. A value over a ``MeteringContext``: it holds no socket, loop or lock, so every command
/// is tested and fuzzed with a context built from values and a store in a temporary directory.
public struct RequestHandlers {
    public let context: any MeteringContext

    public init(context: any MeteringContext) {
        self.context = context
    }

    /// Work on the store's thread that answers one request.
    public typealias StoreJob<Result> = @Sendable (Store) throws -> Result

    /// The answer to `line`: the version and command are checked first, then readiness, then
    /// (for admin commands) the peer, then the command's own members.
    public func answer(_ line: RequestLine, from peer: Peer) -> Answer {
        let id = line.id
        do {
            let command = try CommandRequest.command(of: line)
            guard context.isMetering || command == .status || command == .metrics else { throw Self.starting }
            if command.policy.adminOnly { try requireAdmin(peer) }
            return try answer(resolvingAliases(CommandRequest(command, line)), id: id, peer: peer)
        } catch {
            return .line(LineEncoder.failure(WireError(answering: error, id: id)))
        }
    }

    /// A `query` as its result's job for the store's thread, checked as ``answer(_:from:)``
    /// checks it: for a reader that wants the result itself (the page), not its line. Throws
    /// what refuses it now.
    public func storeJob(_ request: QueryRequest) throws -> StoreJob<QueryResult> {
        guard context.isMetering else { throw Self.starting }
        let job = try query(resolvingAliases(request).checked())
        return { store in try job.result(store) }
    }

    /// A `percentile` request (the page's and `/metrics`'), likewise.
    public func storeJob(_ request: PercentileRequest) throws -> StoreJob<PercentileResult> {
        guard context.isMetering else { throw Self.starting }
        guard case .percentile(let resolved) = resolvingAliases(.percentile(request)) else { return try percentile(request.checked()) }
        return try percentile(resolved.checked())
    }

    /// An `events` request as its result's job for the store's thread, likewise.
    public func storeJob(_ request: EventsRequest) throws -> StoreJob<EventsResult> {
        guard context.isMetering else { throw Self.starting }
        guard case .events(let resolved) = resolvingAliases(.events(request)) else { return try events(request) }
        return try events(resolved)
    }

    private static let starting = WireError(
        .notReady, "ifmeterd is starting (loading its database and taking the first sample); ask again shortly")

    private func answer(_ command: CommandRequest, id: RequestID?, peer: Peer) throws -> Answer {
        switch command {
        case .status: return .line(LineEncoder.success(context.status(), id: id))
        case .interfaces:
            let service = try running()
            return .offLoop {
                let result = Self.interfaces(of: service)
                // About 650 bytes an interface (veths, idle); more for busy ones with long names.
                return LineEncoder.success(result, id: id, capacity: 1024 * (result.interfaces.count + 4))
            }
        case .usage(let usage): return Self.fromStore(id, try self.usage(usage.checked()))
        case .query(let query):
            let job = try self.query(query.checked())
            guard job.streams else { return Self.fromStore(id) { try job.result($0) } }
            return .streamedFromStore { store, handOver in job.line(id: id, store, handOver: handOver) }
        case .events(let events): return Self.fromStore(id, try self.events(events))
        case .percentile(let request): return Self.fromStore(id, try percentile(request.checked()))
        case .plans:
            let service = try running()
            return .line(LineEncoder.success(PlansResult(plans: Self.plans(of: service, at: context.now),
                                                         footnote: EstimateLabel.footnote), id: id))
        case .sample: return .afterSample
        case .watch: return .watch(LineEncoder.success(rates(), id: id, stream: "rates"))
        case .metrics(let metrics): return .line(LineEncoder.success(context.metrics(try metrics.checked()), id: id))
        case .reload:
            if let error = context.reload(requestedBy: peer.uid) {
                throw WireError(.configError, "\(error); the running configuration stays")
            }
            return .line(LineEncoder.success(AdminResult(done: "configuration reloaded from \(context.configPath)"), id: id))
        case .importHistory(let request): return try importHistory(request.checked(), id)
        case .forget(let request): return try forget(request.checkedName(), id)
        case .alias(let request): return try alias(request.checked(), id)
        }
    }

    /// The line that answers a `sample` once it is taken.
    public func sampled(id: RequestID?) -> [UInt8] {
        let summary = context.service?.summary
        return LineEncoder.success(SampleResult(sampledAt: summary?.sampledAt?.wall ?? 0, interfaces: summary?.presentLinks ?? 0),
                                   id: id)
    }

    /// The service, or `not_ready`.
    func running() throws(WireError) -> MeterService {
        guard let service = context.service else { throw WireError(.notReady, "ifmeterd is not metering now") }
        return service
    }

    private func requireAdmin(_ peer: Peer) throws(WireError) {
        guard peer.isAdmin else {
            throw WireError(.permissionDenied, "only root, uid \(getuid()) or the admin group may do this (you are uid \(peer.uid))")
        }
    }

    /// A store job's result as its answer line, or the line of the error it threw.
    static func fromStore<Result: JSONWritable>(_ id: RequestID?, _ job: @escaping StoreJob<Result>) -> Answer {
        .fromStore { store in StoreAnswer(line: line(id) { LineEncoder.success(try job(store), id: id) }) }
    }

    /// `body`'s answer line, or the line of the error it threw.
    static func line(_ id: RequestID?, _ body: () throws -> [UInt8]) -> [UInt8] {
        do {
            return try body()
        } catch {
            return LineEncoder.failure(WireError(answering: error, id: id))
        }
    }

    static func unknownInterface(_ name: String) -> WireError {
        WireError(.unknownInterface, "no interface named \"\(name)\" has ever been seen")
    }
}
