import IfMeterCore
import IfMeterJSON

/// The one reader of request lines (docs/PROTOCOL.md): a line is read once, member by member,
/// into a ``RequestLine``: the envelope, then every member ``RequestMembers/table`` lists. The rules are those the protocol has always had, error messages
/// included (Tests/IfMeterWireTests/Golden/requests.txt holds them):
///
/// - A line that is not one JSON object is `bad_json` "the request must be one JSON object on
///   one line", with no `id`; so is an integer field given a number that is not an integer
///   in range (`1.5`, `1e20`, `01`), though then the `id` is kept.
/// - A member of the wrong type is `bad_json` naming it (`field "usage.Index 0.top" has the
///   wrong type (expected Int)`), a `null` where a value must be is `field "…" is null`, and a
///   time that is neither RFC 3339 nor Unix seconds says so. When several members are wrong,
///   the first in member order (the envelope's `v`, `id`, `cmd`, then the table's) is
///   reported, wherever it is on the line.
/// - The first of repeated keys counts; unknown members are skipped, nested up to 512 deep.
struct RequestReader {
    /// Why a member could not be read; reported only if it is the first in member order.
    enum Problem: Error {
        case wrongType(path: String, expected: String)
        case null(path: String)
        case notATime(path: String, text: String)
        /// A number an integer member cannot hold: reported as a line that is not a request.
        case notAnInteger

        /// The line is not one JSON object.
        static let notOneObject = Problem.notAnInteger

        var message: String {
            switch self {
            case .wrongType(let path, let expected): "field \"\(path)\" has the wrong type (expected \(expected))"
            case .null(let path): "field \"\(path)\" is null"
            case .notATime(let path, let text): "field \"\(path)\": \"\(text)\" is neither RFC 3339 nor Unix seconds"
            case .notAnInteger: RequestReader.notOneObject
            }
        }
    }

    static let notOneObject = "the request must be one JSON object on one line"

    /// Where a problem falls in member order: the member (the envelope's first), then the
    /// element of an array member, then the member of an object element (-1 where there is none).
    struct Order: Comparable {
        var field: Int
        var element = -1
        var inner = -1

        static func < (a: Order, b: Order) -> Bool {
            (a.field, a.element, a.inner) < (b.field, b.element, b.inner)
        }
    }

    /// The envelope's members, first in member order.
    private enum Envelope: Int {
        case v, id, cmd

        static let named: [String: Envelope] = ["v": .v, "id": .id, "cmd": .cmd]

        /// Its key. Spelled out: `String(describing:)` reflects, a microsecond of every request.
        var key: String {
            switch self {
            case .v: "v"
            case .id: "id"
            case .cmd: "cmd"
            }
        }
    }

    private var reader: JSONReader
    private var request = RequestLine(v: nil, cmd: nil)
    /// The first problem so far, with where it falls in member order.
    private var first: (order: Order, problem: Problem)?
    private var idIsBad = false

    private init(_ line: [UInt8]) {
        // A byte order mark before the object is skipped, as it always was.
        let body = line.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(line.dropFirst(3)) : line
        reader = JSONReader(body, maximumDepth: 512)
    }

    /// Reads one line: the request, or the error to answer it with.
    static func read(_ line: some Collection<UInt8>) -> Result<RequestLine, WireError> {
        var state = RequestReader(Array(line))
        do {
            switch try state.reader.peek() {
            case UInt8(ascii: "{"): try state.readMembers()
            case UInt8(ascii: "n"):
                _ = try state.reader.readNull()
                guard try state.reader.isAtEnd() else { throw Problem.notOneObject }
                return .failure(WireError(.badJSON, Problem.null(path: "").message))
            default: throw Problem.notOneObject
            }
            guard try state.reader.isAtEnd() else { throw Problem.notOneObject }
        } catch {
            return .failure(WireError(.badJSON, notOneObject))
        }
        if let first = state.first {
            return .failure(WireError(.badJSON, first.problem.message, id: state.idIsBad ? nil : state.request.id))
        }
        return .success(state.request)
    }

    private mutating func note(_ problem: Problem, at order: Order) {
        if first.map({ order < $0.order }) ?? true { first = (order, problem) }
    }

    private mutating func readMembers() throws {
        var seen: UInt64 = 0
        let table = RequestMembers.table
        // Read from a reader of its own: the members are read into `self` as it goes.
        var members = reader
        try members.readObject { r, key in
            if let envelope = Envelope.named[key] {
                guard seen & 1 << envelope.rawValue == 0 else { return try r.skipValue() }
                seen |= 1 << envelope.rawValue
                return try self.read(envelope, from: &r)
            }
            guard let place = table.named[key], seen & 1 << (place + 3) == 0 else { return try r.skipValue() }
            seen |= 1 << (place + 3)
            let order = Order(field: place + 3)
            do {
                request.members[place] = try self.value(table.members[place], path: key, order, from: &r)
            } catch let problem as Problem {
                note(problem, at: order)
            }
        }
        reader = members
    }

    private mutating func read(_ envelope: Envelope, from r: inout JSONReader) throws {
        let path = envelope.key
        do {
            switch envelope {
            case .v: request.v = try Self.integer(&r, path)
            case .id:
                do {
                    request.id = try Self.requestID(&r, path)
                } catch let problem as Problem {
                    idIsBad = true
                    throw problem
                }
            case .cmd: request.cmd = try Self.string(&r, path)
            }
        } catch let problem as Problem {
            note(problem, at: Order(field: envelope.rawValue))
        }
    }

    /// A member's value as its kind takes it; nil for `null`.
    private mutating func value(_ member: Member, path: @autoclosure () -> String, _ order: Order,
                                from r: inout JSONReader) throws -> MemberValue? {
        switch member.kind {
        case .string: try Self.string(&r, path()).map(MemberValue.string)
        case .bool: try Self.bool(&r, path()).map(MemberValue.bool)
        case .time: try Self.time(&r, path()).map(MemberValue.time)
        case .integer: try Self.integer(&r, path()).map(MemberValue.integer)
        case .strings: try strings(&r, path(), order).map(MemberValue.strings)
        case .objects(let table): try objects(&r, path(), order, table).map(MemberValue.objects)
        }
    }

    // MARK: Members by type. Each leaves the value consumed, whatever it was.

    private static func string(_ r: inout JSONReader, _ path: @autoclosure () -> String) throws -> String? {
        switch try r.peek() {
        case UInt8(ascii: "\""): return try r.readString()
        case UInt8(ascii: "n"): _ = try r.readNull(); return nil
        default: try r.skipValue(); throw Problem.wrongType(path: path(), expected: "String")
        }
    }

    private static func bool(_ r: inout JSONReader, _ path: @autoclosure () -> String) throws -> Bool? {
        switch try r.peek() {
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return try r.readBool()
        case UInt8(ascii: "n"): _ = try r.readNull(); return nil
        default: try r.skipValue(); throw Problem.wrongType(path: path(), expected: "Bool")
        }
    }

    private static func integer(_ r: inout JSONReader, _ path: @autoclosure () -> String) throws -> Int? {
        switch try r.peek() {
        case UInt8(ascii: "n"): _ = try r.readNull(); return nil
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            guard let value = exactInteger(try r.readNumberText()) else { throw Problem.notAnInteger }
            return Int(value)
        default: try r.skipValue(); throw Problem.wrongType(path: path(), expected: "Int")
        }
    }

    /// A number or a string: an integer in range is a number, anything else must be a string.
    private static func requestID(_ r: inout JSONReader, _ path: @autoclosure () -> String) throws -> RequestID? {
        switch try r.peek() {
        case UInt8(ascii: "\""): return .string(try r.readString())
        case UInt8(ascii: "n"): _ = try r.readNull(); return nil
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            guard let value = exactInteger(try r.readNumberText()) else {
                throw Problem.wrongType(path: path(), expected: "String")
            }
            return .number(value)
        default: try r.skipValue(); throw Problem.wrongType(path: path(), expected: "String")
        }
    }

    /// Unix seconds (a finite number) or RFC 3339 text.
    private static func time(_ r: inout JSONReader, _ path: @autoclosure () -> String) throws -> TimeArgument? {
        switch try r.peek() {
        case UInt8(ascii: "\""):
            let text = try r.readString()
            guard let seconds = RFC3339.seconds(text) else { throw Problem.notATime(path: path(), text: text) }
            return TimeArgument(seconds: seconds)
        case UInt8(ascii: "n"): _ = try r.readNull(); return nil
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let text = try r.readNumberText()
            guard let seconds = Double(text), seconds.isFinite else {
                throw Problem.wrongType(path: path(), expected: "String")
            }
            return TimeArgument(seconds: seconds)
        default: try r.skipValue(); throw Problem.wrongType(path: path(), expected: "String")
        }
    }

    /// An array member: each element read by `element`, a `null` element noted as one. An
    /// element's problem is noted where it falls in member order, and the reading goes on. The
    /// elements' paths (`usage.Index 2`) are made only for a problem.
    private mutating func array<Element>(
        _ r: inout JSONReader, _ path: String, _ order: Order,
        _ element: (inout RequestReader, inout JSONReader, () -> String, Order) throws -> Element?
    ) throws -> [Element]? {
        switch try r.peek() {
        case UInt8(ascii: "["):
            var values: [Element] = []
            var index = 0
            try r.readArray { r in
                defer { index += 1 }
                let at = index
                let elementPath = { "\(path).Index \(at)" }
                let elementOrder = Order(field: order.field, element: at)
                if try r.peek() == UInt8(ascii: "n") {
                    _ = try r.readNull()
                    return note(.null(path: elementPath()), at: elementOrder)
                }
                do {
                    if let value = try element(&self, &r, elementPath, elementOrder) { values.append(value) }
                } catch let problem as Problem {
                    note(problem, at: elementOrder)
                }
            }
            return values
        case UInt8(ascii: "n"): _ = try r.readNull(); return nil
        default: try r.skipValue(); throw Problem.wrongType(path: path, expected: "Array<Any>")
        }
    }

    private mutating func strings(_ r: inout JSONReader, _ path: String, _ order: Order) throws -> [String]? {
        try array(&r, path, order) { _, r, path, _ in try Self.string(&r, path()) }
    }

    private mutating func objects(_ r: inout JSONReader, _ path: String, _ order: Order,
                                  _ table: MemberTable) throws -> [[MemberValue?]]? {
        try array(&r, path, order) { reader, r, path, order in
            guard try r.peek() == UInt8(ascii: "{") else {
                try r.skipValue()
                throw Problem.wrongType(path: path(), expected: "Dictionary<String, Any>")
            }
            return try reader.object(&r, path, order, table)
        }
    }

    private mutating func object(_ r: inout JSONReader, _ path: () -> String, _ order: Order,
                                 _ table: MemberTable) throws -> [MemberValue?] {
        var values = [MemberValue?](repeating: nil, count: table.members.count)
        var seen: UInt64 = 0
        try r.readObject { r, key in
            guard let place = table.named[key], seen & 1 << place == 0 else { return try r.skipValue() }
            seen |= 1 << place
            let inner = Order(field: order.field, element: order.element, inner: place)
            do {
                values[place] = try value(table.members[place], path: "\(path()).\(key)", inner, from: &r)
            } catch let problem as Problem {
                note(problem, at: inner)
            }
        }
        return values
    }

    // MARK: Numbers

    /// The integer a JSON number (``JSONReader/readNumberText()``) is exactly (`1`, `1.0`,
    /// `1e3`, `-0`), or nil: a fraction, or out of the 64-bit range.
    static func exactInteger(_ text: String) -> Int64? {
        if let value = Int64(text) { return value }
        guard let value = Double(text), value.isFinite, value.rounded(.towardZero) == value else { return nil }
        return Int64(exactly: value)
    }
}
