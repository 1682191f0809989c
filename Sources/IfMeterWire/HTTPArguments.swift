import IfMeterJSON

/// The HTTP API's arguments (`GET /api/v1/COMMAND?…`, docs/PROTOCOL.md "Over HTTP") turned into
/// the request line the socket would have read, and read by the same reader: every member is
/// checked as it is there, under the same limits. Either one `request` argument holding a
/// request line as the socket takes it (`v` included; `cmd`, if given, the path's), or one
/// argument per member:
/// - `interface` (for `query` repeatable, in order), `class`, `kind`, `select`, `format`: text;
/// - `limit`, `last`, `top`: whole numbers; `from`, `to`: Unix seconds or RFC 3339;
/// - `projection`, `sum`: `true`/`false` (`1`/`0`);
/// - `include`: comma-separated, repeatable;
/// - `period`: for `query` repeatable, one table each, which `from`, `to`, `projection`,
///   `last` and `top` then apply to.
public enum HTTPArguments {
    /// The commands the HTTP API answers: those that only read.
    public static let commands: [Command] = [.status, .query, .plans, .events, .usage, .interfaces]

    /// The request `arguments` make for `command`, or what is wrong with them.
    public static func request(_ command: Command, _ arguments: [(key: String, value: String)]) -> Result<Request, WireError> {
        if let whole = arguments.first(where: { $0.key == "request" }) {
            guard arguments.count == 1 else { return bad("\"request\" holds the whole request: give no other argument beside it") }
            return Request.parse(Array(whole.value.utf8)).flatMap { request in
                var request = request
                if let cmd = request.cmd, cmd != command.rawValue {
                    return bad("\"request\" names command \"\(cmd)\" on the path of \"\(command.rawValue)\"")
                }
                request.cmd = command.rawValue
                return .success(request)
            }
        }
        var grouped: [String: [String]] = [:]
        var order: [String] = []
        for (key, value) in arguments {
            if grouped[key] == nil { order.append(key) }
            grouped[key, default: []].append(value)
        }
        var w = JSONWriter()
        w.beginObject()
        w.key("cmd")
        w.string(command.rawValue)
        w.key("v")
        w.number(protocolVersion)
        let tables = command == .query ? grouped["period"] ?? [] : []
        for key in order {
            let values = grouped[key]!
            let repeatable = key == "include" || (command == .query && (key == "interface" || key == "period"))
            guard repeatable || values.count == 1 else { return bad("argument \"\(key)\" is given \(values.count) times; give it once") }
            let value = values[0]
            switch key {
            case "interface" where command == .query:
                w.key("interfaces")
                w.strings(values)
            case "interface", "class", "kind", "select", "format", "period":
                if key == "period" && command == .query { continue }
                w.key(text: key)
                w.string(value)
            case "limit", "offset":
                guard let number = Int(value) else { return bad("argument \"\(key)\" must be a whole number, not \"\(value)\"") }
                w.key(text: key)
                w.number(number)
            case "from", "to", "projection", "last", "top":
                // A query's go into each of its tables.
                if command == .query { continue }
                if let problem = write(key, value, to: &w) { return bad(problem) }
            case "sum":
                guard let flag = flag(value) else { return bad("argument \"sum\" must be true or false, not \"\(value)\"") }
                w.key("sum")
                w.bool(flag)
            case "include":
                w.key("include")
                w.strings(values.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) })
            default:
                return bad("unknown argument \"\(key)\" (docs/PROTOCOL.md, \"Over HTTP\")")
            }
        }
        if !tables.isEmpty {
            w.key("usage")
            w.beginArray()
            for period in tables {
                w.beginObject()
                w.key("period")
                w.string(period)
                for key in ["from", "to", "projection", "last", "top"] {
                    guard let value = grouped[key]?.first else { continue }
                    if let problem = write(key, value, to: &w) { return bad(problem) }
                }
                w.endObject()
            }
            w.endArray()
        } else if command == .query, let key = ["from", "to", "projection", "last", "top"].first(where: { grouped[$0] != nil }) {
            return bad("argument \"\(key)\" applies to a table: give a period too")
        }
        w.endObject()
        return Request.parse(w.bytes)
    }

    /// One of `from`, `to`, `projection`, `last`, `top` as its member; what is wrong, or nil.
    private static func write(_ key: String, _ value: String, to w: inout JSONWriter) -> String? {
        w.key(text: key)
        switch key {
        case "projection":
            guard let flag = flag(value) else { return "argument \"projection\" must be true or false, not \"\(value)\"" }
            w.bool(flag)
        case "last", "top":
            guard let number = Int(value) else { return "argument \"\(key)\" must be a whole number, not \"\(value)\"" }
            w.number(number)
        default:
            // Unix seconds written as JSON writes a number (not Swift's `Double` text: 0x1p30,
            // .5, +5), anything else as text the reader takes for RFC 3339 or refuses.
            if JSONReader.isJSONNumber(Array(value.utf8)), let seconds = Double(value), seconds.isFinite {
                w.number(seconds)
            } else {
                w.string(value)
            }
        }
        return nil
    }

    private static func flag(_ value: String) -> Bool? {
        switch value {
        case "true", "1": true
        case "false", "0": false
        default: nil
        }
    }

    private static func bad(_ message: String) -> Result<Request, WireError> {
        .failure(WireError(.badRequest, message))
    }
}
