import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A blocking IPv4 UDP socket for pushing a known number of datagrams.
public final class UDPSocket: @unchecked Sendable {
    public let fd: Int32

    public init(bindTo address: String, port: UInt16) throws {
        fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var sin = try Self.address(address, port)
        let result = withUnsafePointer(to: &sin) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        // deinit closes the descriptor, also when this initializer throws.
        guard result == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    }

    deinit { close(fd) }

    /// The port the socket is bound to: the one the kernel chose for port 0.
    public var port: UInt16 {
        var sin = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &sin) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return UInt16(bigEndian: sin.sin_port)
    }

    public func send(_ bytes: [UInt8], to address: String, port: UInt16) throws {
        var sin = try Self.address(address, port)
        let sent = bytes.withUnsafeBytes { buffer in
            withUnsafePointer(to: &sin) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, buffer.baseAddress, buffer.count, 0, $0,
                           socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard sent == bytes.count else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    }

    /// Waits for one datagram; returns its size.
    @discardableResult
    public func receive(timeoutMilliseconds: Int32) throws -> Int {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, timeoutMilliseconds) == 1 else { throw POSIXError(.ETIMEDOUT) }
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = recv(fd, &buffer, buffer.count, 0)
        guard count >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        return count
    }

    static func address(_ text: String, _ port: UInt16) throws -> sockaddr_in {
        var sin = sockaddr_in()
        sin.sin_family = sa_family_t(AF_INET)
        sin.sin_port = port.bigEndian
        guard inet_pton(AF_INET, text, &sin.sin_addr) == 1 else { throw POSIXError(.EINVAL) }
        return sin
    }
}
