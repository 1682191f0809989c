import IfMeterCore
import IfMeterHistory
import IfMeterService
import IfMeterStore
import IfMeterWire

/// The commands answered from the database. Each is checked here, against what the service
/// knows now, and becomes a job for the store's thread; the peer's next requests wait for its
/// answer, everyone else is served meanwhile. What was counted and not saved yet is taken
/// from the service now and added there (``UnsavedTraffic``): every answer is current, and no
/// peer makes the daemon save.
extension RequestHandlers {
    /// `usage`: one subject, one table.
    func usage(_ request: UsageRequest.Checked) throws -> StoreJob<UsageResult> {
        let service = try running()
        let figures: [InterfaceFigures]
        var members: [String: [String]] = [:]
        switch request.subject {
        case .interface(let name): figures = service.figures(named: [name])
        case .interfaceClass(let interfaceClass):
            figures = []
            members[interfaceClass.rawValue] = service.snapshot().interfaces
                .filter { $0.interfaceClass == interfaceClass.rawValue }.map(\.name)
        case .merged(let names): figures = service.figures(named: names)
        }
        let context = usageContext(service, figures: figures, classMembers: members)
        return { store in
            if case .interface(let name) = request.subject,
               let unknown = try UsageAnswers.unknown([name], store: store, context: context).first {
                throw Self.unknownInterface(unknown)
            }
            return try UsageAnswers.tables([request.subject], [request.table], store: store, context: context,
                                           footnotes: true)[0]
        }
    }

    /// Whether a query chooses applications (their own footnote: counted per cgroup).
    static func isApps(_ subjects: QueryRequest.Checked.Subjects) -> Bool {
        switch subjects {
        case .selection(.apps), .appsOnNetwork: true
        case .names, .merged, .interfaceClass, .selection, .scopesOf: false
        }
    }

    /// Applications as nethogs lists them: busiest first (all-time rx + tx), then by name, so
    /// `limit` keeps the busiest.
    static func busiestFirst(_ figures: [InterfaceFigures]) -> [InterfaceFigures] {
        func bytes(_ figures: InterfaceFigures) -> UInt64 { figures.total.traffic.rxBytes &+ figures.total.traffic.txBytes }
        return figures.sorted { (bytes($0), $1.name) > (bytes($1), $0.name) }
    }

    /// `query`: many subjects' tables in one answer, one store query per table, with their
    /// status and interface entries when asked: a whole view in one round trip.
    func query(_ request: QueryRequest.Checked) throws -> QueryJob {
        let service = try running()
        var chosen: [InterfaceFigures]
        var subjects: [UsageSubject]
        var names: [String]?
        var members: [String: [String]] = [:]
        switch request.subjects {
        case .names(let asked):
            chosen = service.figures(named: asked)
            subjects = asked.map { .interface($0) }
            names = asked
        case .merged(let asked):
            chosen = service.figures(named: asked)
            subjects = [.merged(asked)]
            names = asked
        case .interfaceClass(let interfaceClass, let sum):
            chosen = service.snapshot().interfaces.filter { $0.interfaceClass == interfaceClass.rawValue }
            subjects = sum ? [.interfaceClass(interfaceClass)] : chosen.map { .interface($0.name) }
            if sum { members[interfaceClass.rawValue] = chosen.map(\.name) }
        case .selection(.networks):
            chosen = service.networkFigures().map(\.asInterfaceFigures)
            subjects = chosen.map { .interface($0.name) }
        case .selection(.apps):
            chosen = Self.busiestFirst(service.appFigures())
            subjects = chosen.map { .interface($0.name) }
        case .selection(.scopes):
            chosen = ScopeSubjects.figures(service)
            subjects = chosen.map { .interface($0.name) }
        case .scopesOf(let names):
            chosen = ScopeSubjects.figures(service, of: names)
            subjects = chosen.map { .interface($0.name) }
        case .appsOnNetwork(let network):
            chosen = Self.busiestFirst(service.appFigures(onNetwork: NetworkSubject.prefix + network))
            subjects = chosen.map { .interface($0.name) }
        case .selection(let selection):
            chosen = selection.pick(service.snapshot().interfaces)
            subjects = chosen.map { .interface($0.name) }
        }
        let total = subjects.count
        if let window = request.window {
            subjects = window.apply(subjects)
            if case .merged = request.subjects {
                // One subject: its members are all answered, or none.
                if subjects.isEmpty { (chosen, names) = ([], []) }
            } else {
                chosen = window.apply(chosen)
                names = names.map(window.apply)
            }
        }
        let usageContext = usageContext(service, figures: chosen, classMembers: members)
        let classes = Dictionary(chosen.map { ($0.name, $0.interfaceClass) }) { first, _ in first }
        let aliases = Dictionary(chosen.compactMap { figures in figures.alias.map { (figures.name, $0) } }) { first, _ in first }
        var answered = QueryResult(
            status: request.parts.contains(.status) ? context.status() : nil,
            subjects: subjects.map { subject in
                switch subject {
                case .interface(let name): QuerySubject(name: name, class: classes[name] ?? "unknown", alias: aliases[name])
                case .interfaceClass(let interfaceClass): QuerySubject(name: nil, class: interfaceClass.rawValue)
                case .merged(let members): QuerySubject(merging: members, classes: members.map { classes[$0] ?? "unknown" },
                                                          aliases: members.map { aliases[$0] })
                }
            },
            interfaces: request.parts.contains(.interfaces) ? chosen.map(InterfaceResult.init) : nil,
            usage: [], footnote: Self.isApps(request.subjects) ? EstimateLabel.appsFootnote : EstimateLabel.footnote,
            plans: request.parts.contains(.plans) ? Self.plans(of: service, at: context.now) : nil,
            networks: request.parts.contains(.networks) ? Self.networks(of: service, subjects: chosen.map(\.name)) : nil)
        if request.window != nil { answered.subjectsTotal = total }
        return QueryJob(head: answered, subjects: subjects, tables: request.tables, asked: names, context: usageContext)
    }

    func events(_ request: EventsRequest) throws -> StoreJob<EventsResult> {
        let kind = try request.checkedKind()
        let (from, to, interface) = (request.from?.seconds, request.to?.seconds, request.interface)
        let limit = request.limit ?? EventsRequest.defaultLimit
        let unsaved = try running().unsaved(of: [])
        return { store in
            let saved = try store.queries.events(from: from, to: to, kind: kind, interface: interface, limit: limit)
            guard saved.count < limit else { return EventsResult(events: saved) }
            let (after, before) = (from ?? -.greatestFiniteMagnitude, to ?? .greatestFiniteMagnitude)
            let more = unsaved.unwritten(in: store.ledger).events { event in
                after <= event.at && event.at < before && (kind.map { event.kind == $0 } ?? true)
                    && (interface.map { event.interface == $0 } ?? true)
            }
            return EventsResult(events: Array(saved + more.prefix(limit - saved.count)))
        }
    }

    /// `import`: another meter's history into the store, then the service's saved figures
    /// read again so every answer includes it.
    func importHistory(_ request: ImportRequest.Checked, _ id: RequestID?) throws -> Answer {
        _ = try running()
        context.saveBeforeImport()
        return .fromStore { store in
            var saved: SavedHistory?
            let line = Self.line(id) {
                let reports = try store.imports.vnStat(try VnStatDatabase(path: request.path, utc: request.utc),
                                                     dryRun: request.dryRun)
                if !request.dryRun { saved = SavedHistory(totals: try store.queries.totals().mapValues(\.tally), interfaces: try store.queries.interfaces()) }
                return LineEncoder.success(ImportResult(
                    source: "vnstat", path: request.path, dryRun: request.dryRun, interfaces: reports.map { report in
                        ImportResult.Interface(
                            name: report.name,
                            buckets: Dictionary(uniqueKeysWithValues: report.buckets.map { ($0.key.rawValue, $0.value) }),
                            alreadyImported: report.alreadyImported, overlapSkipped: report.overlapSkipped,
                            totalRxBytes: report.total.rxBytes, totalTxBytes: report.total.txBytes,
                            overlapFrom: report.overlap?.from, overlapTo: report.overlap?.to)
                    }), id: id)
            }
            // Every save handed over before the import is in `saved`; later ones add to it when they finish.
            guard let saved else { return StoreAnswer(line: line) }
            return StoreAnswer(line: line, update: { service, _ in
                service.replaceSaved(totals: saved.totals, interfaces: saved.interfaces)
            })
        }
    }

    /// `forget`: the name's pending traffic is dropped at once, so no later save writes it; its
    /// history goes from the store; and what saves already handed over add back is dropped
    /// again when the deletion is done. Its scopes (`scope:S/NAME`, docs/SCOPES.md) go with it:
    /// they are its bytes, split.
    func forget(_ name: String, _ id: RequestID?) throws -> Answer {
        _ = try running()
        let scopes = ScopeKind.parse(name) == nil ? TrafficScope.allCases.map { ScopeKind.subject(name, scope: $0) } : []
        let known = context.forgetPending(name)
        for scope in scopes { _ = context.forgetPending(scope) }
        return .fromStore { store in
            let line = Self.line(id) {
                guard try store.retention.forget(name) || known else { throw Self.unknownInterface(name) }
                for scope in scopes { _ = try store.retention.forget(scope) }
                return LineEncoder.success(AdminResult(done: "history of \(name) deleted"), id: id)
            }
            return StoreAnswer(line: line, update: { service, now in
                _ = service.forget(name, at: now)
                for scope in scopes { _ = service.forget(scope, at: now) }
            })
        }
    }

    /// What usage tables about `figures` (and the classes whose `classMembers` they sum) take
    /// from the service, as of now.
    func usageContext(_ service: MeterService, figures: [InterfaceFigures], classMembers: [String: [String]] = [:]) -> UsageContext {
        let names = figures.map(\.name) + classMembers.values.joined()
        // A view of many names shares the service's tables; of a few, copies their entries.
        return UsageContext(tunnels: Set(figures.filter(\.isTunnel).map(\.name)), lostEvents: service.summary.lostEvents,
                            known: Set(figures.map(\.name)), now: context.now,
                            unsaved: service.unsaved(of: names.count > 64 ? nil : names), classMembers: classMembers)
    }
}

/// Every name's saved total and record, read again after an import.
struct SavedHistory: Sendable {
    var totals: [String: BucketTally]
    var interfaces: [StoredInterface]
}
