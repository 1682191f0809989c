import IfMeterCore
import IfMeterHistory
import IfMeterJSON
@testable import IfMeterRequests
@testable import IfMeterService
import IfMeterStore
import IfMeterTestSupport
import IfMeterWire
import Testing

/// A running daemon's side of the handlers, from values: a service with two links and a day
/// of history, saved to a real store in a temporary directory. Saves go straight to the store.
final class ValueContext: MeteringContext {
    var service: MeterService?
    var isMetering: Bool { service != nil }
    let store: Store
    let directory: TemporaryDirectory
    let now: Double
    let configPath = "/etc/ifmeter/ifmeterd.conf"
    var reloadError: String?
    private(set) var saves = 0
    private(set) var forgotten: [String] = []

    static let origin = 1_790_000_000.0

    init(running: Bool = true) throws {
        directory = try TemporaryDirectory()
        var configuration = HistoryConfiguration()
        configuration.calendar = BucketCalendar(zone: .utc)
        store = try Store(path: directory.database, configuration: configuration)
        now = Self.origin + 24 * 3600
        guard running else { return }
        var service = MeterService(bootID: "b", configuration: ServiceConfiguration(store: configuration),
                                   history: ServiceHistory(), at: Self.origin)
        let links = [Link(ifindex: 2, name: "eth0", arpType: 1, operState: .up, counters: LinkCounters(rxBytes: 0, txBytes: 0)),
                     Link(ifindex: 3, name: "wg0", kind: "wireguard", arpType: 65534, counters: LinkCounters(rxBytes: 0))]
        _ = service.start(links: links, unparseable: 0, at: MeterInstant(wall: Self.origin, sinceBootNanoseconds: 1_000_000_000))
        for hour in 1...24 {
            let instant = MeterInstant(wall: Self.origin + Double(hour) * 3600,
                                       sinceBootNanoseconds: UInt64(1 + hour * 3600) * 1_000_000_000)
            _ = service.ingest(linkEvents: [], readings: [
                CounterReading(ifindex: 2, counters: LinkCounters(rxBytes: UInt64(hour * 1000), txBytes: UInt64(hour * 10))),
                CounterReading(ifindex: 3, counters: LinkCounters(rxBytes: UInt64(hour * 100))),
            ], at: instant)
        }
        self.service = service
        save()
    }

    func status() -> StatusResult {
        StatusResult(ready: service != nil, version: "test", pid: 1, startedAt: Self.origin, interval: 30, saveInterval: 300,
                     lastSampleAt: service?.summary.sampledAt?.wall, source: "netlink", interfaces: service?.summary.presentLinks,
                     store: nil, socket: "/run/test.sock", timeZone: "utc")
    }

    func metrics(_ request: MetricsRequest.Checked) -> MetricsResult {
        MetricsResult(contentType: request.format.rawValue, text: "ifmeter_up 1\n")
    }

    /// A save, written at once, noted in the store's ledger as the daemon's store thread notes it.
    func save() {
        saves += 1
        let outcome = service?.save(at: now) { [store] batch throws(StoreError) in
            let records = batch.presentRecords
            try store.writer.save(&batch.writes, recording: records)
            store.ledger.wrote(batch.writtenBatches)
        }
        precondition(outcome?.error == nil)
    }

    func saveBeforeImport() {
        guard service?.summary.hasUnsavedTraffic == true else { return }
        save()
    }

    func reload(requestedBy uid: UInt32) -> String? { reloadError }

    func forgetPending(_ name: String) -> Bool {
        forgotten.append(name)
        return service?.forget(name, at: now) ?? false
    }
}

extension RequestHandlers {
    /// The answer to `request` as the client writes it.
    func answer(_ request: some CommandRequestType, id: RequestID? = nil, from peer: Peer) -> Answer {
        answer(RequestLine(request, id: id), from: peer)
    }
}

/// Every command against a context built from values, without a socket, loop or lock.
@Suite("Request handlers", .ownThread, .timeLimit(.minutes(3)))
struct RequestHandlersTests {
    static let admin = Peer(uid: 0, isAdmin: true)
    static let user = Peer(uid: 1000, isAdmin: false)

    @Test("an interface's epoch is the meter's tracked one: boot, ifindex, generation, since and last counters")
    func epochOfTracked() throws {
        let context = try ValueContext()
        let service = try #require(context.service)
        let present = service.snapshot().interfaces.filter { $0.present != nil }
        #expect(present.count == service.meter.tracked.count && !present.isEmpty)
        for figures in present {
            let tracked = try #require(service.meter.tracked[LinkKey(ifindex: figures.present!.ifindex)])
            #expect(InterfaceResult(figures).fields.epoch == EpochResult(
                EpochFields(bootID: tracked.epoch.bootID, ifindex: tracked.ifindex, generation: tracked.epoch.generation,
                            since: tracked.epoch.since), traffic: tracked.last))
        }
    }

    /// A request for `command` with the members it needs to be valid.
    static func valid(_ command: IfMeterWire.Command) -> RequestLine {
        let id = RequestID.number(7)
        return switch command {
        case .usage: RequestLine(UsageRequest(interface: "eth0", period: .day), id: id)
        case .query: RequestLine(QueryRequest(usage: [UsageSpec(.day)]), id: id)
        case .forget: RequestLine(ForgetRequest(interface: "wg0"), id: id)
        case .alias: RequestLine(AliasRequest(interface: "wg0", alias: "Tunnel"), id: id)
        case .importHistory: RequestLine(ImportRequest(vnStatPath: "/nonexistent/vnstat.db", dryRun: false, utc: false), id: id)
        default: RequestLine(id: id, cmd: command.rawValue)
        }
    }

    /// What an answer's line says, wherever it is made; `update` applied to the context's service.
    static func line(_ answer: Answer, _ handlers: RequestHandlers, _ context: ValueContext, id: RequestID? = .number(7)) throws -> ResponseLine {
        let bytes: [UInt8]
        switch answer {
        case .line(let line), .watch(let line): bytes = line
        case .afterSample: bytes = handlers.sampled(id: id)
        case .offLoop(let build): bytes = build()
        case .fromStore(let job):
            let answer = job(context.store)
            if let update = answer.update, context.service != nil { update(&context.service!, context.now) }
            bytes = answer.line
        case .streamedFromStore(let job):
            var parts: [UInt8] = []
            bytes = job(context.store) { parts += $0 }.whole(after: parts)
        }
        #expect(bytes.last == UInt8(ascii: "\n"))
        return try ResponseLine(Array(bytes.dropLast()))
    }

    @Test("each command is answered where its policy says: off the loop exactly when the table says so",
          arguments: IfMeterWire.Command.allCases)
    func answeredWherePolicySays(command: IfMeterWire.Command) throws {
        let context = try ValueContext()
        let handlers = RequestHandlers(context: context)
        let answer = handlers.answer(Self.valid(command), from: Self.admin)
        switch answer {
        case .fromStore, .streamedFromStore, .offLoop: #expect(command.policy.offLoop, "\(command) is answered off the loop")
        case .line, .afterSample, .watch: #expect(!command.policy.offLoop, "\(command) is answered on the loop")
        }
        let response = try Self.line(answer, handlers, context)
        #expect(response.id == .number(7))
        // The import names a file that is not there; every other valid request succeeds.
        #expect(response.ok == (command != .importHistory), "\(command): \(String(describing: response.error))")
    }

    @Test("while loading only status and metrics are answered; the rest is not_ready", arguments: IfMeterWire.Command.allCases)
    func notReady(command: IfMeterWire.Command) throws {
        let context = try ValueContext(running: false)
        let handlers = RequestHandlers(context: context)
        let response = try Self.line(handlers.answer(Self.valid(command), from: Self.admin), handlers, context)
        if command == .status || command == .metrics {
            #expect(response.ok)
        } else {
            #expect(response.error?.code == .notReady)
        }
    }

    @Test("admin commands are refused to others before their members are looked at")
    func adminFirst() throws {
        let context = try ValueContext()
        let handlers = RequestHandlers(context: context)
        var request = ImportRequest()
        request.source = "nonsense"
        let refused = try Self.line(handlers.answer(request, id: .string("x"), from: Self.user), handlers, context, id: .string("x"))
        #expect(refused.error?.code == .permissionDenied && refused.id == .string("x"))
        #expect(refused.error?.message.contains("you are uid 1000") == true)
        let checked = try Self.line(handlers.answer(request, id: .string("x"), from: Self.admin), handlers, context, id: .string("x"))
        #expect(checked.error == WireError(.badRequest, "unknown source \"nonsense\"; known: vnstat"))
        #expect(context.forgotten.isEmpty)
    }

    @Test("the envelope is checked before the command, the command before its members", arguments: [
        (#"{"cmd":"usage"}"#, ErrorCode.badRequest, "field \"v\" is missing (this ifmeterd speaks protocol 1)"),
        (#"{"v":2,"cmd":"nope"}"#, .unsupportedVersion, "protocol version 2 is not supported; this ifmeterd speaks 1"),
        (#"{"v":1}"#, .badRequest, "field \"cmd\" is missing"),
        (#"{"v":1,"cmd":"nope"}"#, .unknownCommand,
         "unknown command \"nope\"; known: status, interfaces, usage, events, sample, watch, query, plans, percentile, metrics, reload, forget, import, alias"),
        (#"{"v":1,"cmd":"usage","interface":"eth0"}"#, .badRequest, "field \"period\" is missing"),
        (#"{"v":1,"cmd":"usage","interface":"eth0","class":"wifi","period":"day"}"#, .badRequest,
         "give exactly one of \"interface\" and \"class\""),
        (#"{"v":1,"cmd":"usage","class":"phone","period":"day"}"#, .badRequest,
         "unknown class \"phone\"; known: loopback, wifi, cellular, tunnel, virtual, ethernet, other"),
        (#"{"v":1,"cmd":"usage","interface":"eth0","period":"week"}"#, .badRequest,
         "unknown period \"week\"; known: 5min, hour, day, month, year, total"),
        (#"{"v":1,"cmd":"query","include":["everything"]}"#, .badRequest,
         "unknown part \"everything\" in \"include\"; known: status, interfaces, plans, networks"),
        (#"{"v":1,"cmd":"query","select":"owners","network":"unknown"}"#, .badRequest, "\"network\" goes with \"select\": \"apps\" alone"),
        (#"{"v":1,"cmd":"query","select":"apps","network":"Pixel"}"#, .badRequest, "network: expected a network's UUID or unknown"),
        (#"{"v":1,"cmd":"query","select":"some"}"#, .badRequest, "unknown selection \"some\"; known: shown, all, every, owners, networks, apps, scopes"),
        (#"{"v":1,"cmd":"query","usage":[{"period":"day","last":1,"top":1}]}"#, .badRequest, "give at most one of \"last\" and \"top\""),
        (#"{"v":1,"cmd":"events","kind":"boom"}"#, .badRequest, "unknown event kind \"boom\"; known: "
            + CounterEvent.Kind.allCases.map(\.rawValue).joined(separator: ", ")),
        (#"{"v":1,"cmd":"metrics","format":"json"}"#, .badRequest, "unknown format \"json\"; known: prometheus, openmetrics"),
        (#"{"v":1,"cmd":"import","source":"vnstat","path":"vnstat.db"}"#, .badRequest, "field \"path\" must be absolute, got \"vnstat.db\""),
        (#"{"v":1,"cmd":"forget","interface":""}"#, .badRequest, "field \"interface\" is missing"),
    ])
    func refusals(line: String, code: ErrorCode, message: String) throws {
        let context = try ValueContext()
        let handlers = RequestHandlers(context: context)
        let request = try RequestLine.parse(Array(line.utf8)).get()
        let response = try Self.line(handlers.answer(request, from: Self.admin), handlers, context, id: nil)
        #expect(response.error == WireError(code, message))
    }

    @Test("usage and query read the store: the day's traffic, a tunnel labelled, an unknown name refused")
    func fromTheStore() throws {
        let context = try ValueContext()
        let handlers = RequestHandlers(context: context)
        let usage = UsageRequest(interface: "eth0", period: .total)
        let table = try Self.line(handlers.answer(usage, id: .number(1), from: Self.user), handlers, context, id: .number(1))
            .result(as: UsageResult.self)
        #expect(table.rows.map(\.rxBytes) == [24_000] && table.rows.map(\.txBytes) == [240])
        var query = QueryRequest(interfaces: ["wg0", "eth0"], usage: [UsageSpec(.total)], include: [.interfaces])
        let answer = try Self.line(handlers.answer(query, from: Self.user), handlers, context, id: nil).result(as: QueryResult.self)
        #expect(answer.subjects.map(\.name) == ["wg0", "eth0"])
        #expect(answer.usage.map { $0.rows.first?.rxBytes } == [2400, 24_000])
        #expect(answer.usage[0].rows[0].labels.contains(EstimateLabel.tunnelDoubleCounted.rawValue))
        #expect(answer.interfaces?.map(\.name) == ["wg0", "eth0"])
        query.interfaces = ["eth0", "nope"]
        let unknown = try Self.line(handlers.answer(query, from: Self.user), handlers, context, id: nil)
        #expect(unknown.error == WireError(.unknownInterface, "no interface named \"nope\" has ever been seen"))
    }

    struct DiskFull: Error {}

    /// eth0 reads 99,000 rx at `now` + 60: 75,000 counted since the last save.
    static func countMore(_ context: ValueContext) {
        _ = context.service!.ingest(
            linkEvents: [], readings: [CounterReading(ifindex: 2, counters: LinkCounters(rxBytes: 99_000, txBytes: 240))],
            at: MeterInstant(wall: context.now + 60, sinceBootNanoseconds: UInt64(2 + 25 * 3600) * 1_000_000_000))
    }

    /// eth0's total and its newest day's rx bytes as `handlers` answer `peer`, each job run after `between`.
    static func eth0(_ handlers: RequestHandlers, _ context: ValueContext, as peer: Peer,
                     between: () -> Void = {}) throws -> (total: UInt64?, day: UInt64?) {
        let total = handlers.answer(UsageRequest(interface: "eth0", period: .total), from: peer)
        let query = QueryRequest(interfaces: ["eth0"], usage: [UsageSpec(.day, last: 1)])
        let day = handlers.answer(query, from: peer)
        between()
        return (try line(total, handlers, context, id: nil).result(as: UsageResult.self).rows.first?.rxBytes,
                try line(day, handlers, context, id: nil).result(as: QueryResult.self).usage.first?.rows.first?.rxBytes)
    }

    @Test("every peer's answer includes what was counted since the last save, and no question saves")
    func unsaved() throws {
        let context = try ValueContext()
        let handlers = RequestHandlers(context: context)
        let saved = try #require(try Self.eth0(handlers, context, as: Self.user).day)
        Self.countMore(context)
        let saves = context.saves
        #expect(try Self.eth0(handlers, context, as: Self.user) == (99_000, saved + 75_000))
        #expect(try Self.eth0(handlers, context, as: Self.admin) == (99_000, saved + 75_000))
        #expect(context.saves == saves, "nobody's question made a save")
        // Today's projection from the rows read (no `top`) and from the store's own read (`top`)
        // agree, unsaved traffic in both.
        func projection(top: Int?) throws -> ProjectionResult? {
            let query = QueryRequest(interfaces: ["eth0"], usage: [UsageSpec(.day, projection: true, top: top)])
            return try Self.line(handlers.answer(query, from: Self.user), handlers, context, id: nil)
                .result(as: QueryResult.self).usage.first?.projection
        }
        let read = try #require(try projection(top: nil))
        #expect(read == (try projection(top: 1)))
        #expect(read.rxBytes >= saved + 75_000)
        let labels = try Self.line(handlers.answer(UsageRequest(interface: "eth0", period: .total), from: Self.user),
                                   handlers, context, id: nil).result(as: UsageResult.self).rows[0].labels
        #expect(!labels.contains("unsaved-not-included"))
    }

    @Test("a save that commits between the question and its answer is counted once: begun before, after, or failing first")
    func savesBetween() throws {
        // A save begun and written after the question was asked.
        let context = try ValueContext()
        let handlers = RequestHandlers(context: context)
        let saved = try #require(try Self.eth0(handlers, context, as: Self.user).day)
        Self.countMore(context)
        #expect(try Self.eth0(handlers, context, as: Self.user) { context.save() } == (99_000, saved + 75_000))
        // A save begun before the question and written after it.
        let more = MeterInstant(wall: context.now + 120, sinceBootNanoseconds: UInt64(62 + 25 * 3600) * 1_000_000_000)
        _ = context.service!.ingest(linkEvents: [], readings: [CounterReading(ifindex: 2, counters: LinkCounters(rxBytes: 100_000, txBytes: 240))],
                                    at: more)
        var batch = context.service!.beginSave(at: context.now + 120)
        #expect(try Self.eth0(handlers, context, as: Self.user) {
            try! context.store.writer.save(&batch.writes, recording: batch.presentRecords)
            context.store.ledger.wrote(batch.writtenBatches)
        } == (100_000, saved + 76_000))
        _ = context.service!.finishSave(batch, error: nil)
        // A save that fails: its writes are carried, and a later save writes them while a
        // question asked before it waits.
        let later = MeterInstant(wall: context.now + 180, sinceBootNanoseconds: UInt64(122 + 25 * 3600) * 1_000_000_000)
        _ = context.service!.ingest(linkEvents: [], readings: [CounterReading(ifindex: 2, counters: LinkCounters(rxBytes: 100_500, txBytes: 240))],
                                    at: later)
        let failing = context.service!.beginSave(at: context.now + 180)
        var carried: (total: UInt64?, day: UInt64?)?
        #expect(try Self.eth0(handlers, context, as: Self.user) {
            _ = context.service!.finishSave(failing, error: SaveFailure(DiskFull()))
            carried = try? Self.eth0(handlers, context, as: Self.user) { context.save() }
        } == (100_500, saved + 76_500))
        #expect(carried?.total == 100_500 && carried?.day == saved + 76_500)
        #expect(try Self.eth0(handlers, context, as: Self.user) == (100_500, saved + 76_500))
    }

    @Test("a query's offset and limit answer that window of its subjects, and say how many there are in all")
    func window() throws {
        let context = try ValueContext()
        let handlers = RequestHandlers(context: context)
        var query = QueryRequest(select: .every, usage: [UsageSpec(.total)], include: [.interfaces])
        let all = try Self.line(handlers.answer(query, from: Self.user), handlers, context, id: nil).result(as: QueryResult.self)
        #expect(all.subjectsTotal == nil && all.subjects.count == 2)
        (query.offset, query.limit) = (1, 5)
        let second = try Self.line(handlers.answer(query, from: Self.user), handlers, context, id: nil).result(as: QueryResult.self)
        #expect(second.subjects == Array(all.subjects.dropFirst()) && second.subjectsTotal == 2)
        #expect(second.usage == Array(all.usage.dropFirst()) && second.interfaces?.map(\.name) == [all.subjects[1].name ?? ""])
        query.offset = 2
        let past = try Self.line(handlers.answer(query, from: Self.user), handlers, context, id: nil).result(as: QueryResult.self)
        #expect(past.subjects.isEmpty && past.usage.isEmpty && past.subjectsTotal == 2)
        query.offset = -1
        #expect(try Self.line(handlers.answer(query, from: Self.user), handlers, context, id: nil).error?.code == .badRequest)
    }

    @Test("forget drops pending traffic at once, deletes the history in the store, and says so")
    func forget() throws {
        let context = try ValueContext()
        let handlers = RequestHandlers(context: context)
        let done = try Self.line(handlers.answer(ForgetRequest(interface: "wg0"), from: Self.admin), handlers, context, id: nil)
        #expect(try done.result(as: AdminResult.self).done == "history of wg0 deleted")
        #expect(context.forgotten == ["wg0", "scope:local/wg0", "scope:internet/wg0", "scope:unknown/wg0"], "its scopes go with it")
        #expect(try context.store.queries.total("wg0") == nil)
        let again = try Self.line(handlers.answer(ForgetRequest(interface: "never"), from: Self.admin), handlers, context, id: nil)
        #expect(again.error?.code == .unknownInterface)
    }

    @Test("reload: its error is config_error and the running configuration stays")
    func reload() throws {
        let context = try ValueContext()
        let handlers = RequestHandlers(context: context)
        let done = try Self.line(handlers.answer(ReloadRequest(), from: Self.admin), handlers, context, id: nil)
        #expect(try done.result(as: AdminResult.self).done == "configuration reloaded from /etc/ifmeter/ifmeterd.conf")
        context.reloadError = "/etc/ifmeter/ifmeterd.conf:3: unknown key \"x\""
        let failed = try Self.line(handlers.answer(ReloadRequest(), from: Self.admin), handlers, context, id: nil)
        #expect(failed.error == WireError(.configError, "/etc/ifmeter/ifmeterd.conf:3: unknown key \"x\"; the running configuration stays"))
    }

    @Test("what a handler throws becomes one wire error: its own, the store's, or internal")
    func errorMapping() {
        let own = WireError(answering: WireError(.badRequest, "b"), id: .number(1))
        #expect(own == WireError(.badRequest, "b", id: .number(1)))
        let store = WireError(answering: StoreError(kind: .full, path: "/db", operation: "save to", message: "disk full"), id: nil)
        #expect(store == WireError(.storeError, "cannot save to database /db: disk full"))
        struct Timer: Error, CustomStringConvertible { var description: String { "sd_event_add_time failed" } }
        #expect(WireError(answering: Timer(), id: nil) == WireError(.internalError, "sd_event_add_time failed"))
    }
}
