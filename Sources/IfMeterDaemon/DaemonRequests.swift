import IfMeterCore
import IfMeterKernel
import IfMeterStore
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// The socket API (docs/PROTOCOL.md): one handler per command, answered on the loop.
extension Daemon {
    func handle(_ request: Request, from client: Server.Client) {
        let id = request.id
        guard let version = request.v else {
            return fail(.badRequest, "field \"v\" is missing (this ifmeterd speaks protocol \(protocolVersion))", id, client)
        }
        guard version == protocolVersion else {
            return fail(.unsupportedVersion, "protocol version \(version) is not supported; this ifmeterd speaks \(protocolVersion)", id, client)
        }
        guard let name = request.cmd else { return fail(.badRequest, "field \"cmd\" is missing", id, client) }
        guard let command = Command(rawValue: name) else {
            let known = Command.allCases.map(\.rawValue).joined(separator: ", ")
            return fail(.unknownCommand, "unknown command \"\(name)\"; known: \(known)", id, client)
        }
        guard ready || command == .status else {
            return fail(.notReady, "ifmeterd is starting (loading its database and taking the first sample); ask again shortly", id, client)
        }
        do {
            if command.isAdmin { try requireAdmin(client) }
            switch command {
            case .status: reply(status(), id, client)
            case .interfaces: reply(interfaces(), id, client)
            case .usage: reply(try usage(request), id, client)
            case .events: reply(try events(request), id, client)
            case .sample: try requestSample(id, client)
            case .watch:
                client.watchID = .some(id)
                server.send(LineEncoder.encode(Response.success(rates(at: lastSample?.wall ?? 0), id: id, stream: "rates")), to: client)
            case .reload:
                if let error = reload(trigger: "reload requested by uid \(client.uid)") {
                    throw WireError(.configError, "\(error); the running configuration stays")
                }
                reply(AdminResult(done: "configuration reloaded from \(paths.config)"), id, client)
            case .forget:
                let name = try required(request.interface, "interface")
                guard let store else { throw WireError(.notReady, "no database yet") }
                let known = sampler?.links.values.contains { $0.name == name } ?? false
                guard try store.forget(name) || known else {
                    throw WireError(.unknownInterface, "no interface named \"\(name)\" has ever been seen")
                }
                pending.forget(name)
                savedTotals[name] = nil
                reply(AdminResult(done: "history of \(name) deleted"), id, client)
            }
        } catch let error as WireError {
            fail(error.code, error.message, id, client)
        } catch let error as StoreError {
            fail(.storeError, error.description, id, client)
        } catch {
            fail(.storeError, "\(error)", id, client)
        }
    }

    private func reply<T: Encodable & Sendable>(_ result: T, _ id: RequestID?, _ client: Server.Client) {
        server.send(LineEncoder.encode(Response.success(result, id: id)), to: client)
    }

    private func fail(_ code: ErrorCode, _ message: String, _ id: RequestID?, _ client: Server.Client) {
        server.send(LineEncoder.failure(WireError(code, message, id: id)), to: client)
    }

    private func required(_ value: String?, _ field: String) throws(WireError) -> String {
        guard let value, !value.isEmpty else { throw WireError(.badRequest, "field \"\(field)\" is missing") }
        return value
    }

    /// Root, the daemon's own user, and members of `admin_group` may change state.
    func isAdmin(uid: uid_t, groups: [gid_t]) -> Bool {
        uid == 0 || uid == getuid() || config.adminGroup.map(groups.contains) == true
    }

    private func requireAdmin(_ client: Server.Client) throws(WireError) {
        guard isAdmin(uid: client.uid, groups: client.groups) else {
            throw WireError(.permissionDenied, "only root, uid \(getuid()) or the admin group may do this (you are uid \(client.uid))")
        }
    }

    // MARK: Commands

    /// Most samples one non-admin peer can cause: one a second, whoever asks how often.
    static let requestedSampleSpacing: UInt64 = 1_000_000

    /// `sample` is answered after a fresh sample. Requests arriving before it is taken share
    /// it (one dump, however many ask); for non-admins it is taken at most once a second, so a
    /// pipelined flood costs one dump a second and the periodic schedule is untouched.
    private func requestSample(_ id: RequestID?, _ client: Server.Client) throws {
        sampleWaiters.append((client, id))
        server.holdRequests(of: client)
        let now = loop.now
        let earliest = client.isAdmin ? now : (lastRequestedSample.map { $0 + Self.requestedSampleSpacing } ?? now)
        let when = max(now, earliest)
        if let requestedSample {
            if client.isAdmin { requestedSample.reschedule(at: now) }
            return
        }
        requestedSample = try loop.after(when - now) { [unowned self] in self.answerSampleWaiters() }
    }

    private func answerSampleWaiters() {
        requestedSample = nil
        lastRequestedSample = loop.now
        sample()
        let waiters = sampleWaiters
        sampleWaiters = []
        let result = SampleResult(sampledAt: lastSample?.wall ?? 0, interfaces: sampler?.links.count ?? 0)
        for (client, id) in waiters where client.isOpen {
            reply(result, id, client)
            server.answered(client)
        }
    }

    func status() -> StatusResult {
        StatusResult(
            ready: ready, version: IfMeterVersion.string, pid: getpid(), startedAt: startedAt,
            interval: interval, saveInterval: config.saveInterval,
            lastSampleAt: ready ? lastSample?.wall : nil, source: ready ? "netlink" : nil,
            interfaces: ready ? sampler?.links.count : nil,
            store: ready ? StoreHealth(path: paths.database, healthy: saveError == nil,
                                       lastSaveAt: lastSaveAt, error: saveError?.description) : nil,
            socket: paths.socket, timeZone: ready ? (config.timeZone == .utc ? "utc" : "local") : nil,
            linkEvents: sampler.map { LinkEventsHealth(origin: $0.events.origin, receiveBuffer: $0.events.receiveBufferSize) })
    }

    func interfaces() -> InterfacesResult {
        guard let sampler else { return InterfacesResult(interfaces: [], footnote: EstimateLabel.footnote) }
        let unsaved = pending.unsavedTotals
        let entries = sampler.links.values.sorted { $0.ifindex < $1.ifindex }.map { link -> InterfaceResult in
            let verdict = classification(of: link)
            let tally = total(of: link.name, unsaved: unsaved)
            let tracked = sampler.meter.tracked[link.ifindex]
            let rate = sampler.meter.rates[link.ifindex].flatMap(RateResult.init(measured:))
            let since = sampler.meter.firstSeen[link.name]
            let lost = lostEvents.count(from: since ?? 0, to: .infinity)
            let labels = tally.labels(tunnel: verdict.isTunnel, eventsLost: lost)
            return InterfaceResult(
                name: link.name, ifindex: link.ifindex, class: verdict.label, classReason: verdict.reason,
                kind: link.kind, operstate: link.operState.rawValue,
                rxBytes: tally.traffic.rxBytes, txBytes: tally.traffic.txBytes,
                rxPackets: tally.traffic.rxPackets, txPackets: tally.traffic.txPackets,
                epoch: tracked.map { EpochResult(
                    bootID: $0.epoch.bootID, ifindex: $0.ifindex, generation: $0.epoch.generation,
                    since: $0.epoch.since, rxBytes: $0.last.rxBytes, txBytes: $0.last.txBytes,
                    rxPackets: $0.last.rxPackets, txPackets: $0.last.txPackets) },
                rate: rate,
                continuity: Continuity(
                    since: since, resets: tally.resets, gaps: tally.gaps, implausibleDropped: tally.implausible,
                    eventsLost: lost),
                labels: labels.map(\.rawValue))
        }
        return InterfacesResult(interfaces: entries + absentInterfaces(present: Set(sampler.links.values.map(\.name))),
                                footnote: EstimateLabel.footnote)
    }

    /// A name's total since its history began: saved, plus counted and not yet saved.
    private func total(of name: String, unsaved: [String: BucketTally]) -> BucketTally {
        var tally = savedTotals[name] ?? BucketTally()
        if let more = unsaved[name] { tally += more }
        return tally
    }

    /// Names with history that are not present now, by name: their totals, but no rate or epoch.
    private func absentInterfaces(present: Set<String>) -> [InterfaceResult] {
        let stored = (try? store?.interfaces()) ?? []
        let unsaved = pending.unsavedTotals
        return stored.filter { !present.contains($0.name) }.map { record in
            let tally = total(of: record.name, unsaved: unsaved)
            let interfaceClass = record.interfaceClass.flatMap(InterfaceClass.init(rawValue:))
            let lost = lostEvents.count(from: record.firstSeen, to: .infinity)
            return InterfaceResult(
                name: record.name, ifindex: nil, class: record.interfaceClass ?? "unknown",
                classReason: "last classified when present", kind: record.kind, operstate: "absent",
                rxBytes: tally.traffic.rxBytes, txBytes: tally.traffic.txBytes,
                rxPackets: tally.traffic.rxPackets, txPackets: tally.traffic.txPackets,
                epoch: nil, rate: nil,
                continuity: Continuity(since: record.firstSeen, resets: tally.resets, gaps: tally.gaps,
                                       implausibleDropped: tally.implausible, eventsLost: lost),
                labels: tally.labels(tunnel: interfaceClass == .tunnel, eventsLost: lost).map(\.rawValue),
                lastSeen: record.lastSeen)
        }
    }

    func usage(_ request: Request) throws -> UsageResult {
        guard let store else { throw WireError(.notReady, "no database yet") }
        let subject: UsageSubject
        switch (request.interface, request.class) {
        case (let name?, nil):
            guard try isKnown(name) else {
                throw WireError(.unknownInterface, "no interface named \"\(name)\" has ever been seen")
            }
            subject = .interface(name)
        case (nil, let className?):
            guard let interfaceClass = InterfaceClass(rawValue: className) else {
                throw WireError(.badRequest, "unknown class \"\(className)\"; known: \(InterfaceClass.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            subject = .interfaceClass(interfaceClass)
        default:
            throw WireError(.badRequest, "give exactly one of \"interface\" and \"class\"")
        }
        let period = try required(request.period, "period")
        saveBeforeAnswering()
        let tunnel = try isTunnel(subject, store: store)
        let rows: [UsageRowResult]
        if period == "total" {
            rows = try totalRows(subject, store: store).map { labelled($0, tunnel: tunnel) }
        } else {
            guard let resolution = Resolution(rawValue: period) else {
                throw WireError(.badRequest, "unknown period \"\(period)\"; known: 5min, hour, day, month, year, total")
            }
            rows = try store.usage(subject, resolution: resolution,
                                   from: request.from?.floorSeconds, to: request.to?.ceilingSeconds)
                .map { labelled($0, tunnel: tunnel) }
        }
        var projection: ProjectionResult?
        if request.projection == true, case .interface(let name) = subject,
           let resolution = Resolution(rawValue: period), resolution == .day || resolution == .month {
            let projected = try store.projection(name, resolution: resolution, now: Int64(SystemClock.now().wall))
            projection = ProjectionResult(
                start: Double(projected.start), end: Double(projected.end),
                elapsedFraction: projected.elapsedFraction, rxBytes: projected.projected.rxBytes,
                txBytes: projected.projected.txBytes, labels: projected.labels.map(\.rawValue))
        }
        return UsageResult(
            interface: request.interface, class: request.class, period: period, rows: rows,
            projection: projection, footnote: EstimateLabel.footnote)
    }

    /// Answers come from the database, so traffic counted but not yet saved is saved first.
    /// Only then: a client asking for a thousand interfaces' history costs one save, not a
    /// thousand (each rewrites every interface's epoch).
    private func saveBeforeAnswering() {
        if pending.hasUnsavedTraffic { save() }
    }

    private func isKnown(_ name: String) throws -> Bool {
        if sampler?.meter.firstSeen[name] != nil { return true }
        return try store?.total(name) != nil
    }

    /// Whether the subject's figures are tunnel traffic, counted again on the link beneath: a
    /// tunnel interface (as classified now, or when last present), or the tunnel class.
    private func isTunnel(_ subject: UsageSubject, store: Store) throws -> Bool {
        switch subject {
        case .interfaceClass(let interfaceClass): return interfaceClass == .tunnel
        case .interface(let name):
            if let link = sampler?.links.values.first(where: { $0.name == name }) {
                return classification(of: link).isTunnel
            }
            return try store.interfaces().first { $0.name == name }?.interfaceClass == InterfaceClass.tunnel.rawValue
        }
    }

    private func totalRows(_ subject: UsageSubject, store: Store) throws -> [UsageRow] {
        let members: [(tally: BucketTally, since: Double)]
        switch subject {
        case .interface(let name): members = try store.total(name).map { [$0] } ?? []
        case .interfaceClass(let interfaceClass):
            let names = Set(try store.interfaces().filter { $0.interfaceClass == interfaceClass.rawValue }.map(\.name))
            members = try store.totals().filter { names.contains($0.key) }.map(\.value)
        }
        guard let since = members.map(\.since).min() else { return [] }
        var tally = BucketTally()
        for member in members { tally += member.tally }
        return [UsageRow(start: Int64(since), end: Int64(SystemClock.now().wall.rounded(.up)), tally: tally)]
    }

    /// A row as answered; `tunnel` for a tunnel's figures, `eventsLost` the events-lost
    /// events in its period. The one place a usage row's labels are decided.
    static func row(_ row: UsageRow, tunnel: Bool = false, eventsLost: Int = 0) -> UsageRowResult {
        UsageRowResult(
            start: Double(row.start), end: Double(row.end), rxBytes: row.tally.traffic.rxBytes,
            txBytes: row.tally.traffic.txBytes, rxPackets: row.tally.traffic.rxPackets,
            txPackets: row.tally.traffic.txPackets,
            continuity: Continuity(since: nil, resets: row.tally.resets, gaps: row.tally.gaps,
                                   implausibleDropped: row.tally.implausible, eventsLost: eventsLost),
            labels: row.tally.labels(tunnel: tunnel, eventsLost: eventsLost).map(\.rawValue))
    }

    /// ``row(_:tunnel:eventsLost:)`` with the events-lost events this daemon knows of.
    private func labelled(_ row: UsageRow, tunnel: Bool) -> UsageRowResult {
        Self.row(row, tunnel: tunnel, eventsLost: lostEvents.count(from: Double(row.start), to: Double(row.end)))
    }

    func events(_ request: Request) throws -> EventsResult {
        guard let store else { throw WireError(.notReady, "no database yet") }
        let kind = try request.kind.map { name throws(WireError) -> CounterEvent.Kind in
            guard let kind = CounterEvent.Kind(rawValue: name) else {
                throw WireError(.badRequest, "unknown event kind \"\(name)\"; known: \(CounterEvent.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return kind
        }
        let limit = request.limit ?? 1000
        saveBeforeAnswering()
        let events = try store.events(from: request.from?.seconds, to: request.to?.seconds, kind: kind,
                                      interface: request.interface, limit: limit)
        return EventsResult(events: events)
    }

    // MARK: Watchers

    func rates(at time: Double) -> RatesResult {
        guard let sampler else { return RatesResult(at: time, interfaces: []) }
        let entries = sampler.links.values.sorted { $0.ifindex < $1.ifindex }.compactMap { link -> RatesResult.Entry? in
            sampler.meter.rates[link.ifindex].flatMap(RateResult.init(measured:))
                .map { RatesResult.Entry(name: link.name, rate: $0) }
        }
        return RatesResult(at: time, interfaces: entries)
    }

    func broadcastRates(at instant: MeterInstant) {
        let watchers = server.clients.values.filter { $0.watchID != nil }
        guard !watchers.isEmpty else { return }
        let result = rates(at: instant.wall)
        for client in watchers {
            server.send(LineEncoder.encode(Response.success(result, id: client.watchID!, stream: "rates")), to: client)
        }
    }

    func broadcast(_ event: CounterEvent) {
        for client in server.clients.values where client.watchID != nil {
            server.send(LineEncoder.encode(Response.success(event, id: client.watchID!, stream: "event")), to: client)
        }
    }
}

extension RateResult {
    /// The rates of one interface, once a full interval has been measured.
    init?(measured rate: Rate) {
        guard rate.isMeasured else { return nil }
        self.init(rxBytesPerSecond: rate.rxBytesPerSecond, txBytesPerSecond: rate.txBytesPerSecond,
                  smoothedRxBytesPerSecond: rate.smoothedRxBytesPerSecond,
                  smoothedTxBytesPerSecond: rate.smoothedTxBytesPerSecond)
    }
}
