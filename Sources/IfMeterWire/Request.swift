import FoundationEssentials

/// The protocol version this build speaks.
public let protocolVersion = 1

/// A request's `id`, echoed in its response: a number or a string, as the client chose.
public enum RequestID: Hashable, Sendable, Codable {
    case number(Int64)
    case string(String)

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int64.self) {
            self = .number(number)
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .number(let number): try container.encode(number)
        case .string(let string): try container.encode(string)
        }
    }
}

/// A point in time in a request: RFC 3339 text or Unix seconds.
public struct TimeArgument: Hashable, Sendable, Codable {
    public var seconds: Double

    public init(seconds: Double) { self.seconds = seconds }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Double.self) {
            seconds = number
            return
        }
        let text = try container.decode(String.self)
        guard let date = try? Date(text, strategy: .iso8601) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "\"\(text)\" is neither RFC 3339 nor Unix seconds")
        }
        seconds = date.timeIntervalSince1970
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(seconds)
    }
}

/// One request line, as sent. Every field is optional here so a request with a bad field can
/// still be answered under its own `id`; ``Request/validated()`` says what is wrong.
public struct Request: Hashable, Sendable, Codable {
    public var v: Int?
    public var id: RequestID?
    public var cmd: String?
    public var interface: String?
    public var `class`: String?
    public var period: String?
    public var from: TimeArgument?
    public var to: TimeArgument?
    public var kind: String?
    public var limit: Int?
    public var projection: Bool?

    public init(v: Int? = protocolVersion, id: RequestID? = nil, cmd: String?, interface: String? = nil,
                class: String? = nil, period: String? = nil, from: TimeArgument? = nil,
                to: TimeArgument? = nil, kind: String? = nil, limit: Int? = nil, projection: Bool? = nil) {
        self.v = v
        self.id = id
        self.cmd = cmd
        self.interface = interface
        self.class = `class`
        self.period = period
        self.from = from
        self.to = to
        self.kind = kind
        self.limit = limit
        self.projection = projection
    }

    /// Parses one line. A line that is not a JSON object, or whose fields have the wrong types,
    /// is a ``WireError`` carrying whatever `id` could be recovered.
    public static func parse(_ line: some Collection<UInt8>) -> Result<Request, WireError> {
        let data = Data(line)
        do {
            return .success(try JSONDecoder().decode(Request.self, from: data))
        } catch let error as DecodingError {
            let id = try? JSONDecoder().decode(IDOnly.self, from: data).id
            return .failure(WireError(.badJSON, Self.describe(error), id: id))
        } catch {
            return .failure(WireError(.badJSON, "the request is not valid JSON"))
        }
    }

    /// Only the `id`, to answer a request whose other fields are broken.
    private struct IDOnly: Decodable {
        var id: RequestID?
    }

    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map(\.stringValue).joined(separator: ".")
        }
        switch error {
        case .typeMismatch(_, let context) where context.codingPath.isEmpty,
             .dataCorrupted(let context) where context.codingPath.isEmpty:
            return "the request must be one JSON object on one line"
        case .typeMismatch(let type, let context):
            return "field \"\(path(context))\" has the wrong type (expected \(type))"
        case .dataCorrupted(let context):
            return "field \"\(path(context))\": \(context.debugDescription)"
        case .keyNotFound(let key, _):
            return "field \"\(key.stringValue)\" is missing"
        case .valueNotFound(_, let context):
            return "field \"\(path(context))\" is null"
        @unknown default:
            return "the request could not be read"
        }
    }
}
