import FoundationEssentials
import IfMeterCore
import IfMeterHistory
import IfMeterJSON
import IfMeterMetrics
import IfMeterRequests
import IfMeterService
import IfMeterStore
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// `request`: a line from a peer through framing, parsing, every command's checks and the
/// real handlers.
extension FuzzTargets {
    /// The request handlers over a context built from values: a service with a little
    /// history, saved to a store in a temporary directory. Shared by every run (opening a
    /// store per input would be all the fuzzer measured). No daemon, socket, loop or lock.
    nonisolated(unsafe) private static var sharedHandlers: RequestHandlers?
    nonisolated(unsafe) private static var sharedStore: Store?
    /// Its directory, removed when the process exits.
    nonisolated(unsafe) private static var scratch: String?

    /// A running daemon's side of the handlers, from values: saves go straight to the store.
    final class ValueContext: MeteringContext {
        var service: MeterService?
    var isMetering: Bool { service != nil }
        let store: Store
        let now: Double
        let configPath = "/nonexistent/ifmeterd.conf"

        init(service: MeterService, store: Store, now: Double) {
            (self.service, self.store, self.now) = (service, store, now)
        }

        func status() -> StatusResult {
            let summary = service?.summary
            return StatusResult(ready: summary != nil, version: IfMeterVersion.string, pid: 1, startedAt: now, interval: 30,
                                saveInterval: 300, lastSampleAt: summary?.sampledAt?.wall, source: "netlink",
                                interfaces: summary?.presentLinks, store: nil, socket: "/nonexistent.sock", timeZone: "local")
        }

        func metrics(_ request: MetricsRequest.Checked) -> MetricsResult {
            let format: ExpositionFormat = request.format == .openmetrics ? .openMetrics : .prometheus
            let input = MetricsInput(snapshot: service?.snapshot(), now: now, keepAbsentSeconds: 86400,
                                     sampleDurations: Histogram(bounds: Histogram.sampleBounds),
                                     saveDurations: Histogram(bounds: Histogram.saveBounds), version: "fuzz", process: nil)
            return MetricsResult(contentType: format.contentType,
                                 text: String(decoding: MetricsExposition.render(input, format: format), as: UTF8.self))
        }

        func saveBeforeImport() {
            let saved = service?.save(at: now) { [store] batch throws(StoreError) in
                let records = batch.presentRecords
                try store.writer.save(&batch.writes, recording: records)
                store.ledger.wrote(batch.writtenBatches)
            }
            precondition(saved?.error == nil, "the fuzz target's store could not save: \(saved!.error!)")
        }

        func reload(requestedBy uid: UInt32) -> String? { nil }

        func forgetPending(_ name: String) -> Bool { service?.forget(name, at: now) ?? false }
    }

    private static func handlers() -> RequestHandlers {
        if let sharedHandlers { return sharedHandlers }
        var template = Array("/tmp/ifmeter-fuzz-XXXXXX".utf8CString)
        let directory = String(cString: mkdtemp(&template)!)
        scratch = directory
        atexit {
            if let scratch = FuzzTargets.scratch { try? FileManager.default.removeItem(atPath: scratch) }
        }
        let store = try! Store(path: directory + "/ifmeter.db")
        let origin = 1_790_000_000.0
        var service = MeterService(bootID: "fuzz", configuration: ServiceConfiguration(),
                                   history: ServiceHistory(eventsLost: [(at: origin + 7200, scope: nil), (at: origin + 3600, scope: "wlan0")]), at: origin)
        let links = [Link(ifindex: 1, name: "lo", arpType: 772, flags: .loopback, counters: LinkCounters(rxBytes: 5)),
                     Link(ifindex: 2, name: "wlan0", arpType: 1, counters: LinkCounters(rxBytes: 100, txBytes: 10),
                          sysfs: SysfsFacts(hasPhy80211: true))]
        _ = service.start(links: links, unparseable: 0, at: MeterInstant(wall: origin, sinceBootNanoseconds: 1_000_000_000))
        for step in 1...50 {
            let instant = MeterInstant(wall: origin + Double(step) * 3600, sinceBootNanoseconds: UInt64(1 + step * 3600) * 1_000_000_000)
            let readings = [CounterReading(ifindex: 2, counters: LinkCounters(rxBytes: UInt64(100 + step * 1000), txBytes: UInt64(10 + step * 100)))]
            _ = service.ingest(linkEvents: [], readings: readings, at: instant)
        }
        let context = ValueContext(service: service, store: store, now: origin + 50 * 3600)
        context.saveBeforeImport()
        let handlers = RequestHandlers(context: context)
        sharedHandlers = handlers
        sharedStore = store
        return handlers
    }

    /// A request line through the daemon's framing, parsing and range checks, every command's
    /// member checks, then the real handler (as a peer other than an admin, so nothing changes
    /// the shared store) against a store with history. Every answer must read back as the
    /// client reads it.
    public static func request(_ bytes: [UInt8]) {
        var buffer = LineBuffer(maximumLength: 4096)
        for item in buffer.append(bytes) {
            guard case .line(let line) = item else { continue }
            switch RequestLine.parse(line) {
            case .failure(let error):
                readable(LineEncoder.failure(error), as: AdminResult.self)
            case .success(let request):
                // What the reader makes of a line, the client's writer writes back to the same.
                let again = RequestLine.parse(request.jsonBytes)
                precondition(again == .success(request), "\(request) was written back as \(again)")
                for command in Command.allCases { check(CommandRequest(command, request), from: request) }
                handle(request)
            }
        }
    }

    /// Every command's own checks of what a line's members mean, and its typed request written
    /// by the client's writer: read back, it is the same request.
    private static func check(_ typed: CommandRequest, from line: RequestLine) {
        func again<Request: CommandRequestType>(_ request: Request) {
            let written = request.lineBytes(id: line.id)
            precondition(written == RequestLine(request, id: line.id).jsonBytes, "\(request): the client's writer differs from the line's")
            precondition(RequestLine.parse(written).map(Request.init) == .success(request), "\(request) does not read back")
        }
        switch typed {
        case .status(let request): again(request)
        case .interfaces(let request): again(request)
        case .sample(let request): again(request)
        case .watch(let request): again(request)
        case .plans(let request): again(request)
        case .reload(let request): again(request)
        case .usage(let request): again(request); _ = try? request.checked()
        case .query(let request): again(request); _ = try? request.checked()
        case .events(let request): again(request); _ = try? request.checkedKind()
        case .metrics(let request): again(request); _ = try? request.checked()
        case .importHistory(let request): again(request); _ = try? request.checked()
        case .forget(let request): again(request); _ = try? request.checkedName()
        case .percentile(let request): again(request); _ = try? request.checked()
        case .alias(let request): again(request); _ = try? request.checked()
        }
    }

    /// `http-api`: a command's name, a newline, then `key=value` arguments joined by `&`, as
    /// libmicrohttpd hands them on decoded, through ``HTTPArguments`` and, when they make a
    /// request, the same handlers. A request made must be the command the path named, within
    /// range, and read back the same from its own line.
    public static func httpAPI(_ bytes: [UInt8]) {
        let text = String(decoding: bytes.prefix(8192), as: UTF8.self)
        let (name, query) = text.firstIndex(of: "\n").map { (String(text[..<$0]), String(text[text.index(after: $0)...])) } ?? (text, "")
        let pairs = query.split(separator: "&", omittingEmptySubsequences: false).prefix(40).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (key: String(parts[0]), value: parts.count > 1 ? String(parts[1]) : "")
        }
        let command = Command(rawValue: name) ?? HTTPArguments.commands[Int(name.utf8.first ?? 0) % HTTPArguments.commands.count]
        guard case .success(let request) = HTTPArguments.request(command, pairs) else { return }
        precondition(request.cmd == command.rawValue, "\(pairs) made a request for \(request.cmd ?? "nothing") on \(command)'s path")
        // Within range and of the right types: it reads back from its own line.
        precondition(RequestLine.parse(request.jsonBytes) == .success(request), "\(request) does not read back")
        handle(request)
    }

    private static func handle(_ request: RequestLine) {
        let handlers = handlers()
        let command = request.command
        let line: [UInt8]
        switch handlers.answer(request, from: Peer(uid: 1000, isAdmin: false)) {
        case .line(let bytes), .watch(let bytes): line = bytes
        case .afterSample: line = handlers.sampled(id: request.id)
        case .offLoop(let build): line = build()
        case .fromStore(let job):
            let answer = job(sharedStore!)
            precondition(answer.update == nil, "a peer other than an admin changed the service")
            line = answer.line
        case .streamedFromStore(let job):
            var parts: [UInt8] = []
            line = job(sharedStore!) { parts += $0 }.whole(after: parts)
        }
        switch command {
        case .query: readable(line, as: QueryResult.self)
        case .usage: readable(line, as: UsageResult.self)
        case .events: readable(line, as: EventsResult.self)
        case .interfaces: readable(line, as: InterfacesResult.self)
        case .metrics: readable(line, as: MetricsResult.self)
        case .watch: readable(line, as: RatesResult.self)
        case .sample: readable(line, as: SampleResult.self)
        case .plans: readable(line, as: PlansResult.self)
        case .percentile: readable(line, as: PercentileResult.self)
        default: readable(line, as: StatusResult.self)
        }
    }

    /// What the daemon writes, the client reads: the envelope, and a success's result as `T`.
    private static func readable<T: JSONReadable>(_ line: [UInt8], as type: T.Type) {
        precondition(line.last == UInt8(ascii: "\n"), "an answer that is not a line")
        let response: ResponseLine
        do {
            response = try ResponseLine(Array(line.dropLast()))
        } catch {
            fatalError("an answer the client cannot read (\(error)): \(String(decoding: line, as: UTF8.self))")
        }
        guard response.ok else { return precondition(response.error != nil, "a failure without an error") }
        do {
            _ = try response.result(as: type)
        } catch {
            fatalError("a \(type) the client cannot read (\(error)): \(String(decoding: line, as: UTF8.self))")
        }
    }
}
