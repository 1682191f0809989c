import IfMeterCore
import IfMeterHistory
import IfMeterRequests
import IfMeterService
import IfMeterTestSupport
import IfMeterWire
import Testing

/// `select: "scopes"` (docs/PROTOCOL.md, docs/SCOPES.md): every scope subject the service has
/// figures of, or with `interfaces` those of the names given, where a name without any is no
/// error (it is not split).
@Suite("query: select scopes", .ownThread, .timeLimit(.minutes(3)))
struct ScopeQueryTests {
    static let origin = ValueContext.origin

    /// eth0 and wg0 counted; eth0's local and internet scopes known from history (as the
    /// service keeps names it counted), wg0 never split.
    static func running() throws -> ValueContext {
        let context = try ValueContext(running: false)
        let scopes = [ScopeKind.subject("eth0", scope: .local), ScopeKind.subject("eth0", scope: .internet)]
        let history = ServiceHistory(
            knownNames: Dictionary(uniqueKeysWithValues: scopes.map { ($0, origin - 60) }),
            totals: Dictionary(uniqueKeysWithValues: scopes.map { ($0, BucketTally(traffic: Traffic(rxBytes: 10, txBytes: 1))) }),
            interfaces: scopes.map { StoredInterface(name: $0, interfaceClass: "ethernet", kind: "", firstSeen: origin - 60, lastSeen: origin - 1) })
        var service = MeterService(bootID: "b", configuration: ServiceConfiguration(store: context.store.configuration),
                                   history: history, at: origin)
        let links = [
            Link(ifindex: 2, name: "eth0", arpType: 1, operState: .up, counters: LinkCounters(rxBytes: 0, txBytes: 0)),
            Link(ifindex: 3, name: "wg0", kind: "wireguard", arpType: 65534, operState: .up, counters: LinkCounters(rxBytes: 0, txBytes: 0)),
        ]
        _ = service.start(links: links, unparseable: 0, at: MeterInstant(wall: origin, sinceBootNanoseconds: 1_000_000_000))
        context.service = service
        return context
    }

    static func query(_ context: ValueContext, _ request: QueryRequest) throws -> QueryResult {
        try RequestHandlers(context: context).storeJob(request)(context.store)
    }

    @Test("every scope subject, by its subject then local, internet, unknown; with names, theirs; an unsplit name is no error")
    func selection() throws {
        let context = try Self.running()
        let every = try Self.query(context, QueryRequest(select: .scopes, usage: [UsageSpec(.total)]))
        #expect(every.subjects.map(\.name) == ["scope:local/eth0", "scope:internet/eth0"])
        #expect(every.usage.count == 2)
        let named = try Self.query(context, QueryRequest(interfaces: ["wg0", "eth0", "nothing0"], select: .scopes, usage: [UsageSpec(.total)]))
        #expect(named.subjects.map(\.name) == ["scope:local/eth0", "scope:internet/eth0"])
        let none = try Self.query(context, QueryRequest(interfaces: ["wg0"], select: .scopes, usage: [UsageSpec(.day)]))
        #expect(none.subjects.isEmpty && none.usage.isEmpty)
        // Plain names are checked as ever: one ifmeter does not know is an error.
        #expect(throws: WireError.self) { try Self.query(context, QueryRequest(interfaces: ["nothing0"], usage: [UsageSpec(.day)])) }
    }

    @Test("scopes with names takes no sum")
    func noSum() {
        var request = QueryRequest(interfaces: ["eth0"], select: .scopes, usage: [UsageSpec(.day)])
        request.sum = true
        #expect(throws: WireError.self) { try request.checked() }
        request.sum = nil
        #expect((try? request.checked())?.subjects == .scopesOf(["eth0"]))
    }
}
