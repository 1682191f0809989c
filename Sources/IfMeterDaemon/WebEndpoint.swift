import IfMeterHTTP
import IfMeterMetrics
import IfMeterPage
import IfMeterPlatform
import IfMeterPresentation
import IfMeterCore
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// The HTTP listener's routes (docs/METRICS.md, docs/PROTOCOL.md "Over HTTP"), every one
/// read-only, `GET` and `HEAD` only:
/// - `/metrics`: the exposition (``MetricsEndpoint``);
/// - `/api/v1/COMMAND`: a command that reads (``HTTPArguments``), answered as the socket answers
///   a peer that is not an admin, under the same limits; `/api/v1/rates`: the watch stream's
///   `rates` line as of the last sample;
/// - `/` and `/subject?name=NAME`: the pages, made from the same answers and rendered on the
///   answers' thread, never on the loop; `/static/…`: their style sheet and script.
final class WebEndpoint {
    private let state: DaemonState
    private let metrics: MetricsEndpoint
    private let requests: DaemonRequests
    /// The listener, when configured or passed by systemd.
    private var server: HTTPServer?

    init(listening fd: consuming FileDescriptor?, loop: EventLoop, state: DaemonState, metrics: MetricsEndpoint,
         requests: DaemonRequests) throws(PlatformError) {
        (self.state, self.metrics, self.requests) = (state, metrics, requests)
        guard let fd else { return }
        server = try HTTPServer(listening: fd, loop: loop) { [unowned self] request, reply in route(request, reply) }
    }

    /// The port it serves on, if it does.
    var port: UInt16? { server?.port }

    private static let text = "text/plain; charset=utf-8"
    private static let json = "application/json"
    private static let html = "text/html; charset=utf-8"

    private func route(_ request: HTTPServer.Request, _ reply: HTTPServer.Reply) {
        guard state.allowedHosts.allows(request.host) else {
            // Not echoed: the header is the client's, and this answer is the same for all.
            return reply.send(.init(status: 421, contentType: Self.text, headers: [("X-Content-Type-Options", "nosniff")],
                                    body: Array(("ifmeterd answers its own names, localhost and addresses only, not this Host header"
                                        + " (a defence against DNS rebinding): add the name to http_allowed_hosts in ifmeterd.conf\n").utf8)))
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            return reply.send(.init(status: 405, contentType: Self.text, allow: "GET, HEAD",
                                    body: Array("only GET and HEAD are served here: everything is read-only\n".utf8)))
        }
        if request.tooManyArguments {
            return reply.send(.init(status: 400, contentType: Self.text,
                                    body: Array("more than \(HTTPServer.maximumArguments) query arguments\n".utf8)))
        }
        let path = request.path
        if path == "/metrics" { return reply.send(metrics.answer(request)) }
        if path.hasPrefix("/static/"), let asset = PageAssets.asset(String(path.dropFirst("/static/".count))) {
            return reply.send(.init(status: 200, contentType: asset.contentType, headers: PageAssets.securityHeaders, body: asset.body))
        }
        if path == "/api/v1/rates" { return reply.send(Self.jsonAnswer(requests.ratesLine())) }
        if path.hasPrefix("/api/v1/") {
            let name = String(path.dropFirst("/api/v1/".count))
            guard let command = Command(rawValue: name), HTTPArguments.commands.contains(command) else {
                return reply.send(Self.jsonAnswer(LineEncoder.failure(WireError(
                    .unknownCommand, "not over HTTP: \"\(name)\"; the API answers "
                        + (HTTPArguments.commands.map(\.rawValue) + ["rates"]).joined(separator: ", ")))))
            }
            switch HTTPArguments.request(command, request.arguments) {
            case .success(let line):
                reply.send { [unowned self] done in requests.answer(line) { done(Self.jsonAnswer($0)) } }
            case .failure(let error): reply.send(Self.jsonAnswer(LineEncoder.failure(error)))
            }
            return
        }
        let gzip = ContentCoding.acceptsGzip(request.acceptEncoding)
        switch path {
        case "/", "/index.html":
            let paging = PagePaging { request.values($0).first }
            reply.send { [unowned self] done in overview(done, paging: paging, gzip: gzip) }
        case "/subject":
            guard let name = request.values("name").first, !name.isEmpty else {
                return reply.send(.init(status: 400, contentType: Self.text, body: Array("/subject needs ?name=NAME\n".utf8)))
            }
            reply.send { [unowned self] done in subject(name, done, gzip: gzip) }
        default:
            reply.send(.init(status: 404, contentType: Self.text,
                             body: Array("not found: ifmeterd serves /, /subject?name=NAME, /api/v1/… and /metrics\n".utf8)))
        }
    }

    /// An answer line as HTTP: its status from the error it carries, if any (read from its
    /// head: the line, of megabytes maybe, is not parsed again on the loop).
    private static func jsonAnswer(_ line: [UInt8]) -> HTTPServer.Answer {
        let code = LineEncoder.errorCode(of: line)
        let status: UInt32 = switch code {
        case nil: 200
        case .notReady?: 503
        case .unknownInterface?: 404
        case .storeError?, .internalError?: 500
        default: 400
        }
        return .init(status: status, contentType: json, headers: [("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff")],
                     body: line)
    }

    private func overview(_ done: @escaping (HTTPServer.Answer) -> Void, paging: PagePaging, gzip: Bool) {
        let asked = Stopwatch()
        requests.results(
            requests.storeJob(QueryRequest(usage: OverviewPage.interfacePeriods, include: [.status, .interfaces, .plans],
                                           offset: paging.interfaces, limit: PagePaging.rows)),
            requests.storeJob(QueryRequest(select: .owners, usage: OverviewPage.ownerPeriods, include: [.interfaces],
                                           offset: paging.owners, limit: PagePaging.rows)),
            requests.storeJob(QueryRequest(select: .networks, usage: OverviewPage.networkPeriods, include: [.networks])),
            requests.storeJob(QueryRequest(select: .apps, usage: OverviewPage.appPeriods, include: [.interfaces],
                                           limit: OverviewPage.appRows)),
            requests.storeJob(QueryRequest(select: .scopes, usage: OverviewPage.scopePeriods))
        ) { [unowned self] interfaces, owners, networks, apps, scopes in
            let (host, time, percentiles) = (state.hostName, state.time, state.percentiles)
            render(done, gzip: gzip, queried: asked.seconds) {
                OverviewPage.render(host: host, interfaces: try interfaces.get(), owners: try owners.get(),
                                    networks: try networks.get(), apps: try apps.get(), scopes: try scopes.get(),
                                    percentiles: percentiles, paging: paging,
                                    time: time, units: Units())
            }
        }
    }

    private func subject(_ name: String, _ done: @escaping (HTTPServer.Answer) -> Void, gzip: Bool) {
        let asked = Stopwatch()
        requests.results(
            requests.storeJob(QueryRequest(interfaces: [name], usage: SubjectPage.periods, include: [.status, .interfaces])),
            requests.storeJob(EventsRequest(interface: name, limit: SubjectPage.eventLimit)),
            requests.storeJob(QueryRequest(interfaces: [name], select: .scopes, usage: OverviewPage.scopePeriods))
        ) { [unowned self] tables, events, scopes in
            let (host, time) = (state.hostName, state.time)
            // Only interfaces, networks and applications are split (docs/SCOPES.md).
            let splits = SubjectKinds.kind(of: name).map { [SubjectSection.interfaces, .networks, .apps].contains($0.kind.section) } ?? false
            render(done, gzip: gzip, queried: asked.seconds) {
                SubjectPage.render(host: host, name: name, subject: try tables.get(), events: try events.get().events,
                                   scopes: splits ? try scopes.get() : nil, time: time, units: Units())
            }
        }
    }

    /// Renders on the answers' thread, gzipped there when the browser takes it; a failed answer
    /// is shown as what it said. `Server-Timing` says how long the answers took to come (the
    /// store's queries, in turn with other work) and the render on the answers' thread.
    private func render(_ done: @escaping (HTTPServer.Answer) -> Void, gzip: Bool, queried: Double,
                        _ page: @escaping @Sendable () throws -> String) {
        guard let answers = state.metering?.answers else {
            return done(.init(status: 503, contentType: Self.text, body: Array("ifmeterd is starting; reload shortly\n".utf8)))
        }
        answers.run(in: .later, { _ -> HTTPServer.Answer in
            do {
                let rendering = Stopwatch()
                var body = Array(try page().utf8)
                var encoding: String?
                if gzip, let stream = GzipStream() {
                    stream.add(body)
                    if let compressed = stream.finish() { (body, encoding) = (compressed, "gzip") }
                }
                let timing = "query;dur=\(Self.milliseconds(queried)), render;dur=\(Self.milliseconds(rendering.seconds))"
                return .init(status: 200, contentType: Self.html, encoding: encoding,
                             headers: PageAssets.securityHeaders + [("Server-Timing", timing)], body: body)
            } catch let error as WireError {
                let status: UInt32 = error.code == .unknownInterface ? 404 : error.code == .notReady ? 503 : 500
                return .init(status: status, contentType: Self.text, headers: PageAssets.securityHeaders, body: Array("\(error.message)\n".utf8))
            } catch {
                return .init(status: 500, contentType: Self.text, body: Array("\(error)\n".utf8))
            }
        }, then: done)
    }

    private static func milliseconds(_ seconds: Double) -> String {
        fixed(seconds * 1000, decimals: 2)
    }
}
