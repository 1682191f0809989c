import IfMeterPlatform
import IfMeterCore
import CPeerSocket
import CSystemd
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// The Unix stream socket and its clients, on the daemon's loop: no thread per client, and no
/// client can block the loop or starve another. Every descriptor is non-blocking; each client
/// gets one read and a few requests per loop turn; a client's next request waits until its
/// last answer has been taken (so unread output is bounded by one answer, however large), and
/// a uid's requests for large answers wait while its connections hold too much (``UIDShares``);
/// connections are admitted per uid with slots kept for admins (``Admission``).
public final class Server {
    public var limits: Limits {
        didSet {
            admission.limits = limits.admission
            wake(shares.changeLimit(to: limits.unreadPerUID))
        }
    }
    public let socketPath: String
    private let listenFD: Int32
    /// Owns ``listenFD`` until ``shutdown()`` takes and closes it.
    private var listener: FileDescriptor?
    /// Set when this process bound the socket itself (not socket activation): the inode to
    /// unlink at exit, so a socket someone else put there is never removed.
    private let boundInode: ino_t?
    private let loop: EventLoop
    private var listenSource: EventSource?
    private var sweepSource: EventSource?
    /// Runs clients with requests left over from an earlier turn.
    private var backlogSource: EventSource?
    private var backlog: Set<Int32> = []
    /// Clients whose parked request may run now (``UIDShares``), in the order they waited: run
    /// before the backlog, so the longest waiting goes first.
    private var woken: [Int32] = []
    /// A descriptor held in reserve: when accept fails for want of descriptors, it is closed
    /// to accept and refuse one connection, so the listening socket never stays readable with
    /// nothing able to drain it (a loop spinning at 100 %).
    private var reserve: FileDescriptor?
    /// False while accepting is paused for want of descriptors.
    private var listening = true
    /// One receive buffer for every client: the loop reads one client at a time.
    private var readBuffer = [UInt8](repeating: 0, count: Server.readSize)
    private var admission: Admission
    private var shares: UIDShares
    public private(set) var clients: [Int32: Client] = [:]
    /// Called for each complete request line.
    public var onRequest: (RequestLine, Client) -> Void = { _, _ in }
    /// What a request costs: the policy the server admits by, given by whoever answers.
    public var costOf: (RequestLine) -> RequestCost = { _ in [] }
    /// Whether a peer may run admin commands; decides the reserved slots too. Until the daemon
    /// says otherwise, root alone.
    public var isAdmin: (uid_t, [gid_t]) -> Bool = { uid, _ in uid == 0 }

    /// Listens on `passed` (systemd's socket), or binds `path` itself (``SocketBinding``).
    public init(path: String, passed: consuming FileDescriptor?, mode: mode_t, group: gid_t?, limits: Limits, loop: EventLoop) throws(PlatformError) {
        self.limits = limits
        self.loop = loop
        admission = Admission(limits: limits.admission)
        shares = UIDShares(unreadLimit: limits.unreadPerUID)
        socketPath = path
        if let fd = passed {
            _ = fcntl(fd.rawValue, F_SETFL, fcntl(fd.rawValue, F_GETFL) | O_NONBLOCK)
            (listenFD, boundInode) = (fd.rawValue, nil)
            listener = consume fd
        } else {
            let bound = try SocketBinding.bind(path: path, mode: mode, group: group)
            (listenFD, boundInode) = (bound.fd.rawValue, bound.inode)
            listener = .some(bound.fd)
        }
        reserve = FileDescriptor(adopting: open("/dev/null", O_RDONLY | O_CLOEXEC))
        listenSource = try loop.watch(fd: listenFD, events: UInt32(EPOLLIN.rawValue)) { [unowned self] _ in
            self.acceptSome()
        }
        sweepSource = try loop.every(.seconds(1)) { [unowned self] in self.sweepIdle() }
        backlogSource = try loop.deferred { [unowned self] in self.runBacklog() }
    }

    /// Closes every client and the listening socket; removes the socket file if this process
    /// created it and it is still the same one.
    public func shutdown() {
        for client in clients.values { close(client) }
        listenSource = nil
        sweepSource = nil
        backlogSource = nil
        if let boundInode {
            var info = stat()
            if stat(socketPath, &info) == 0 && info.st_ino == boundInode { unlink(socketPath) }
        }
        listener.take()?.close()
        reserve.take()?.close()
    }

    // MARK: Connections

    private func acceptSome() {
        for _ in 0..<Self.acceptsPerTurn {
            let accepted = ifm_accept(listenFD)
            guard let connection = FileDescriptor(adopting: accepted) else {
                switch -accepted {
                case ECONNABORTED: continue
                case EMFILE, ENFILE: return refuseWithReserve()
                default: return  // EAGAIN: drained
                }
            }
            let fd = connection.rawValue
            let (uid, groups) = Self.credentials(fd)
            let admin = isAdmin(uid, groups)
            if case .refuse(let reason) = admission.verdict(uid: uid, isAdmin: admin, at: loop.now) {
                refuse(connection, reason)
                continue
            }
            let client = Client(connection, uid: uid, groups: groups, isAdmin: admin,
                                maxLineLength: limits.maxLineLength, now: loop.now)
            do {
                client.source = try loop.watch(fd: fd, events: UInt32(EPOLLIN.rawValue)) { [unowned self, unowned client] events in
                    self.service(client, events: events)
                }
            } catch {
                client.connection.take()?.close()
                continue
            }
            admission.admit(uid: uid, isAdmin: admin)
            clients[fd] = client
        }
    }

    /// Out of descriptors: frees the reserve to take one connection off the queue and tell it
    /// why it is refused. Without a reserve (ENFILE can take it too), stops listening until a
    /// client leaves or the next idle sweep.
    private func refuseWithReserve() {
        if let held = reserve.take() {
            held.close()
            let accepted = FileDescriptor(adopting: ifm_accept(listenFD))
            let tookOne = accepted != nil
            if let accepted { refuse(accepted, "ifmeterd is out of file descriptors; try again later") }
            reserve = FileDescriptor(adopting: open("/dev/null", O_RDONLY | O_CLOEXEC))
            if tookOne && reserve != nil { return }
        }
        listening = false
        listenSource?.setEvents(0)
    }

    /// Listens again after a pause (a client left, or the sweep's second passed).
    private func resumeListening() {
        guard !listening else { return }
        if reserve == nil { reserve = FileDescriptor(adopting: open("/dev/null", O_RDONLY | O_CLOEXEC)) }
        listening = true
        listenSource?.setEvents(UInt32(EPOLLIN.rawValue))
    }

    private func refuse(_ connection: consuming FileDescriptor, _ reason: String) {
        sendNotice(WireError(.tooManyClients, reason), to: connection.rawValue)
        connection.close()
    }

    /// A last line to a peer about to be closed; sent only if the socket takes it now.
    private func sendNotice(_ error: WireError, to fd: Int32) {
        let notice = LineEncoder.failure(error)
        _ = notice.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
    }

    /// The peer's uid and groups (primary first) as the kernel recorded them at connect; a
    /// peer whose credentials cannot be read is treated as nobody in particular (no admin).
    private static func credentials(_ fd: Int32) -> (uid_t, [gid_t]) {
        var peer = ifm_peer()
        guard ifm_peer_credentials(fd, &peer) == 0 else { return (uid_t.max, []) }
        let groups = withUnsafeBytes(of: peer.groups) { Array($0.bindMemory(to: gid_t.self).prefix(Int(peer.group_count))) }
        return (peer.uid, [peer.gid] + groups)
    }

    private func service(_ client: Client, events: UInt32) {
        if events & UInt32(EPOLLOUT.rawValue) != 0 { flush(client) }
        guard client.isOpen else { return }
        if events & UInt32(EPOLLIN.rawValue) != 0 && client.queued.isEmpty {
            readOnce(client)
        } else if events & UInt32(EPOLLHUP.rawValue) != 0 && events & UInt32(EPOLLIN.rawValue) == 0 {
            close(client)  // gone for good: nothing more to read, nobody to write to
            return
        }
        handleQueued(client)
    }

    /// One `recv` per turn: a client sending without pause gets its share, not the loop.
    private func readOnce(_ client: Client) {
        let count = retryingEINTR { recv(client.fd, &readBuffer, readBuffer.count, 0) }
        if count < 0 {
            if errno != EAGAIN && errno != EWOULDBLOCK { close(client) }
            return
        }
        if count == 0 {
            close(client)
            return
        }
        client.queued += client.input.append(readBuffer[..<count])
    }

    /// Handles up to ``requestsPerTurn`` queued lines, and only while the client has taken its
    /// answers; leaves the rest for a later turn.
    private func handleQueued(_ client: Client) {
        var handled = 0
        var index = 0
        while client.isOpen && client.closingAt == nil && client.output.isEmpty && !client.awaitingAnswer
            && handled < Self.requestsPerTurn {
            if let parked = client.parked {
                guard admit(parked, from: client) else { break }
                client.parked = nil
                handled += 1
                dispatch(parked, client)
                continue
            }
            guard index < client.queued.count else { break }
            let item = client.queued[index]
            index += 1
            handled += 1
            client.lastActivity = loop.now
            switch item {
            case .tooLong:
                let error = WireError(.lineTooLong, "request line longer than \(limits.maxLineLength) bytes (max_line_length); it was discarded")
                send(LineEncoder.failure(error), to: client)
            case .line(let line):
                switch RequestLine.parse(line) {
                case .success(let request) where admit(request, from: client): dispatch(request, client)
                case .success(let request): client.parked = request
                case .failure(let error): send(LineEncoder.failure(error), to: client)
                }
            }
        }
        guard client.isOpen else { return }
        // A client cut off by what it was answered has had its queue emptied already.
        if client.closingAt == nil { client.queued.removeFirst(index) }
        updateEvents(client)
        continueLater(client)
    }

    /// Queues `client` for a later loop turn when it has lines waiting and may go on. A parked
    /// request is tried again only when its uid's share makes room (``wake(_:)``).
    private func continueLater(_ client: Client) {
        guard client.parked == nil && !client.queued.isEmpty && client.output.isEmpty && !client.awaitingAnswer else { return }
        backlog.insert(client.fd)
        backlogSource?.trigger()
    }

    /// Whether `request` may run now by its uid's share; if not, the uid's next room wakes it.
    private func admit(_ request: RequestLine, from client: Client) -> Bool {
        shares.admit(costOf(request), fd: client.fd, uid: client.uid, isAdmin: client.isAdmin)
    }

    private func dispatch(_ request: RequestLine, _ client: Client) {
        client.answering = costOf(request)
        onRequest(request, client)
    }

    /// Tries the parked requests of `fds` again on a later turn, in this order.
    private func wake(_ fds: [Int32]) {
        guard !fds.isEmpty else { return }
        woken += fds
        backlogSource?.trigger()
    }

    /// Accounts a change of `client`'s unread output from `before` bytes.
    private func noteOutput(_ client: Client, from before: Int) {
        let delta = client.output.count - before
        if delta != 0 { wake(shares.unreadChanged(by: delta, uid: client.uid, isAdmin: client.isAdmin)) }
    }

    private func runBacklog() {
        let parked = woken
        woken = []
        for fd in parked {
            if let client = clients[fd] { handleQueued(client) }
        }
        let waiting = backlog
        backlog = []
        for fd in waiting {
            if let client = clients[fd] { handleQueued(client) }
        }
    }

    /// Reads only when nothing read is waiting and the last answer was taken; writes while
    /// output is queued.
    private func updateEvents(_ client: Client) {
        let reading = client.queued.isEmpty && client.parked == nil && client.output.isEmpty && !client.awaitingAnswer
            && client.closingAt == nil
        let events = (reading ? UInt32(EPOLLIN.rawValue) : 0) | (client.output.isEmpty ? 0 : UInt32(EPOLLOUT.rawValue))
        client.source?.setEvents(events)
    }

    /// Holds `client`'s next requests until ``answered(_:)``: the daemon answers it later, from
    /// another thread when the request's cost says so.
    public func holdRequests(of client: Client) {
        client.awaitingAnswer = true
        if client.answering.contains(.offLoop) { shares.startBuilding(fd: client.fd, uid: client.uid, isAdmin: client.isAdmin) }
        updateEvents(client)
    }

    /// The answer a deferred client was owed has been sent (or dropped, if it left); its next
    /// requests may run.
    public func answered(_ client: Client) {
        client.awaitingAnswer = false
        wake(shares.finishBuilding(fd: client.fd, uid: client.uid, isAdmin: client.isAdmin))
        guard client.isOpen else { return }
        updateEvents(client)
        continueLater(client)
    }

    /// Queues `bytes` for `client` and writes what the socket takes now. The limit is on
    /// unread bytes, not on one answer's size: only a client that already has more than
    /// `clientBuffer` unread (a watcher not reading its stream) is cut off.
    /// `partOfAnswer`: part of the answer the client waits for, sent while the rest is written
    /// (its requests held until ``answered(_:)``): never cut off, as big as it would be whole.
    public func send(_ bytes: [UInt8], to client: Client, partOfAnswer: Bool = false) {
        guard client.isOpen, client.closingAt == nil else { return }
        if client.output.count > limits.clientBuffer && !partOfAnswer {
            cutOff(client, WireError(.slowClient, "more than \(limits.clientBuffer) bytes unread (client_buffer); disconnected"))
            return
        }
        let before = client.output.count
        client.output.append(bytes)
        noteOutput(client, from: before)
        flush(client)
    }

    /// Ends `client`'s stream with `notice` as its last line: the lines it has not begun to
    /// receive are dropped, the one being written is finished, and nothing more is read from
    /// it or sent to it. A notice sent beside the queued output would meet a full socket and be
    /// lost or torn. The connection closes once the notice is written, or after
    /// `idle_timeout` if the peer never reads it.
    private func cutOff(_ client: Client, _ notice: WireError) {
        let before = client.output.count
        client.output.dropUnsentLines()
        client.output.append(LineEncoder.failure(notice))
        noteOutput(client, from: before)
        client.watchID = nil
        client.queued = []
        client.parked = nil
        client.closingAt = loop.now &+ EventLoop.microseconds(limits.idleTimeout)
        flush(client)
    }

    private func flush(_ client: Client) {
        while !client.output.isEmpty {
            let written = client.output.withUnsentBytes { bytes in
                retryingEINTR { Glibc.send(client.fd, bytes.baseAddress!, bytes.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            }
            if written < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK { break }
                close(client)
                return
            }
            let before = client.output.count
            client.output.consume(written)
            noteOutput(client, from: before)
        }
        if client.closingAt != nil && client.output.isEmpty {
            close(client)
            return
        }
        updateEvents(client)
        continueLater(client)
    }

    public func close(_ client: Client) {
        guard let connection = client.connection.take() else { return }
        client.source = nil
        client.queued = []
        client.parked = nil
        shares.closed(fd: client.fd, uid: client.uid)
        let before = client.output.count
        client.output.removeAll()
        noteOutput(client, from: before)
        clients[client.fd] = nil
        backlog.remove(client.fd)
        admission.release(uid: client.uid, isAdmin: client.isAdmin)
        connection.close()
        resumeListening()
    }

    /// Disconnects clients without a complete request for longer than `idleTimeout` (a
    /// slowloris trickling bytes included; watchers are exempt), and cut-off clients that did
    /// not read their notice within it.
    private func sweepIdle() {
        let now = loop.now
        let timeout = EventLoop.microseconds(limits.idleTimeout)
        for client in clients.values {
            if let closingAt = client.closingAt {
                if now >= closingAt { close(client) }
                continue
            }
            guard client.watchID == nil && !client.awaitingAnswer && now &- client.lastActivity > timeout else { continue }
            sendNotice(WireError(.idleTimeout, "no request for \(limits.idleTimeout.components.seconds) s (idle_timeout); disconnected"),
                       to: client.fd)
            close(client)
        }
        resumeListening()
    }
}
