import CSystemd
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// The Unix stream socket and its clients, on the daemon's loop: no thread per client, and no
/// client can block the loop (every descriptor is non-blocking, output is queued and bounded).
final class Server {
    struct Limits: Hashable, Sendable {
        var maxLineLength: Int
        var maxClients: Int
        var clientBuffer: Int
        /// Seconds; watchers are exempt.
        var idleTimeout: UInt64
    }

    /// One connected peer.
    final class Client {
        let fd: Int32
        /// From `SO_PEERCRED` / `SO_PEERGROUPS` at accept time.
        let uid: uid_t
        let groups: [gid_t]
        var input: LineBuffer
        var output: [UInt8] = []
        var source: EventSource?
        var lastActivity: UInt64
        /// The `id` of this client's `watch` request, while it watches.
        var watchID: RequestID??
        var isOpen = true

        init(fd: Int32, uid: uid_t, groups: [gid_t], maxLineLength: Int, now: UInt64) {
            self.fd = fd
            self.uid = uid
            self.groups = groups
            input = LineBuffer(maximumLength: maxLineLength)
            lastActivity = now
        }
    }

    var limits: Limits
    let socketPath: String
    private let listenFD: Int32
    /// Set when this process bound the socket itself (not socket activation): the inode to
    /// unlink at exit, so a socket someone else put there is never removed.
    private let boundInode: ino_t?
    private let loop: EventLoop
    private var listenSource: EventSource?
    private var sweepSource: EventSource?
    private(set) var clients: [Int32: Client] = [:]
    /// Called for each complete request line.
    var onRequest: (Request, Client) -> Void = { _, _ in }

    /// Takes the socket systemd passed (`LISTEN_FDS`), or binds `path` itself. A stale socket
    /// at `path` is replaced only because the caller holds the state directory's lock; anything
    /// at `path` that is not a socket is left alone and reported.
    init(path: String, mode: mode_t, group: gid_t?, limits: Limits, loop: EventLoop) throws(DaemonError) {
        self.limits = limits
        self.loop = loop
        socketPath = path
        if sd_listen_fds(1) == 1 {
            let fd = SD_LISTEN_FDS_START
            guard sd_is_socket_unix(fd, Int32(SOCK_STREAM.rawValue), 1, nil, 0) > 0 else {
                throw DaemonError("the socket systemd passed (fd 3) is not a listening Unix stream socket")
            }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            listenFD = fd
            boundInode = nil
        } else {
            (listenFD, boundInode) = try Self.bind(path: path, mode: mode, group: group)
        }
        listenSource = try loop.watch(fd: listenFD, events: UInt32(EPOLLIN.rawValue)) { [unowned self] _ in
            self.acceptAll()
        }
        sweepSource = try loop.every(1_000_000) { [unowned self] in self.sweepIdle() }
    }

    private static func bind(path: String, mode: mode_t, group: gid_t?) throws(DaemonError) -> (Int32, ino_t) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else {
            throw DaemonError("socket path \(path) is longer than \(capacity - 1) bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        var existing = stat()
        if lstat(path, &existing) == 0 {
            guard existing.st_mode & S_IFMT == S_IFSOCK else {
                throw DaemonError("\(path) exists and is not a socket; remove it or choose another --socket")
            }
            unlink(path)  // stale: its owner held our lock, and we hold it now
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw DaemonError.system("socket", errno) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else {
            let error = errno
            Glibc.close(fd)
            throw DaemonError("cannot bind \(path): \(String(cString: strerror(error)))")
        }
        var info = stat()
        stat(path, &info)
        if chmod(path, mode) != 0 || (group.map { chown(path, uid_t.max, $0) } ?? 0) != 0 {
            let error = errno
            Glibc.close(fd)
            unlink(path)
            throw DaemonError("cannot set the mode or group of \(path): \(String(cString: strerror(error)))")
        }
        guard listen(fd, 128) == 0 else {
            let error = errno
            Glibc.close(fd)
            unlink(path)
            throw DaemonError.system("listen", error)
        }
        return (fd, info.st_ino)
    }

    /// Closes every client and the listening socket; removes the socket file if this process
    /// created it and it is still the same one.
    func shutdown() {
        for client in clients.values { close(client) }
        listenSource = nil
        sweepSource = nil
        if let boundInode {
            var info = stat()
            if stat(socketPath, &info) == 0 && info.st_ino == boundInode { unlink(socketPath) }
        }
        Glibc.close(listenFD)
    }

    // MARK: Connections

    private func acceptAll() {
        while true {
            // accept4 is GNU-only in Glibc's Swift module; the daemon never forks, so setting the
            // flags after accept leaves no window that matters.
            let fd = accept(listenFD, nil, nil)
            if fd < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return  // EAGAIN, or out of descriptors: try again on the next readiness
            }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            guard clients.count < limits.maxClients else {
                let refusal = LineEncoder.failure(WireError(
                    .tooManyClients, "ifmeterd already serves \(limits.maxClients) clients (max_clients); try again later"))
                _ = refusal.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                Glibc.close(fd)
                continue
            }
            let (uid, groups) = Self.credentials(fd)
            let client = Client(fd: fd, uid: uid, groups: groups,
                                maxLineLength: limits.maxLineLength, now: loop.now)
            do {
                client.source = try loop.watch(fd: fd, events: UInt32(EPOLLIN.rawValue)) { [unowned self, unowned client] events in
                    self.service(client, events: events)
                }
            } catch {
                Glibc.close(fd)
                continue
            }
            clients[fd] = client
        }
    }

    /// `struct ucred` from `<sys/socket.h>`, which Swift's Glibc module hides behind
    /// `_GNU_SOURCE`; same layout.
    private struct PeerCredentials {
        var pid: pid_t = 0
        var uid: uid_t = uid_t.max
        var gid: gid_t = gid_t.max
    }

    private static func credentials(_ fd: Int32) -> (uid_t, [gid_t]) {
        var credentials = PeerCredentials()
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        let soPeerCred: Int32 = 17  // SO_PEERCRED, <asm-generic/socket.h>
        guard getsockopt(fd, SOL_SOCKET, soPeerCred, &credentials, &length) == 0 else {
            return (uid_t.max, [])
        }
        var groups = [gid_t](repeating: 0, count: 256)
        var groupsLength = socklen_t(groups.count * MemoryLayout<gid_t>.size)
        let soPeerGroups: Int32 = 59  // SO_PEERGROUPS, <asm-generic/socket.h>
        let count = getsockopt(fd, SOL_SOCKET, soPeerGroups, &groups, &groupsLength) == 0
            ? Int(groupsLength) / MemoryLayout<gid_t>.size : 0
        return (credentials.uid, [credentials.gid] + groups.prefix(count))
    }

    private func service(_ client: Client, events: UInt32) {
        if events & UInt32(EPOLLOUT.rawValue) != 0 { flush(client) }
        guard client.isOpen else { return }
        if events & UInt32(EPOLLIN.rawValue) != 0 || events & UInt32(EPOLLHUP.rawValue) != 0 {
            readAll(client)
        }
    }

    private func readAll(_ client: Client) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while client.isOpen {
            let count = recv(client.fd, &buffer, buffer.count, 0)
            if count < 0 {
                if errno == EINTR { continue }
                if errno != EAGAIN && errno != EWOULDBLOCK { close(client) }
                return
            }
            if count == 0 {
                close(client)
                return
            }
            client.lastActivity = loop.now
            for item in client.input.append(buffer[..<count]) {
                guard client.isOpen else { return }
                switch item {
                case .tooLong:
                    let error = WireError(.lineTooLong, "request line longer than \(limits.maxLineLength) bytes (max_line_length); it was discarded")
                    send(LineEncoder.failure(error), to: client)
                case .line(let line):
                    switch Request.parse(line) {
                    case .success(let request): onRequest(request, client)
                    case .failure(let error): send(LineEncoder.failure(error), to: client)
                    }
                }
            }
        }
    }

    /// Queues `bytes` for `client` and writes what the socket takes now. A client whose queue
    /// would pass `clientBuffer` is not reading: it is cut off so it cannot hold memory or
    /// anyone else up.
    func send(_ bytes: [UInt8], to client: Client) {
        guard client.isOpen else { return }
        if client.output.count + bytes.count > limits.clientBuffer {
            let notice = LineEncoder.failure(WireError(
                .slowClient, "more than \(limits.clientBuffer) bytes unread (client_buffer); disconnected"))
            _ = notice.withUnsafeBytes { Glibc.send(client.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            close(client)
            return
        }
        client.output += bytes
        flush(client)
    }

    private func flush(_ client: Client) {
        while !client.output.isEmpty {
            let written = client.output.withUnsafeBytes {
                Glibc.send(client.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { break }
                close(client)
                return
            }
            client.output.removeFirst(written)
        }
        let events = UInt32(EPOLLIN.rawValue) | (client.output.isEmpty ? 0 : UInt32(EPOLLOUT.rawValue))
        client.source?.setEvents(events)
    }

    func close(_ client: Client) {
        guard client.isOpen else { return }
        client.isOpen = false
        client.source = nil
        clients[client.fd] = nil
        Glibc.close(client.fd)
    }

    /// Disconnects clients silent for longer than `idleTimeout`; watchers are exempt.
    private func sweepIdle() {
        let now = loop.now
        for client in clients.values where client.watchID == nil
            && now - client.lastActivity > limits.idleTimeout * 1_000_000 {
            let notice = LineEncoder.failure(WireError(
                .idleTimeout, "no request for \(limits.idleTimeout) s (idle_timeout); disconnected"))
            _ = notice.withUnsafeBytes { Glibc.send(client.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            close(client)
        }
    }
}
