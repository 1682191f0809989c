import IfMeterPlatform
import IfMeterCore
import CMetricsHTTP
import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's HTTP listener (`/metrics`, the page and its JSON): libmicrohttpd run from the
/// daemon's loop — its epoll descriptor is watched like any other, and its timeouts are a
/// one-shot timer — so a request is served between samples and socket requests, never beside
/// them on another thread. An answer that needs another thread's work (a store query, a
/// page's render) is given later through its ``Reply``, its connection suspended meanwhile.
public final class HTTPServer {
    /// Where a request's answer goes: now, or later from the loop once it is made. Exactly one
    /// answer per request; a second is ignored.
    public final class Reply {
        fileprivate var exchange: OpaquePointer?
        fileprivate var pending: OpaquePointer?
        fileprivate var answered = false
        fileprivate weak var server: HTTPServer?
        fileprivate let fd: Int32

        fileprivate init(exchange: OpaquePointer, server: HTTPServer, fd: Int32) {
            self.exchange = exchange
            self.server = server
            self.fd = fd
        }

        /// Sends `answer` (on the loop's thread).
        public func send(_ answer: Answer) {
            guard !answered else { return }
            answered = true
            // Neither: the request's handler call is over and nothing was deferred.
            guard exchange != nil || pending != nil else { return }
            server?.admission.sending(fd, at: server?.loop.now ?? 0)
            let held = server.map { HeldBody(answer.body, server: $0) }
            answer.withResponse(held: held) { response in
                if let exchange {
                    ifm_http_answer(exchange, &response)
                } else if let pending {
                    ifm_http_complete(pending, &response)
                }
            }
            if pending != nil {
                server?.suspended[fd] = nil
                server?.again?.trigger()
            }
            pending = nil
        }

        /// Makes the answer off the loop once the listener has room for it (``HTTPAnswerBudget``):
        /// `make` runs on the loop, now or when room is made, and gives the answer to its
        /// completion (on the loop), which sends it. The room is held until then, even if the
        /// connection was ended meanwhile: the work goes on all the same.
        public func send(whenThereIsRoom make: @escaping (_ done: @escaping (Answer) -> Void) -> Void) {
            guard let server, !answered else { return }
            let start = { [self] in
                make { [self] answer in
                    send(answer)
                    server.wake(server.budget.made())
                }
            }
            if server.budget.admit(fd) { start() } else { server.waitingForRoom[fd] = start }
        }
    }

    /// An answer's body while libmicrohttpd sends it from where it is, not copied: counted in
    /// ``HTTPAnswerBudget/held`` until libmicrohttpd lets it go.
    fileprivate final class HeldBody {
        let bytes: [UInt8]
        /// Where the elements are: an array's storage does not move while an unmutated copy of
        /// it is held, and `bytes` is never mutated.
        let address: UnsafePointer<UInt8>?
        weak var server: HTTPServer?

        init(_ bytes: [UInt8], server: HTTPServer) {
            self.bytes = bytes
            address = bytes.withUnsafeBufferPointer { $0.baseAddress }
            self.server = server
            server.hold(self)
        }

        /// libmicrohttpd's release callback, with a retained ``HeldBody`` as its context.
        static let release: ifm_http_release = { context in
            let body = Unmanaged<HeldBody>.fromOpaque(context!).takeRetainedValue()
            body.server?.release(body)
        }
    }

    /// The answer; `body` is sent as is (already compressed when `encoding` says so).
    public struct Answer {
        public var status: UInt32
        public var contentType: String
        public var encoding: String?
        public var allow: String?
        public var body: [UInt8]
        /// More headers, in order.
        public var headers: [(name: String, value: String)]

        public init(status: UInt32, contentType: String, encoding: String? = nil, allow: String? = nil,
                    headers: [(name: String, value: String)] = [], body: [UInt8]) {
            (self.status, self.contentType, self.encoding, self.allow, self.body) = (status, contentType, encoding, allow, body)
            self.headers = headers
        }

        /// The answer as C reads it, valid during `use` only; the body sent from `held`'s
        /// bytes when there is one (released by C, whatever becomes of the answer).
        fileprivate func withResponse(held: HeldBody?, _ use: (inout ifm_http_response) -> Void) {
            let names = headers.map { strdup($0.name) }
            let values = headers.map { strdup($0.value) }
            defer { for pointer in names + values { free(pointer) } }
            contentType.withCString { contentType in
                withOptionalCString(encoding) { encoding in
                    withOptionalCString(allow) { allow in
                        body.withUnsafeBufferPointer { body in
                            names.map { UnsafePointer($0) }.withUnsafeBufferPointer { names in
                                values.map { UnsafePointer($0) }.withUnsafeBufferPointer { values in
                                    var response = ifm_http_response(
                                        status: status, content_type: contentType, content_encoding: encoding, allow: allow,
                                        body: held?.address ?? body.baseAddress, body_length: body.count, header_names: names.baseAddress,
                                        header_values: values.baseAddress, header_count: headers.count,
                                        release: held == nil ? nil : HeldBody.release,
                                        release_context: held.map { Unmanaged.passRetained($0).toOpaque() })
                                    use(&response)
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Limits like the Unix socket's: few connections, short patience, small headers.
    public struct Limits {
        /// Who gives way when connections wait too long or too many (``HTTPAdmission``).
        public var admission = HTTPAdmission.Limits()
        /// The path whose requests are never ended to make room: Prometheus's scrapes.
        public var reservedPath = "/metrics"
        /// Seconds a connection may stay idle (libmicrohttpd's own timeout, renewed by traffic).
        public var timeoutSeconds: UInt32 = 10
        /// Request line and headers must fit in this (libmicrohttpd's per-connection pool).
        public var memoryPerConnection = 32 * 1024
        /// What answers made off the loop may hold and how many are made at once.
        public var answers = HTTPAnswerBudget()

        public init() {}
    }

    private var server: OpaquePointer?
    fileprivate let loop: EventLoop
    private var watcher: EventSource?
    private var timer: EventSource?
    /// Runs libmicrohttpd again on the next loop turn, when it has work that needs no input.
    fileprivate var again: EventSource?
    private let respond: (Request, Reply) -> Void
    fileprivate var admission: HTTPAdmission
    private let reservedPath: String
    /// Replies given later, by their connection: libmicrohttpd reads nothing of a suspended
    /// connection, so one that admission ends is first answered, to be let go.
    fileprivate var suspended: [Int32: Reply] = [:]
    /// What answers cost now (``HTTPAnswerBudget``).
    fileprivate var budget: HTTPAnswerBudget
    /// Answers waiting for room, by connection: each starts its work when admitted.
    fileprivate var waitingForRoom: [Int32: () -> Void] = [:]
    /// Bodies libmicrohttpd holds, by where their bytes are, with how many answers send them.
    private var heldBodies: [UnsafePointer<UInt8>: (bytes: Int, answers: Int)] = [:]
    /// Ends connections whose request is late (``HTTPAdmission/expired(at:)``), every second.
    private var sweep: EventSource?
    /// The port it listens on.
    public let port: UInt16

    /// Serves on `fd` (a listening TCP socket); `respond` answers each request through its
    /// reply, at once or later.
    public init(listening fd: consuming FileDescriptor, limits: Limits = Limits(), loop: EventLoop,
                respond: @escaping (Request, Reply) -> Void) throws(PlatformError) {
        self.loop = loop
        self.respond = respond
        admission = HTTPAdmission(limits: limits.admission)
        budget = limits.answers
        reservedPath = limits.reservedPath
        let bound = ifm_http_bound_port(fd.rawValue)
        port = bound > 0 ? UInt16(bound) : 0
        // libmicrohttpd's own limits only as a backstop: it refuses the newcomer, where
        // HTTPAdmission ends whoever has waited longest. Well above HTTPAdmission's own: the
        // connections it ends count here until libmicrohttpd's next run closes them, and a
        // burst of connects filled a table of 96 and had scrapes refused. No per-address limit of its own:
        // it would refuse a scraper on an address a trickler also uses.
        var cLimits = ifm_http_limits(
            max_connections: UInt32(limits.admission.total * 8), max_connections_per_ip: 0,
            timeout_seconds: limits.timeoutSeconds, memory_per_connection: limits.memoryPerConnection)
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard let started = ifm_http_start(fd.rawValue, &cLimits, { context, request, exchange in
            let server = Unmanaged<HTTPServer>.fromOpaque(context!).takeUnretainedValue()
            server.handle(request!.pointee, exchange: exchange!)
        }, { context, peer, kind in
            Unmanaged<HTTPServer>.fromOpaque(context!).takeUnretainedValue().peerEvent(peer, kind)
        }, context) else {
            throw PlatformError.system("MHD_start_daemon", errno)
        }
        // libmicrohttpd's from now on: MHD_stop_daemon closes it.
        _ = fd.release()
        server = started
        let epoll = ifm_http_fd(started)
        guard epoll >= 0 else { throw PlatformError.system("MHD_get_daemon_info", -epoll) }
        watcher = try loop.watch(fd: epoll, events: UInt32(EPOLLIN.rawValue)) { [unowned self] _ in self.run() }
        // Armed by scheduleTimeout whenever libmicrohttpd has a deadline.
        timer = try loop.after(.seconds(86_400)) { [unowned self] in self.run() }
        again = try loop.deferred { [unowned self] in self.run() }
        sweep = try loop.every(.seconds(1)) { [unowned self] in end(admission.expired(at: loop.now)) }
        // Under a flood of web clients, root's socket requests, samples and signals go first.
        for source in [watcher, timer, again, sweep] { source?.setUnimportant() }
        scheduleTimeout()
    }

    private func peerEvent(_ fd: Int32, _ kind: ifm_http_peer_event_kind) {
        switch kind {
        case IFM_HTTP_PEER_OPENED:
            let address = Self.peerAddress(fd)
            if admission.overLimit(adding: address) { endGone() }
            end(admission.opened(fd, address: address, at: loop.now))
        case IFM_HTTP_PEER_ANSWERED: admission.answered(fd, at: loop.now)
        default:
            admission.closed(fd)
            budget.closed(fd)
            waitingForRoom[fd] = nil
        }
    }

    /// Ends the suspended connections whose client has left, when a limit is reached:
    /// libmicrohttpd does not watch them, so they would count against the limits until their
    /// answers were made. Only under pressure: a client that shut down its sending side after
    /// its request looks the same (`POLLRDHUP`), and is answered when there is room.
    private func endGone() {
        let gone = suspended.keys.filter { ifm_http_peer_gone($0) == 1 }
        for fd in gone { admission.closed(fd) }
        end(gone)
    }

    /// Starts the answers admitted, except those whose client left while they waited: the
    /// work is not done for nobody, and their room goes to the next.
    fileprivate func wake(_ fds: [Int32]) {
        for fd in fds {
            if let start = waitingForRoom.removeValue(forKey: fd), ifm_http_peer_gone(fd) == 0 {
                start()
            } else {
                if suspended[fd] != nil { end([fd]) }
                wake(budget.made())
            }
        }
    }

    /// libmicrohttpd sends `body` from now.
    fileprivate func hold(_ body: HeldBody) {
        guard let address = body.address else { return }
        if let known = heldBodies[address] {
            heldBodies[address] = (known.bytes, known.answers + 1)
        } else {
            heldBodies[address] = (body.bytes.count, 1)
            wake(budget.heldChanged(by: body.bytes.count))
        }
    }

    /// libmicrohttpd let `body` go.
    fileprivate func release(_ body: HeldBody) {
        guard let address = body.address, let known = heldBodies[address] else { return }
        if known.answers > 1 {
            heldBodies[address] = (known.bytes, known.answers - 1)
        } else {
            heldBodies[address] = nil
            wake(budget.heldChanged(by: -known.bytes))
        }
    }

    /// Ends connections by shutting their socket down: libmicrohttpd, which owns the
    /// descriptor, reads the end on its next run and closes it.
    private func end(_ fds: [Int32]) {
        guard !fds.isEmpty else { return }
        for fd in fds {
            budget.closed(fd)
            waitingForRoom[fd] = nil
            // Its work may still be queued or running; its result will find the reply answered.
            suspended[fd]?.send(Answer(status: 503, contentType: "text/plain; charset=utf-8",
                                       body: Array("closed to make room for other connections: try again\n".utf8)))
            shutdown(fd, Int32(SHUT_RDWR))
        }
        again?.trigger()
    }

    /// The peer's address without its port ("127.0.0.2", "::1"); "" if it cannot be read.
    public static func peerAddress(_ fd: Int32) -> String {
        var text = [CChar](repeating: 0, count: 64)
        guard ifm_http_peer_address(fd, &text, text.count) == 0 else { return "" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit {
        watcher = nil
        timer = nil
        again = nil
        sweep = nil
        ifm_http_stop(server)
    }

    /// Opens a listening socket on `address`.
    public static func listen(on address: MetricsAddress) throws(PlatformError) -> FileDescriptor {
        let fd = ifm_http_listen(address.host, address.port)
        guard let listening = FileDescriptor(adopting: fd) else {
            let kind: PlatformError.Kind = -fd == EADDRINUSE ? .unavailable : -fd == EACCES ? .noPermission : .configuration
            throw PlatformError(kind, "cannot listen for metrics on \(address): \(Errno(-fd).description)",
                              call: "bind", errno: -fd)
        }
        return listening
    }

    private func run() {
        guard let server else { return }
        ifm_http_run(server)
        scheduleTimeout()
    }

    /// Work pending now (a response half written, a request half parsed) runs on the next turn,
    /// not on a timer: sd-event's default timer accuracy (250 ms) would make every such step
    /// wait. Deadlines (idle connections) go on the timer.
    private func scheduleTimeout() {
        guard let server, let timer else { return }
        let milliseconds = ifm_http_timeout_ms(server)
        if milliseconds == 0 {
            again?.trigger()
        } else if milliseconds > 0 {
            timer.reschedule(at: loop.now + UInt64(min(milliseconds, 86_400_000)) * 1000)
        }
    }

    /// The first `count` texts of a C array of pointers and one of their byte lengths, a NULL
    /// pointer as "".
    private static func texts<Pointers, Sizes>(_ pointers: Pointers, sizes: Sizes, count: Int) -> [String] {
        withUnsafeBytes(of: pointers) { pointers in
            withUnsafeBytes(of: sizes) { sizes in
                let pointers = pointers.bindMemory(to: UnsafePointer<CChar>?.self)
                let sizes = sizes.bindMemory(to: Int.self)
                return (0..<min(count, pointers.count, sizes.count)).map { index in
                    guard let text = pointers[index] else { return "" }
                    return text.withMemoryRebound(to: UInt8.self, capacity: sizes[index]) {
                        String(decoding: UnsafeBufferPointer(start: $0, count: sizes[index]), as: UTF8.self)
                    }
                }
            }
        }
    }

    private func handle(_ request: ifm_http_request, exchange: OpaquePointer) {
        var asked = Request(
            method: request.method.map { String(cString: $0) } ?? "",
            path: request.url.map { String(cString: $0) } ?? "",
            accept: request.accept.map { String(cString: $0) },
            acceptEncoding: request.accept_encoding.map { String(cString: $0) },
            host: request.host.map { String(cString: $0) })
        // Each by its length: a `%00` the client sent is a NUL in the text, never its end.
        let keys = Self.texts(request.argument_keys, sizes: request.argument_key_sizes, count: request.argument_count)
        let values = Self.texts(request.argument_values, sizes: request.argument_value_sizes, count: request.argument_count)
        asked.arguments = Array(zip(keys, values).map { (key: $0, value: $1) })
        asked.tooManyArguments = request.too_many_arguments != 0
        if admission.overLimit(around: request.fd) { endGone() }
        let ended = admission.requested(request.fd, reserved: asked.path == reservedPath, at: loop.now)
        end(ended.filter { $0 != request.fd })
        let reply = Reply(exchange: exchange, server: self, fd: request.fd)
        guard !ended.contains(request.fd) else {
            // It gives way itself: told why, and closed once told.
            reply.send(Answer(status: 503, contentType: "text/plain; charset=utf-8", headers: [("Connection", "close")],
                              body: Array("closed to make room for other connections: try again\n".utf8)))
            return
        }
        respond(asked, reply)
        // Not answered yet: it is answered later, its connection suspended until then; or, if
        // it cannot be, now, while the exchange is still valid.
        if !reply.answered {
            reply.pending = ifm_http_defer(exchange)
            if reply.pending != nil {
                suspended[request.fd] = reply
            } else {
                reply.send(Answer(status: 503, contentType: "text/plain; charset=utf-8", body: Array("busy: try again\n".utf8)))
            }
        }
        reply.exchange = nil
    }
}

private func withOptionalCString<T>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> T) -> T {
    guard let text else { return body(nil) }
    return text.withCString { body($0) }
}
