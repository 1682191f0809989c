import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A line-oriented client of ifmeterd's Unix socket, for tests.
public final class SocketClient: @unchecked Sendable {
    public let fd: Int32
    private var buffer: [UInt8] = []

    public init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        // No close here: a throwing class initializer still runs deinit, which closes it. A
        // second close could hit a descriptor another thread has opened meanwhile.
        guard result == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    }

    deinit { close(fd) }

    public func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            offset += written
        }
    }

    /// The next line, or nil when the daemon closed the connection.
    public func readLine(timeoutMilliseconds: Int32 = 30_000) throws -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, timeoutMilliseconds) == 1 else { throw POSIXError(.ETIMEDOUT) }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = recv(fd, &chunk, chunk.count, 0)
            if count < 0 { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            if count == 0 { return nil }
            buffer += chunk[..<count]
        }
    }

    /// Sends one request and decodes the next line as JSON.
    public func request(_ line: String) throws -> [String: Any] {
        try send(line + "\n")
        guard let reply = try readLine() else { throw POSIXError(.ECONNRESET) }
        return try Self.decode(reply)
    }

    public static func decode(_ line: String) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw POSIXError(.EBADMSG)
        }
        return object
    }
}
