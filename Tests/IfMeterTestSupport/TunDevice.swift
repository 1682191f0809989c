import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A tun device (IFF_TUN | IFF_NO_PI) driven by the test through `/dev/net/tun`: packets it
/// writes are the interface's rx, packets it reads are the interface's tx. Closing the
/// descriptor deletes the (non-persistent) interface.
public final class TunDevice: @unchecked Sendable {
    public let name: String
    public private(set) var fd: Int32

    /// Must be called inside the namespace the device is to live in.
    public init(name: String) throws {
        fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        self.name = name
        var request = ifreq()
        withUnsafeMutableBytes(of: &request.ifr_ifrn.ifrn_name) { buffer in
            buffer.copyBytes(from: Array(name.utf8.prefix(15)))
        }
        request.ifr_ifru.ifru_flags = 0x0001 | 0x1000  // IFF_TUN | IFF_NO_PI, <linux/if_tun.h>
        let tunSetIff: UInt = 0x4004_54ca  // TUNSETIFF = _IOW('T', 202, int)
        // deinit closes the descriptor, also when this initializer throws.
        guard ioctl(fd, tunSetIff, &request) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    }

    deinit { close() }

    /// Closes the descriptor, which deletes the interface.
    public func close() {
        if fd >= 0 { _ = Glibc.close(fd) }
        fd = -1
    }

    public func write(_ packet: [UInt8]) throws {
        let written = packet.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == packet.count else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    }

    /// Waits for one packet the kernel sent out of the interface; returns its size.
    public func read(timeoutMilliseconds: Int32) throws -> Int {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, timeoutMilliseconds) == 1 else { throw POSIXError(.ETIMEDOUT) }
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = Glibc.read(fd, &buffer, buffer.count)
        guard count >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        return count
    }

    /// An IPv4/UDP packet of `20 + 8 + payload` bytes with a valid header checksum.
    public static func udpPacket(from source: [UInt8], to destination: [UInt8], port: UInt16,
                                 payload: Int) -> [UInt8] {
        let total = 28 + payload
        var packet = [UInt8](repeating: 0, count: total)
        packet[0] = 0x45
        packet[2] = UInt8(total >> 8)
        packet[3] = UInt8(total & 0xff)
        packet[8] = 64    // TTL
        packet[9] = 17    // UDP
        packet.replaceSubrange(12..<16, with: source)
        packet.replaceSubrange(16..<20, with: destination)
        var sum: UInt32 = 0
        for index in stride(from: 0, to: 20, by: 2) {
            sum += UInt32(packet[index]) << 8 | UInt32(packet[index + 1])
        }
        while sum > 0xffff { sum = (sum & 0xffff) + (sum >> 16) }
        let checksum = ~UInt16(sum)
        packet[10] = UInt8(checksum >> 8)
        packet[11] = UInt8(checksum & 0xff)
        packet[20] = 0x30; packet[21] = 0x39           // source port 12345
        packet[22] = UInt8(port >> 8); packet[23] = UInt8(port & 0xff)
        packet[24] = UInt8((8 + payload) >> 8); packet[25] = UInt8((8 + payload) & 0xff)
        return packet                                    // UDP checksum 0: none, valid for IPv4
    }
}

/// Traffic through a tun device with nothing else on it (IPv6 off, tun has no ARP).
public enum TunTraffic {
    public static func push(through tun: TunDevice, in namespace: NetworkNamespace, written: Int,
                     writtenPayload: Int, read: Int, readPayload: Int) throws {
        try namespace.ip("address", "add", "10.88.0.1/24", "dev", tun.name)
        try namespace.ip("link", "set", tun.name, "up")
        // A port of the kernel's choosing: a port this process closed may still be held by a
        // child another test is spawning (between its fork and its exec), and a second bind of
        // it here fails with EADDRINUSE.
        let receiver = try namespace.inside { try UDPSocket(bindTo: "10.88.0.1", port: 0) }
        let packet = TunDevice.udpPacket(from: [10, 88, 0, 2], to: [10, 88, 0, 1], port: receiver.port,
                                         payload: writtenPayload)
        for _ in 0..<written {
            try tun.write(packet)
            try receiver.receive(timeoutMilliseconds: 30_000)
        }
        let sender = try namespace.inside { try UDPSocket(bindTo: "10.88.0.1", port: 0) }
        for _ in 0..<read {
            try sender.send([UInt8](repeating: 1, count: readPayload), to: "10.88.0.2", port: 7777)
            let size = try tun.read(timeoutMilliseconds: 30_000)
            guard size == readPayload + 28 else {
                throw CommandFailed(command: ["tun read"], result: CommandResult(
                    status: 1, stdout: "", stderr: "read \(size) bytes, expected \(readPayload + 28)"))
            }
        }
    }
}
