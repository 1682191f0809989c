import FoundationEssentials
import IfMeterJSON

/// The documented error codes (docs/PROTOCOL.md).
public enum ErrorCode: String, Hashable, Sendable, Codable, CaseIterable {
    /// The line is not a JSON object, or a field has the wrong type.
    case badJSON = "bad_json"
    /// A field is missing or has a value the command does not accept.
    case badRequest = "bad_request"
    case unsupportedVersion = "unsupported_version"
    case unknownCommand = "unknown_command"
    case lineTooLong = "line_too_long"
    case tooManyClients = "too_many_clients"
    /// The daemon has not loaded its database and taken its first sample yet.
    case notReady = "not_ready"
    /// An interface name ifmeter has never seen.
    case unknownInterface = "unknown_interface"
    /// An admin command from a peer that is neither root nor in the admin group.
    case permissionDenied = "permission_denied"
    case idleTimeout = "idle_timeout"
    /// A `watch` client that did not read its stream fast enough.
    case slowClient = "slow_client"
    /// The database could not answer.
    case storeError = "store_error"
    /// `reload` found a bad config file; the old configuration stays in force.
    case configError = "config_error"
    /// The daemon itself failed to do what was asked (a system call that should not fail).
    case internalError = "internal_error"
}

public struct WireError: Error, Hashable, Sendable, Codable {
    public var code: ErrorCode
    public var message: String
    /// The request's id, when it could be read.
    public var id: RequestID?

    public init(_ code: ErrorCode, _ message: String, id: RequestID? = nil) {
        self.code = code
        self.message = message
        self.id = id
    }

    enum CodingKeys: String, CodingKey { case code, message }
}

/// One response line.
public struct Response<Result: Encodable & Sendable>: Encodable, Sendable {
    public var v = protocolVersion
    public var id: RequestID?
    public var ok: Bool
    /// Present on `watch` stream lines: what this line carries (`rates` or `event`).
    public var stream: String?
    public var result: Result?
    public var error: WireError?

    public static func success(_ result: Result, id: RequestID?, stream: String? = nil) -> Response {
        Response(id: id, ok: true, stream: stream, result: result, error: nil)
    }
}

/// One response line as a client reads it: the envelope, with `result` decoded once the
/// client knows which command (or stream line) it answers.
public struct ResponseLine: Sendable {
    public var v: Int?
    public var id: RequestID?
    public var ok: Bool
    public var stream: String?
    public var error: WireError?
    /// The raw line, to decode `result` from.
    public var line: Data

    private struct Envelope: Decodable {
        var v: Int?
        var id: RequestID?
        var ok: Bool
        var stream: String?
        var error: WireError?
    }

    private struct ResultOnly<T: Decodable>: Decodable {
        var result: T
    }

    /// Reads the envelope of one line; throws if it is not a response.
    public init(_ line: Data) throws {
        let envelope = try JSONDecoder().decode(Envelope.self, from: line)
        (v, id, ok, stream, error) = (envelope.v, envelope.id, envelope.ok, envelope.stream, envelope.error)
        self.line = line
    }

    /// The `result` of a successful response.
    public func result<T: Decodable>(as type: T.Type) throws -> T {
        try JSONDecoder().decode(ResultOnly<T>.self, from: line).result
    }
}

/// Encodes responses as single lines, keys sorted for a stable wire format.
public enum LineEncoder {
    public static func encode<T: Encodable>(_ value: T) -> [UInt8] {
        // Our types hold only strings, numbers, booleans and arrays of them, whose encoding
        // cannot fail (non-finite numbers become null).
        var bytes = try! JSONLineEncoder().encode(value)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    public static func failure(_ error: WireError) -> [UInt8] {
        encode(Response<Empty>(id: error.id, ok: false, stream: nil, result: nil, error: error))
    }
}

/// A result with no fields.
public struct Empty: Codable, Hashable, Sendable {
    public init() {}
}

extension LineEncoder {
    /// A success line whose result writes itself: the bytes ``encode(_:)`` makes of
    /// `Response.success(result, id:)`, without `Codable`. `capacity` is the size expected: an
    /// answer of megabytes grown from a small buffer is copied and faulted in a dozen times.
    public static func success(_ result: some JSONWritable, id: RequestID?, capacity: Int = 4096) -> [UInt8] {
        var writer = JSONWriter(capacity: capacity)
        writer.beginObject()
        if let id { writer.key("id"); id.write(to: &writer) }
        writer.key("ok"); writer.bool(true)
        writer.key("result"); result.write(to: &writer)
        writer.key("v"); writer.number(protocolVersion)
        writer.endObject()
        writer.bytes.append(UInt8(ascii: "\n"))
        return writer.bytes
    }
}
