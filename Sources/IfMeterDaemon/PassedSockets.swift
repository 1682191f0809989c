import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// The sockets systemd passed (`LISTEN_FDS`), told apart by what they are: the API's Unix
/// stream socket (`ifmeterd.socket`) and the link-event netlink socket
/// (`ifmeterd-events.socket`, `ListenNetlink=route 1` with a receive buffer an unprivileged
/// process could not get). Either may be absent; anything else passed is an error.
struct PassedSockets {
    var listener: Int32?
    var linkEvents: Int32?

    /// Reads and unsets `LISTEN_FDS`, so nothing this process starts inherits them.
    static func take() throws(DaemonError) -> PassedSockets {
        let count = sd_listen_fds(1)
        guard count >= 0 else { throw DaemonError.system("sd_listen_fds", -count) }
        var sockets = PassedSockets()
        for fd in SD_LISTEN_FDS_START..<(SD_LISTEN_FDS_START + count) {
            if sd_is_socket_unix(fd, Int32(SOCK_STREAM.rawValue), 1, nil, 0) > 0 && sockets.listener == nil {
                sockets.listener = fd
            } else if sd_is_socket(fd, AF_NETLINK, Int32(SOCK_RAW.rawValue), -1) > 0 && sockets.linkEvents == nil {
                sockets.linkEvents = fd
            } else {
                throw DaemonError(.configuration, "systemd passed descriptor \(fd), which is neither a listening Unix stream socket "
                    + "nor a netlink socket (check the socket units' Listen… lines)")
            }
        }
        return sockets
    }
}
