import IfMeterJSON

/// The documented error codes (docs/PROTOCOL.md).
public enum ErrorCode: String, Hashable, Sendable, CaseIterable {
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

public struct WireError: Error, Hashable, Sendable {
    public var code: ErrorCode
    public var message: String
    /// The request's id, when it could be read.
    public var id: RequestID?

    public init(_ code: ErrorCode, _ message: String, id: RequestID? = nil) {
        self.code = code
        self.message = message
        self.id = id
    }
}

extension WireError: JSONWritable, JSONReadable {
    /// `{"code", "message"}`; the id goes in the envelope.
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("code"); w.string(code.rawValue)
        w.key("message"); w.string(message)
        w.endObject()
    }

    public init(reading r: inout JSONReader) throws {
        var code: ErrorCode?
        var message = ""
        try r.readObject { r, key in
            switch key {
            case "code": code = ErrorCode(rawValue: try r.readString())
            case "message": message = try r.readString()
            default: try r.skipValue()
            }
        }
        // A code this client does not know is still an error, with the daemon's message.
        self.init(code ?? .storeError, message)
    }
}

/// Response lines (docs/PROTOCOL.md): `{"error"?, "id"?, "ok", "result"?, "stream"?, "v"}`,
/// keys sorted, one line each. The one writer of every answer the daemon sends.
public enum LineEncoder {
    /// A success line. `capacity` is the size expected: an answer of megabytes grown from a
    /// small buffer is copied and faulted in a dozen times.
    public static func success(_ result: some JSONWritable, id: RequestID?, stream: String? = nil,
                               capacity: Int = 4096) -> [UInt8] {
        success(id: id, stream: stream, capacity: capacity) { result.write(to: &$0) }
    }

    /// A success line whose result `writeResult` writes (and may take parts of as it goes:
    /// ``JSONWriter/take()``); the bytes returned are the rest.
    public static func success(id: RequestID?, stream: String? = nil, capacity: Int = 4096,
                               result writeResult: (inout JSONWriter) throws -> Void) rethrows -> [UInt8] {
        var writer = JSONWriter(capacity: capacity)
        writer.beginObject()
        if let id { writer.key("id"); id.write(to: &writer) }
        writer.key("ok"); writer.bool(true)
        writer.key("result"); try writeResult(&writer)
        if let stream { writer.key("stream"); writer.string(stream) }
        writer.key("v"); writer.number(protocolVersion)
        writer.endObject()
        writer.bytes.append(UInt8(ascii: "\n"))
        return writer.bytes
    }

    public static func failure(_ error: WireError) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("error"); error.write(to: &writer)
        if let id = error.id { writer.key("id"); id.write(to: &writer) }
        writer.key("ok"); writer.bool(false)
        writer.key("v"); writer.number(protocolVersion)
        writer.endObject()
        writer.bytes.append(UInt8(ascii: "\n"))
        return writer.bytes
    }

    /// The error code of a line this encoder wrote, nil for a success; read from the line's
    /// first bytes, never by parsing it again (an answer may be of megabytes, and the HTTP
    /// listener needs its status on the loop). Exact for this encoder's lines: keys are sorted,
    /// so a failure begins `{"error":` and a success with `{"id":` or `{"ok":`. A failure whose
    /// code cannot be read there is an internal error, never a success.
    public static func errorCode(of line: [UInt8]) -> ErrorCode? {
        guard line.starts(with: Array(#"{"error":"#.utf8)) else { return nil }
        let head = Array(#"{"error":{"code":""#.utf8)
        guard line.starts(with: head) else { return .internalError }
        let code = line[head.count...].prefix(40).prefix { $0 != UInt8(ascii: "\"") }
        return ErrorCode(rawValue: String(decoding: code, as: UTF8.self)) ?? .internalError
    }

    /// A value on a line of its own (an estimate-log record).
    public static func line(_ value: some JSONWritable) -> [UInt8] {
        var writer = JSONWriter()
        value.write(to: &writer)
        writer.bytes.append(UInt8(ascii: "\n"))
        return writer.bytes
    }
}

/// One response line as a client reads it: the envelope, with `result` read once the client
/// knows which command (or stream line) it answers — `stream` comes after `result` in the
/// sorted line, so the result's bytes are kept until it is known.
public struct ResponseLine: Sendable {
    public var v: Int?
    public var id: RequestID?
    public var ok = false
    public var stream: String?
    public var error: WireError?
    /// The raw line.
    public var line: [UInt8]
    private var resultBytes: Range<Int>?

    /// Reads the envelope of one line; throws if it is not a response.
    public init(_ line: [UInt8]) throws {
        self.line = line
        var reader = JSONReader(line)
        var sawOK = false
        var result: Range<Int>?
        try reader.readObject { r, key in
            switch key {
            case "v": v = try r.readInt()
            case "id": id = try r.readNull() ? nil : try RequestID(reading: &r)
            case "ok": ok = try r.readBool(); sawOK = true
            case "stream": stream = try r.readNull() ? nil : try r.readString()
            case "error": error = try r.readNull() ? nil : try WireError(reading: &r)
            case "result":
                _ = try r.peek()
                let start = r.offset
                try r.skipValue()
                result = start..<r.offset
            default: try r.skipValue()
            }
        }
        guard sawOK else { throw JSONReadError("a response has no \"ok\"", offset: reader.offset) }
        resultBytes = result
    }

    /// The `result` of a successful response, read as `T`.
    public func result<T: JSONReadable>(as type: T.Type) throws -> T {
        guard let resultBytes else { throw JSONReadError("the response has no \"result\"", offset: 0) }
        var reader = JSONReader(Array(line[resultBytes]))
        return try T(reading: &reader)
    }
}
