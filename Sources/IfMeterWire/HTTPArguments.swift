import IfMeterJSON

/// The HTTP API's arguments (`GET /api/v1/COMMAND?…`, docs/PROTOCOL.md "Over HTTP") turned into
/// the request line the socket would have read, and read by the same reader: every member is
/// checked as it is there, under the same limits. Either one `request` argument holding a
/// request line as the socket takes it (`v` included; `cmd`, if given, the path's), or one
/// argument per member, as the command's fields declare (``HTTPForm``): a member by its key,
/// text as it is, whole numbers, Unix seconds or RFC 3339 times, `true`/`false` (`1`/`0`); a
/// list by repeating its argument (`interface` for `query`'s `interfaces`) or with commas
/// (`include`); `query`'s tables by repeating `period`, each with the `from`, `to`,
/// `projection`, `last` and `top` given once. An argument only another command of the API
/// takes is checked as that command takes it, and does nothing here.
public enum HTTPArguments {
    /// The commands the HTTP API answers: those that only read.
    public static let commands: [Command] = [.status, .query, .plans, .events, .usage, .interfaces, .percentile]

    /// The line `arguments` make for `command`, or what is wrong with them.
    public static func request(_ command: Command, _ arguments: [(key: String, value: String)]) -> Result<RequestLine, WireError> {
        if let whole = arguments.first(where: { $0.key == "request" }) {
            guard arguments.count == 1 else { return bad("\"request\" holds the whole request: give no other argument beside it") }
            return RequestLine.parse(Array(whole.value.utf8)).flatMap { request in
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
        let own = command.requestType.members
        // The member that holds objects given by repeating an argument (`query`'s tables), the
        // argument, and the objects' members.
        let objects: (member: Member, argument: String, table: MemberTable)? = own.lazy.compactMap { member in
            guard case .objects(let argument) = member.form, case .objects(let table) = member.kind else { return nil }
            return (member, argument, table)
        }.first
        let shared = objects?.table.members.filter { $0.key != objects?.argument } ?? []
        var w = JSONWriter()
        w.beginObject()
        w.key("cmd")
        w.string(command.rawValue)
        w.key("v")
        w.number(protocolVersion)
        for key in order where key != objects?.argument {
            let values = grouped[key]!
            let ownMember = own.first { argument(of: $0) == key }
            let sharedMember = ownMember == nil ? shared.first { $0.key == key } : nil
            // Read as the command that takes it reads it; this one leaves it (the reader skips
            // a key no command has, `last` at the top).
            let member = ownMember ?? sharedMember ?? others[key]
            // A repeated argument is refused as that before it is looked up, as it always was.
            if let problem = once(key, values, member?.form ?? .key) { return bad(problem) }
            guard let member else { return bad("unknown argument \"\(key)\" (docs/PROTOCOL.md, \"Over HTTP\")") }
            // A table's members are written into each table, after the other arguments.
            if sharedMember == nil, let problem = write(member, values, to: &w) { return bad(problem) }
        }
        if let objects, let given = grouped[objects.argument] {
            w.key(text: objects.member.key)
            w.beginArray()
            for value in given {
                w.beginObject()
                w.key(text: objects.argument)
                w.string(value)
                for member in shared {
                    guard let value = grouped[member.key]?.first else { continue }
                    if let problem = write(member, [value], to: &w) { return bad(problem) }
                }
                w.endObject()
            }
            w.endArray()
        } else if let member = shared.first(where: { grouped[$0.key] != nil }) {
            return bad("argument \"\(member.key)\" applies to a table: give a \(objects!.argument) too")
        }
        w.endObject()
        return RequestLine.parse(w.bytes)
    }

    /// The argument that gives `member`.
    private static func argument(of member: Member) -> String {
        switch member.form {
        case .key, .commaSeparated: member.key
        case .repeated(let name), .objects(let name): name
        }
    }

    /// Every argument another command of the API takes, as it takes it: a member of its own,
    /// or of its objects; and `format`, `metrics`' member, which the API has always read as text
    /// and left, so a URL that gives it keeps its answer.
    private static let others: [String: Member] = {
        var found: [String: Member] = [:]
        for command in commands {
            for member in command.requestType.members {
                if case .objects(let table) = member.kind {
                    for inner in table.members where found[inner.key] == nil { found[inner.key] = inner }
                } else if let taken = found[argument(of: member)], taken.form == .key || member.form != .key {
                    // A member given once wins over a list given by the same argument.
                    continue
                } else {
                    found[argument(of: member)] = member
                }
            }
        }
        if let format = Command.metrics.requestType.members.first(where: { $0.key == "format" }) { found[format.key] = format }
        return found
    }()

    /// What is wrong when an argument that is not a list is given more than once.
    private static func once(_ key: String, _ values: [String], _ form: HTTPForm) -> String? {
        guard form == .key, values.count > 1 else { return nil }
        return "argument \"\(key)\" is given \(values.count) times; give it once"
    }

    /// `member` as `values` give it; what is wrong, or nil.
    private static func write(_ member: Member, _ values: [String], to w: inout JSONWriter) -> String? {
        let (key, value) = (argument(of: member), values[0])
        w.key(text: member.key)
        switch member.kind {
        case .string: w.string(value)
        case .strings:
            w.strings(member.form == .commaSeparated
                ? values.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) } : values)
        case .bool:
            guard let flag = flag(value) else { return "argument \"\(key)\" must be true or false, not \"\(value)\"" }
            w.bool(flag)
        case .integer:
            guard let number = Int(value) else { return "argument \"\(key)\" must be a whole number, not \"\(value)\"" }
            w.number(number)
        case .time:
            // Unix seconds written as JSON writes a number (not Swift's `Double` text: 0x1p30,
            // .5, +5), anything else as text the reader takes for RFC 3339 or refuses.
            if JSONReader.isJSONNumber(Array(value.utf8)), let seconds = Double(value), seconds.isFinite {
                w.number(seconds)
            } else {
                w.string(value)
            }
        case .objects: preconditionFailure("objects are given by their own argument")
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

    private static func bad(_ message: String) -> Result<RequestLine, WireError> {
        .failure(WireError(.badRequest, message))
    }
}
