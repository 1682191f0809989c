import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// The sockets systemd passed (`LISTEN_FDS`), told apart by what they are: the API's Unix
/// stream socket (`ifmeterd.socket`), the two link-event netlink sockets
/// (`ifmeterd-events.socket`, two `ListenNetlink=route 1` lines with a receive buffer an
/// unprivileged process could not get: the own namespace's, then the peers', in the order
/// systemd passes a unit's sockets, which is its lines'), and the metrics endpoint's TCP socket
/// (`ifmeterd-metrics.socket`, `FileDescriptorName=metrics`). Any may be absent; anything else
/// passed is an error.
public struct PassedSockets {
    public var listener: Int32?
    public var linkEvents: Int32?
    /// The socket for other namespaces' link deletions (``linkEvents``' twin).
    public var peerEvents: Int32?
    public var metrics: Int32?

    /// Reads and unsets `LISTEN_FDS`, so nothing this process starts inherits them.
    public static func take() throws(PlatformError) -> PassedSockets {
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        let count = sd_listen_fds_with_names(1, &names)
        guard count >= 0 else { throw PlatformError.system("sd_listen_fds_with_names", -count) }
        defer {
            for index in 0..<Int(count) { free(names?[index]) }
            free(names)
        }
        var sockets = PassedSockets()
        for (index, fd) in (SD_LISTEN_FDS_START..<(SD_LISTEN_FDS_START + count)).enumerated() {
            let name = names?[index].map { String(cString: $0) }
            if name == "metrics" {
                guard sd_is_socket_inet(fd, 0, Int32(SOCK_STREAM.rawValue), 1, 0) > 0, sockets.metrics == nil else {
                    throw PlatformError(.configuration, "systemd passed descriptor \(fd) named \"metrics\", which is not "
                        + "a listening TCP socket (check ifmeterd-metrics.socket's ListenStream= line)")
                }
                sockets.metrics = fd
            } else if sd_is_socket_unix(fd, Int32(SOCK_STREAM.rawValue), 1, nil, 0) > 0 && sockets.listener == nil {
                sockets.listener = fd
            } else if sd_is_socket(fd, AF_NETLINK, Int32(SOCK_RAW.rawValue), -1) > 0 && sockets.linkEvents == nil {
                sockets.linkEvents = fd
            } else if sd_is_socket(fd, AF_NETLINK, Int32(SOCK_RAW.rawValue), -1) > 0 && sockets.peerEvents == nil {
                sockets.peerEvents = fd
            } else {
                throw PlatformError(.configuration, "systemd passed descriptor \(fd), which is neither a listening Unix stream socket, "
                    + "one of two netlink sockets, nor one named \"metrics\" (check the socket units' Listen… and FileDescriptorName= lines)")
            }
        }
        return sockets
    }
}
