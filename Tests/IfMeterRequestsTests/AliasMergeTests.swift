import IfMeterCore
import IfMeterHistory
import IfMeterRequests
import IfMeterService
import IfMeterStore
import IfMeterTestSupport
import IfMeterWire
import Testing

/// `query` with `interfaces` and `sum` (`-i a+b`), and aliases: the `alias` command, the
/// config's, and the one place a request's names are resolved (#61).
@Suite("Aliases and merged subjects", .ownThread, .timeLimit(.minutes(3)))
struct AliasMergeTests {
    typealias H = RequestHandlersTests

    static func query(_ handlers: RequestHandlers, _ context: ValueContext, _ request: QueryRequest,
                      from peer: Peer = H.user) throws -> ResponseLine {
        try H.line(handlers.answer(request, from: peer), handlers, context, id: nil)
    }

    @Test("eth0+wg0 is the sum of both, bucket by bucket and in total, labelled with the union of their labels")
    func mergedSum() throws {
        let context = try ValueContext()
        let handlers = RequestHandlers(context: context)
        let tables = [UsageSpec(.hour), UsageSpec(.total)]
        let each = try Self.query(handlers, context, QueryRequest(interfaces: ["eth0", "wg0"], usage: tables)).result(as: QueryResult.self)
        let merged = try Self.query(handlers, context, QueryRequest(interfaces: ["eth0", "wg0"], sum: true, usage: tables))
            .result(as: QueryResult.self)
        #expect(merged.subjects == [QuerySubject(name: "eth0+wg0", class: "mixed", members: ["eth0", "wg0"])])
        #expect(merged.usage.count == 2)
        let (eth0, wg0) = (each.usage[0].rows, each.usage[2].rows)
        var expected: [Double: (UInt64, UInt64)] = [:]
        for row in eth0 + wg0 { expected[row.start, default: (0, 0)].0 += row.rxBytes; expected[row.start, default: (0, 0)].1 += row.txBytes }
        #expect(!expected.isEmpty)
        #expect(merged.usage[0].rows.count == expected.count)
        for row in merged.usage[0].rows {
            #expect(expected[row.start].map { $0 == (row.rxBytes, row.txBytes) } == true, "hour \(row.start)")
            // wg0 is a tunnel: the sum carries its label, and the interfaces' four.
            #expect(row.labels.contains("tunnel-double-counted") && row.labels.contains("interface-counters"))
        }
        let total = try #require(merged.usage[1].rows.first)
        #expect(total.rxBytes == each.usage[1].rows[0].rxBytes + each.usage[3].rows[0].rxBytes)
        #expect(total.txBytes == each.usage[1].rows[0].txBytes + each.usage[3].rows[0].txBytes)
        #expect(total.rxBytes == 24 * 1000 + 24 * 100)
    }

    @Test("a merge's unknown member is named; a member given twice, or none, is refused")
    func mergedRefusals() throws {
        let context = try ValueContext()
        let handlers = RequestHandlers(context: context)
        let unknown = try Self.query(handlers, context, QueryRequest(interfaces: ["eth0", "eth9"], sum: true, usage: [UsageSpec(.day)]))
        #expect(unknown.error?.code == .unknownInterface)
        #expect(unknown.error?.message.contains("\"eth9\"") == true)
        let twice = try Self.query(handlers, context, QueryRequest(interfaces: ["eth0", "eth0"], sum: true, usage: [UsageSpec(.day)]))
        #expect(twice.error?.code == .badRequest)
        #expect(twice.error?.message.contains("twice") == true)
        let none = try Self.query(handlers, context, QueryRequest(interfaces: [], sum: true, usage: [UsageSpec(.day)]))
        #expect(none.error?.code == .badRequest)
    }

    @Test("an alias set by an admin is kept in the store, shown in answers, taken for the name, and gone once removed")
    func aliasCommand() throws {
        let context = try ValueContext()
        let handlers = RequestHandlers(context: context)
        let refused = try H.line(handlers.answer(AliasRequest(interface: "eth0", alias: "Home uplink"), from: H.user), handlers, context, id: nil)
        #expect(refused.error?.code == .permissionDenied)
        let set = try H.line(handlers.answer(AliasRequest(interface: "eth0", alias: "Home uplink"), from: H.admin), handlers, context, id: nil)
        #expect(set.ok, "\(String(describing: set.error))")
        #expect(try context.store.queries.aliases() == ["eth0": "Home uplink"])
        #expect(try context.store.loader.history().aliases == ["eth0": "Home uplink"])
        // Asked by alias: answered for the name, with its alias beside it.
        let byAlias = try Self.query(handlers, context, QueryRequest(interfaces: ["Home uplink"], usage: [UsageSpec(.total)],
                                                                     include: [.interfaces]))
            .result(as: QueryResult.self)
        #expect(byAlias.subjects == [QuerySubject(name: "eth0", class: "virtual", alias: "Home uplink")])
        #expect(byAlias.interfaces?.first?.fields.alias == "Home uplink")
        #expect(byAlias.usage.first?.rows.first?.rxBytes == 24 * 1000)
        // In a merge too, and in events and usage.
        let merged = try Self.query(handlers, context, QueryRequest(interfaces: ["Home uplink", "wg0"], sum: true, usage: [UsageSpec(.total)]))
            .result(as: QueryResult.self)
        #expect(merged.subjects.first?.name == "eth0+wg0")
        #expect(merged.subjects.first?.alias == "Home uplink+wg0")
        let usage = try H.line(handlers.answer(UsageRequest(interface: "Home uplink", period: .total), from: H.user), handlers, context, id: nil)
        #expect(try usage.result(as: UsageResult.self).interface == "eth0")
        // Another name cannot take it; an interface's name cannot be one.
        let taken = try H.line(handlers.answer(AliasRequest(interface: "wg0", alias: "Home uplink"), from: H.admin), handlers, context, id: nil)
        #expect(taken.error?.code == .badRequest)
        let aName = try H.line(handlers.answer(AliasRequest(interface: "wg0", alias: "eth0"), from: H.admin), handlers, context, id: nil)
        #expect(aName.error?.code == .badRequest)
        let unknown = try H.line(handlers.answer(AliasRequest(interface: "eth9", alias: "x"), from: H.admin), handlers, context, id: nil)
        #expect(unknown.error?.code == .unknownInterface)
        let removed = try H.line(handlers.answer(AliasRequest(interface: "Home uplink", alias: nil), from: H.admin), handlers, context, id: nil)
        #expect(removed.ok)
        #expect(try context.store.queries.aliases().isEmpty)
        let gone = try Self.query(handlers, context, QueryRequest(interfaces: ["Home uplink"], usage: []))
        #expect(gone.error?.code == .unknownInterface)
    }

    @Test("the config's alias wins: shown, resolved, and ifmeter alias refused for that name")
    func configuredWins() throws {
        let context = try ValueContext()
        var configuration = try #require(context.service).configuration
        configuration.aliases = ["wg0": "VPN"]
        context.service?.reconfigure(configuration)
        let handlers = RequestHandlers(context: context)
        let answer = try Self.query(handlers, context, QueryRequest(interfaces: ["VPN"], usage: [])).result(as: QueryResult.self)
        #expect(answer.subjects.first?.name == "wg0")
        #expect(answer.subjects.first?.alias == "VPN")
        let refused = try H.line(handlers.answer(AliasRequest(interface: "wg0", alias: "Tunnel"), from: H.admin), handlers, context, id: nil)
        #expect(refused.error?.code == .badRequest)
        #expect(refused.error?.message.contains("config") == true)
    }

    @Test("hostile aliases are refused where they enter, or kept exactly and escaped in JSON",
          arguments: [("Home\u{1b}[31m", false), ("line\nbreak", false), ("\u{202e}evil", false), ("a,b", false), ("a+b", false),
                      (" lead", false), ("", true), (String(repeating: "x", count: 65), false),
                      ("<script>alert(1)</script>", true), ("\"quoted\" \\ 'q'", true), ("Wohnzimmer-Ü 🏠", true)])
    func hostileAliases(alias: String, accepted: Bool) throws {
        let context = try ValueContext()
        let handlers = RequestHandlers(context: context)
        let answer = try H.line(handlers.answer(AliasRequest(interface: "eth0", alias: alias), from: H.admin), handlers, context, id: nil)
        #expect(answer.ok == accepted, "\(String(describing: answer.error))")
        guard accepted, !alias.isEmpty else { return }
        let read = try Self.query(handlers, context, QueryRequest(interfaces: ["eth0"], usage: [])).result(as: QueryResult.self)
        #expect(read.subjects.first?.alias == alias)
    }
}
