import IfMeterWire
import IfMeterTestSupport
import Testing

/// The protocol's commands, not the test support's child processes.
typealias Command = IfMeterWire.Command

/// The HTTP API's arguments make the request the socket would read, or are refused saying which
/// argument is wrong (docs/PROTOCOL.md, "Over HTTP").
@Suite("HTTP API arguments", .ownThread, .timeLimit(.minutes(3)))
struct HTTPArgumentsTests {
    func request(_ command: Command, _ pairs: [(String, String)]) -> Result<RequestLine, WireError> {
        HTTPArguments.request(command, pairs.map { (key: $0.0, value: $0.1) })
    }

    @Test("each period a table, with the shared last, top, from, to and projection; interfaces in order; include split at commas")
    func query() throws {
        let line = try request(.query, [("interface", "wwan0"), ("interface", "<b>x"), ("period", "day"), ("period", "month"),
                                        ("last", "2"), ("from", "1796000000"), ("projection", "true"), ("include", "status,plans")]).get()
        #expect(line.cmd == "query")
        let made = QueryRequest(line)
        #expect(made.interfaces == ["wwan0", "<b>x"])
        #expect(made.usage?.map(\.period) == ["day", "month"])
        #expect(made.usage?.allSatisfy { $0.last == 2 && $0.from?.seconds == 1_796_000_000 && $0.projection == true } == true)
        #expect(made.include == ["status", "plans"])
        let owners = QueryRequest(try request(.query, [("select", "owners"), ("period", "total")]).get())
        #expect(owners.select == "owners" && owners.usage?.map(\.period) == ["total"])
    }

    @Test("events and usage take their members as the socket does; RFC 3339 times are the reader's to check")
    func others() throws {
        let events = EventsRequest(try request(.events, [("interface", "wlan0"), ("kind", "reset"), ("limit", "10")]).get())
        #expect(events.interface == "wlan0" && events.kind == "reset" && events.limit == 10)
        let usage = UsageRequest(try request(.usage, [("interface", "eth0"), ("period", "hour"), ("from", "2026-12-01T00:00:00Z")]).get())
        #expect(usage.period == "hour" && usage.from?.seconds == 1_796_083_200)
        let seconds = UsageRequest(try request(.usage, [("interface", "eth0"), ("period", "hour"), ("from", "1796083200.5"), ("to", "1.8e9")]).get())
        #expect(seconds.from?.seconds == 1_796_083_200.5 && seconds.to?.seconds == 1_800_000_000)
        let whole = try request(.query, [("request", #"{"v":1,"select":"owners","usage":[{"period":"total"}]}"#)]).get()
        #expect(whole.cmd == "query" && QueryRequest(whole).select == "owners")
    }

    @Test("an argument given twice is refused as that before it is looked up; one no command of the API takes is unknown")
    func repeatedAndUnknown() {
        let cases: [(pairs: [(String, String)], says: String)] = [
            ([("bogus", "1"), ("bogus", "1")], "\"bogus\" is given 2 times"),
            ([("interface", "a"), ("interface", "b")], "\"interface\" is given 2 times"),
            ([("process", "true")], "unknown argument \"process\""),
        ]
        for (pairs, says) in cases {
            guard case .failure(let error) = request(.status, pairs) else {
                Issue.record("\(pairs) was taken")
                continue
            }
            #expect(error.message.contains(says), "\(error.message)")
        }
    }

    @Test("format, which the API has always read as text and left, keeps a URL's answer on every command", arguments: HTTPArguments.commands)
    func format(command: Command) throws {
        let required: [(String, String)] = command == .usage ? [("interface", "eth0"), ("period", "day")] : []
        let line = try request(command, required + [("format", "json")]).get()
        #expect(line.cmd == command.rawValue)
        guard case .failure(let error) = request(command, [("format", "1"), ("format", "2")]) else {
            Issue.record("format given twice was taken")
            return
        }
        #expect(error.message.contains("given 2 times"))
    }

    @Test("refused, naming what is wrong", arguments: [
        (Command.query, [("bogus", "1")], "unknown argument \"bogus\""),
        (.query, [("last", "3")], "\"last\" applies to a table"),
        (.query, [("period", "day"), ("last", "lots")], "\"last\" must be a whole number"),
        (.query, [("period", "day"), ("last", "0")], "usage.last"),
        (.events, [("limit", "1"), ("limit", "2")], "given 2 times"),
        (.events, [("limit", "9999999")], "\"limit\" must be"),
        (.query, [("sum", "perhaps")], "\"sum\" must be true or false"),
        (.query, [("request", #"{"v":1,"cmd":"reload"}"#)], "names command \"reload\""),
        (.query, [("request", "{}"), ("period", "day")], "give no other argument"),
        (.usage, [("from", "yesterday"), ("interface", "eth0"), ("period", "day")], "from"),
        (.usage, [("from", "0x1p30"), ("interface", "eth0"), ("period", "day")], "\"0x1p30\" is neither RFC 3339 nor Unix seconds"),
        (.usage, [("to", ".5"), ("interface", "eth0"), ("period", "day")], "\".5\" is neither"),
        (.usage, [("to", "+5"), ("interface", "eth0"), ("period", "day")], "\"+5\" is neither"),
        (.usage, [("to", "00012"), ("interface", "eth0"), ("period", "day")], "\"00012\" is neither"),
    ])
    func refused(command: Command, pairs: [(String, String)], says: String) {
        guard case .failure(let error) = request(command, pairs) else {
            Issue.record("\(pairs) was taken")
            return
        }
        // A member the reader cannot read as its type is `bad_json`, as on the socket.
        #expect(error.code == .badRequest || error.code == .badJSON)
        #expect(error.message.contains(says), "\(error.message)")
    }
}
