import IfMeterCore
import IfMeterJSON
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// A connection to ifmeterd's socket: requests out, response lines in, in order
/// (docs/PROTOCOL.md). Every failure is a ``CLIError`` saying what to do about it.
public final class DaemonClient {
    public let path: String
    private let fd: FileDescriptor
    private var buffer: [UInt8] = []
    private var nextID: Int64 = 1
    /// How long to wait for an answer; `usage` saves first, which can take a while on a big store.
    public var timeoutMilliseconds: Int32 = 60_000

    /// Connects to `path`; the error says whether the daemon is down or the socket is not ours to use.
    public init(path: String) throws(CLIError) {
        self.path = path
        guard let fd = FileDescriptor(adopting: socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)) else {
            throw CLIError(.failure, "cannot create a socket: \(Errno.current.description)")
        }
        guard let address = UnixSocketAddress(path: path) else {
            throw CLIError(.usage, "socket path \(path) is too long for a Unix socket")
        }
        let connected = address.withSockaddr { pointer, length in retryingEINTR { connect(fd.rawValue, pointer, length) } }
        guard connected == 0 else {
            switch errno {
            case ENOENT, ECONNREFUSED:
                throw CLIError(.unavailable, Self.notRunning(path))
            case EACCES, EPERM:
                throw CLIError(.noPermission, """
                    cannot connect to \(path): permission denied. The socket's mode is set by \
                    socket_mode and socket_group in ifmeterd.conf (or SocketMode= in ifmeterd.socket).
                    """)
            default:
                throw CLIError(.unavailable, "cannot connect to \(path): \(Errno.current.description)")
            }
        }
        self.fd = fd
    }

    /// What to say when nobody listens at `place`.
    static func notRunning(_ place: String) -> String {
        """
        ifmeterd is not running (nothing listens on \(place)).
        Start it with `systemctl start ifmeterd` (installed) or `make run` (from the source tree), \
        or point ifmeter at its socket with --socket or IFMETER_SOCKET.
        """
    }

    /// The descriptor, for waiting on it together with others (`live` waits on signals too).
    public var descriptor: Int32 { fd.rawValue }

    /// Sends `requests` at once (pipelined) and returns their answers in order, each checked:
    /// an error response becomes a ``CLIError``.
    public func send(_ requests: [any CommandRequestType]) throws(CLIError) -> [ResponseLine] {
        var wire: [UInt8] = []
        for request in requests {
            wire += request.lineBytes(id: .number(nextID)) + [UInt8(ascii: "\n")]
            nextID += 1
        }
        try write(wire)
        var answers: [ResponseLine] = []
        for request in requests {
            guard let line = try readLine(timeoutMilliseconds: timeoutMilliseconds) else {
                throw CLIError(.connectionLost, "ifmeterd closed the connection on \(path) without answering")
            }
            let response = try Self.decode(line)
            if let error = response.error { throw Self.describe(error, command: type(of: request).command.rawValue) }
            answers.append(response)
        }
        return answers
    }

    /// One request whose answer is read as it arrives, straight into `T` (no `Codable`, the
    /// line never held whole): how views read answers of thousands of interfaces.
    public func call<T: JSONReadable>(_ request: some CommandRequestType, reading type: T.Type) throws(CLIError) -> T {
        try call(request) { try T(reading: &$0) }
    }

    /// One request whose result `read` reads as it arrives (and may act on as it goes: a view
    /// shown while the rest of its answer is read). A ``CLIError`` `read` throws is passed on.
    public func call<Request: CommandRequestType, T>(_ request: Request, reading read: (inout JSONReader) throws -> T) throws(CLIError) -> T {
        let line = request.lineBytes(id: .number(nextID))
        nextID += 1
        try write(line + [UInt8(ascii: "\n")])
        var pending = buffer
        buffer = []
        // Whether the daemon closed the connection: a line it broke off reads as malformed
        // JSON, and is a lost connection, not a daemon of another version.
        var ended = false
        var reader = JSONReader(more: { [self] in
            if !pending.isEmpty {
                defer { pending = [] }
                return pending
            }
            let chunk = try readChunk(timeoutMilliseconds: timeoutMilliseconds)
            ended = chunk == nil
            return chunk
        })
        let answer: Answer<T>
        do {
            answer = try Self.readAnswer(&reader, result: read)
        } catch let error as CLIError {
            throw error
        } catch where ended {
            throw CLIError(.connectionLost, "ifmeterd closed the connection on \(path) in the middle of its answer")
        } catch {
            throw CLIError(.protocolMismatch, "ifmeterd's answer has an unexpected shape (\(error)); are ifmeter and ifmeterd the same version?")
        }
        guard answer.complete else {
            throw CLIError(.connectionLost, "ifmeterd closed the connection on \(path) in the middle of its answer")
        }
        let (result, failure, version) = (answer.result, answer.error, answer.version)
        buffer = Array(reader.remainder)
        if let version, version != protocolVersion { throw Self.versionMismatch(version) }
        if let failure { throw Self.describe(failure, command: Request.command.rawValue) }
        guard let result else {
            throw CLIError(.protocolMismatch, "ifmeterd answered without a result; are ifmeter and ifmeterd the same version?")
        }
        return result
    }

    /// One answer line as read: its result, or its error, and the protocol version it says.
    public struct Answer<T> {
        public var result: T?
        public var error: WireError?
        public var version: Int?
        /// False when the input ended before the line did.
        public var complete = false
    }

    /// Reads one answer line from `reader`, the result straight into `T`. Throws on a line that
    /// is not an answer; a different protocol version is reported in ``Answer/version`` only
    /// when the line could be read, so the caller says which it was.
    public static func readAnswer<T: JSONReadable>(_ reader: inout JSONReader) throws -> Answer<T> {
        try readAnswer(&reader) { try T(reading: &$0) }
    }

    /// ``readAnswer(_:)`` with the result read by `read`.
    public static func readAnswer<T>(_ reader: inout JSONReader, result read: (inout JSONReader) throws -> T) throws -> Answer<T> {
        var answer = Answer<T>()
        try reader.readObject { r, key in
            switch key {
            case "result": answer.result = try read(&r)
            case "error": answer.error = try WireError(reading: &r)
            case "v": answer.version = try r.readInt()
            default: try r.skipValue()
            }
        }
        answer.complete = try reader.readLineEnd()
        return answer
    }

    static func versionMismatch(_ version: Int) -> CLIError {
        CLIError(.protocolMismatch, "ifmeterd speaks protocol \(version), this ifmeter speaks \(protocolVersion); install matching versions")
    }

    static func result<T: JSONReadable>(of line: ResponseLine, as type: T.Type) throws(CLIError) -> T {
        do {
            return try line.result(as: type)
        } catch {
            throw CLIError(.protocolMismatch, "ifmeterd's answer has an unexpected shape (\(error)); are ifmeter and ifmeterd the same version?")
        }
    }

    /// Reads one response line; nil at end of stream, a ``CLIError`` on timeout.
    public func readLine(timeoutMilliseconds: Int32) throws(CLIError) -> [UInt8]? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                return line
            }
            guard let chunk = try readChunk(timeoutMilliseconds: timeoutMilliseconds) else { return nil }
            buffer += chunk
        }
    }

    /// What the socket has now, waiting up to the timeout for something; nil at end of stream.
    private func readChunk(timeoutMilliseconds: Int32) throws(CLIError) -> [UInt8]? {
        var poller = pollfd(fd: fd.rawValue, events: Int16(POLLIN), revents: 0)
        let ready = try valueOrErrno { poll(&poller, 1, timeoutMilliseconds) }
            .mapError { CLIError(.failure, "poll on \(path) failed: \($0)") }.get()
        guard ready > 0 else {
            throw CLIError(.connectionLost, "ifmeterd did not answer within \(timeoutMilliseconds / 1000) s on \(path)")
        }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let count = try valueOrErrno { read(fd.rawValue, &chunk, chunk.count) }
            .mapError { CLIError(.connectionLost, "cannot read from \(path): \($0)") }.get()
        if count == 0 { return nil }
        chunk.removeSubrange(count...)
        return chunk
    }

    /// True if a complete line is already buffered (so waiting on the descriptor would stall).
    public var hasBufferedLine: Bool { buffer.contains(UInt8(ascii: "\n")) }

    private func write(_ bytes: [UInt8]) throws(CLIError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { raw in
                retryingEINTR { Glibc.send(fd.rawValue, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL)) }
            }
            guard written > 0 else { throw CLIError(.connectionLost, "cannot write to \(path): \(Errno.current.description)") }
            offset += written
        }
    }

    static func decode(_ line: [UInt8]) throws(CLIError) -> ResponseLine {
        let response: ResponseLine
        do {
            response = try ResponseLine(line)
        } catch {
            throw CLIError(.protocolMismatch, "ifmeterd sent a line that is not a response: \(String(decoding: line.prefix(200), as: UTF8.self))")
        }
        if let version = response.v, version != protocolVersion { throw versionMismatch(version) }
        return response
    }

    /// The daemon's error as the user should read it, with the exit status it deserves.
    static func describe(_ error: WireError, command: String) -> CLIError {
        switch error.code {
        case .notReady: CLIError(.starting, "ifmeterd is starting (loading its database, taking its first sample); try again in a moment")
        case .unsupportedVersion: CLIError(.protocolMismatch, "ifmeterd does not speak this ifmeter's protocol: \(error.message)")
        case .unknownCommand:
            CLIError(.protocolMismatch, "ifmeterd does not know \"\(command)\": it is older than this ifmeter; install matching versions (\(error.message))")
        case .permissionDenied: CLIError(.noPermission, "\(command): \(error.message)")
        case .unknownInterface: CLIError(.usage, "\(error.message); `ifmeter list` shows the known ones")
        case .badRequest: CLIError(.usage, error.message)
        case .tooManyClients: CLIError(.busy, "the daemon refused the connection: \(error.message)")
        case .idleTimeout, .slowClient: CLIError(.connectionLost, "the daemon closed the connection: \(error.message)")
        case .storeError, .configError: CLIError(.daemonFailed, "the daemon could not answer: \(error.message)")
        default: CLIError(.daemonFailed, "the daemon could not answer (\(error.code.rawValue)): \(error.message)")
        }
    }
}
