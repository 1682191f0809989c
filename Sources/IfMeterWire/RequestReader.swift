import IfMeterCore
import IfMeterJSON

/// The one reader of request lines (docs/PROTOCOL.md): a line is read once, member by member,
/// into a ``Request``. The rules are those the protocol has always had, error messages
/// included (Tests/IfMeterWireTests/Golden/requests.txt holds them):
///
/// - A line that is not one JSON object is `bad_json` "the request must be one JSON object on
///   one line", with no `id`; so is an integer field given a number that is not an integer
///   in range (`1.5`, `1e20`, `01`), though then the `id` is kept.
/// - A member of the wrong type is `bad_json` naming it (`field "usage.Index 0.top" has the
///   wrong type (expected Int)`), a `null` where a value must be is `field "…" is null`, and a
///   time that is neither RFC 3339 nor Unix seconds says so. When several members are wrong,
///   the first in the order ``Field`` lists them is reported, wherever it is on the line.
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

    /// The members a request may have, in the order their problems are reported.
    enum Field: Int, CaseIterable {
        case v, id, cmd, interface, `class`, period, from, to, kind, limit, projection, format, process, source, path
        case dryRun, utc, interfaces, select, sum, include, usage, offset

        /// The member's key.
        var name: String { Self.names[rawValue] }

        private static let names = allCases.map { $0 == .dryRun ? "dry_run" : String(describing: $0) }
        static let named = Dictionary(uniqueKeysWithValues: allCases.map { ($0.name, $0) })
    }

    /// The members of a `usage` entry, in the same sense.
    enum SpecField: Int, CaseIterable {
        case period, from, to, projection, last, top

        var name: String { Self.names[rawValue] }

        private static let names = allCases.map { String(describing: $0) }
        static let named = Dictionary(uniqueKeysWithValues: allCases.map { ($0.name, $0) })
    }

    /// Where a problem falls in member order: the member, then the element of an array member,
    /// then the member of a `usage` entry (-1 where there is none).
    struct Order: Comparable {
        var field: Int
        var element = -1
        var specField = -1

        static func < (a: Order, b: Order) -> Bool {
            (a.field, a.element, a.specField) < (b.field, b.element, b.specField)
        }
    }

    private var reader: JSONReader
    private var request = Request(v: nil, cmd: nil)
    /// The first problem so far, with where it falls in member order.
    private var first: (order: Order, problem: Problem)?
    private var idIsBad = false

    private init(_ line: [UInt8]) {
        // A byte order mark before the object is skipped, as it always was.
        let body = line.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(line.dropFirst(3)) : line
        reader = JSONReader(body, maximumDepth: 512)
    }

    /// Reads one line: the request, or the error to answer it with.
    static func read(_ line: some Collection<UInt8>) -> Result<Request, WireError> {
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
        var seen: UInt32 = 0
        // Read from a reader of its own: the members are read into `self` as it goes.
        var members = reader
        try members.readObject { r, key in
            guard let field = Field.named[key], seen & 1 << field.rawValue == 0 else { return try r.skipValue() }
            seen |= 1 << field.rawValue
            try self.read(field, from: &r)
        }
        reader = members
    }

    private mutating func read(_ field: Field, from r: inout JSONReader) throws {
        let order = Order(field: field.rawValue)
        let path = field.name
        do {
            switch field {
            case .v: request.v = try Self.integer(&r, path)
            case .id:
                do {
                    request.id = try Self.requestID(&r, path)
                } catch let problem as Problem {
                    idIsBad = true
                    throw problem
                }
            case .cmd: request.cmd = try Self.string(&r, path)
            case .interface: request.interface = try Self.string(&r, path)
            case .class: request.class = try Self.string(&r, path)
            case .period: request.period = try Self.string(&r, path)
            case .from: request.from = try Self.time(&r, path)
            case .to: request.to = try Self.time(&r, path)
            case .kind: request.kind = try Self.string(&r, path)
            case .limit: request.limit = try Self.integer(&r, path)
            case .projection: request.projection = try Self.bool(&r, path)
            case .format: request.format = try Self.string(&r, path)
            case .process: request.process = try Self.bool(&r, path)
            case .source: request.source = try Self.string(&r, path)
            case .path: request.path = try Self.string(&r, path)
            case .dryRun: request.dryRun = try Self.bool(&r, path)
            case .utc: request.utc = try Self.bool(&r, path)
            case .interfaces: request.interfaces = try strings(&r, path, order)
            case .select: request.select = try Self.string(&r, path)
            case .sum: request.sum = try Self.bool(&r, path)
            case .include: request.include = try strings(&r, path, order)
            case .usage: request.usage = try specs(&r, path, order)
            case .offset: request.offset = try Self.integer(&r, path)
            }
        } catch let problem as Problem {
            note(problem, at: order)
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

    private mutating func specs(_ r: inout JSONReader, _ path: String, _ order: Order) throws -> [UsageSpec]? {
        try array(&r, path, order) { reader, r, path, order in
            guard try r.peek() == UInt8(ascii: "{") else {
                try r.skipValue()
                throw Problem.wrongType(path: path(), expected: "Dictionary<String, Any>")
            }
            return try reader.spec(&r, path, order)
        }
    }

    private mutating func spec(_ r: inout JSONReader, _ path: () -> String, _ order: Order) throws -> UsageSpec {
        var spec = UsageSpec()
        var seen: UInt32 = 0
        try r.readObject { r, key in
            guard let field = SpecField.named[key], seen & 1 << field.rawValue == 0 else { return try r.skipValue() }
            seen |= 1 << field.rawValue
            do {
                switch field {
                case .period: spec.period = try Self.string(&r, "\(path()).\(field.name)")
                case .from: spec.from = try Self.time(&r, "\(path()).\(field.name)")
                case .to: spec.to = try Self.time(&r, "\(path()).\(field.name)")
                case .projection: spec.projection = try Self.bool(&r, "\(path()).\(field.name)")
                case .last: spec.last = try Self.integer(&r, "\(path()).\(field.name)")
                case .top: spec.top = try Self.integer(&r, "\(path()).\(field.name)")
                }
            } catch let problem as Problem {
                note(problem, at: Order(field: order.field, element: order.element, specField: field.rawValue))
            }
        }
        return spec
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

extension Request {
    /// Parses one line. A line that is not a JSON object, or whose members have the wrong
    /// types, is a ``WireError`` carrying whatever `id` could be read; a member out of its
    /// range is `bad_request` under the request's own `id`.
    public static func parse(_ line: some Collection<UInt8>) -> Result<Request, WireError> {
        RequestReader.read(line).flatMap { request in
            if let problem = request.rangeProblem {
                return .failure(WireError(.badRequest, problem, id: request.id))
            }
            return .success(request)
        }
    }
}
