import IfMeterCore

/// A member's JSON type: what the reader accepts for it, and how the writer writes it.
public enum MemberKind: Hashable, Sendable {
    case string, bool
    /// RFC 3339 text or Unix seconds, 1970-01-01 to 9999-12-31 (``TimeArgument/acceptedSeconds``).
    case time
    /// A number that is exactly an integer; a peer's must lie in `range` when there is one.
    case integer(range: ClosedRange<Int>?)
    case strings
    /// An array of objects, each with the members of `table` (`query`'s `usage` entries).
    case objects(MemberTable)
}

/// A member's value as read or as it is to be written, before any command takes it.
public enum MemberValue: Hashable, Sendable {
    case string(String)
    case bool(Bool)
    case time(TimeArgument)
    case integer(Int)
    case strings([String])
    /// Each object's members, by their place in its ``MemberTable``.
    case objects([[MemberValue?]])
}

/// How the HTTP API's arguments give a member (docs/PROTOCOL.md, "Over HTTP").
public enum HTTPForm: Hashable, Sendable {
    /// One argument of the member's key.
    case key
    /// `name`, repeatable: each value one element, in order.
    case repeated(String)
    /// The member's key, repeatable, each value split at commas.
    case commaSeparated
    /// `name`, repeatable: one object each, with the value as its member `name`; the object's
    /// other members are arguments that apply to every one.
    case objects(String)
}

/// One member a request may have: its key, its type, and how HTTP arguments give it.
public struct Member: Hashable, Sendable {
    public let key: String
    public let kind: MemberKind
    public let form: HTTPForm
}

/// The members an object may have, in the order their problems are reported: the reader
/// looks a key up here, keeps a value by its place, and writes values back in key order.
public struct MemberTable: Hashable, Sendable {
    public let members: [Member]
    /// Each key's place.
    let named: [String: Int]
    /// The places in sorted key order: the wire's order.
    let sorted: [Int]

    init(_ members: [Member]) {
        precondition(members.count <= 60, "a member table's places must fit the reader's bit set")
        self.members = members
        named = Dictionary(uniqueKeysWithValues: members.enumerated().map { ($0.element.key, $0.offset) })
        sorted = members.indices.sorted { members[$0].key < members[$1].key }
    }
}

/// The members of a request line besides its envelope (`v`, `id`, `cmd`): every member some
/// command declares (``CommandRequestType/fields``). A line is read before its command is
/// known, so each is checked as its type on every line, whatever the command.
enum RequestMembers {
    /// Every command, once: `allCases` makes its array at each use.
    static let commands = Command.allCases

    /// `command`'s fields' places in ``table``.
    static func places(of command: Command) -> [Int] { places[commands.firstIndex(of: command)!] }

    /// The order problems have always been reported in (docs/PROTOCOL.md, "Framing"). A member
    /// added since comes after these, in the order of ``Command`` and of its command's fields.
    static let reportOrder = ["interface", "class", "period", "from", "to", "kind", "limit", "projection", "format", "process",
                              "source", "path", "dry_run", "utc", "interfaces", "select", "sum", "include", "usage"]

    static let table: MemberTable = {
        var members: [Member] = []
        for command in commands {
            for member in command.requestType.members {
                if let known = members.first(where: { $0.key == member.key }) {
                    precondition(known.kind == member.kind, "member \"\(member.key)\" has two types")
                } else {
                    members.append(member)
                }
            }
        }
        let rank = { (member: Member) in reportOrder.firstIndex(of: member.key) ?? reportOrder.count }
        return MemberTable(members.enumerated().sorted { (rank($0.element), $0.offset) < (rank($1.element), $1.offset) }.map { $0.element })
    }()

    /// Each command's fields' places in ``table``, by ``Command``'s order.
    static let places: [[Int]] = commands.map { command in
        command.requestType.members.map { table.named[$0.key]! }
    }

    /// The places of ``table``'s members in the order their ranges are checked, as the protocol
    /// has always checked them: times first, a request's own before its objects', then numbers,
    /// `offset` before the others (a table's own times and numbers in its order).
    private static let rangeOrder: (times: [Int], numbers: [Int], objects: [Int]) = {
        let places = Array(table.members.indices)
        let offsetFirst = { (place: Int) in (table.members[place].key == "offset" ? 0 : 1, place) }
        return (places, places.sorted { offsetFirst($0) < offsetFirst($1) },
                places.filter { if case .objects = table.members[$0].kind { true } else { false } })
    }()

    /// The first value out of its range (docs/PROTOCOL.md), or nil when every one is in range.
    static func rangeProblem(_ values: [MemberValue?]) -> String? {
        func problem(_ member: Member, _ value: MemberValue?, path: @autoclosure () -> String, times: Bool) -> String? {
            switch (value, member.kind) {
            case (.time(let time)?, _) where times && !TimeArgument.acceptedSeconds.contains(time.seconds):
                return "field \"\(path())\" must be a time from 1970-01-01 to 9999-12-31 "
                    + "(Unix seconds 0 to \(Int64(TimeArgument.acceptedSeconds.upperBound)))"
            case (.integer(let number)?, .integer(let range?)) where !times && !range.contains(number):
                return "field \"\(path())\" must be \(range.lowerBound) to \(range.upperBound)"
            default: return nil
            }
        }
        for times in [true, false] {
            for place in times ? rangeOrder.times : rangeOrder.numbers {
                if let found = problem(table.members[place], values[place], path: table.members[place].key, times: times) { return found }
            }
            for place in rangeOrder.objects {
                guard case .objects(let entries)? = values[place], case .objects(let inner) = table.members[place].kind else { continue }
                for entry in entries {
                    for (index, member) in inner.members.enumerated() {
                        if let found = problem(member, entry[index], path: "\(table.members[place].key).\(member.key)", times: times) {
                            return found
                        }
                    }
                }
            }
        }
        return nil
    }
}
