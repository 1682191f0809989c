import IfMeterPlatform
import IfMeterCore
import CMetricsHTTP
import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// `/metrics` over HTTP: libmicrohttpd run from the daemon's loop — its epoll descriptor is
/// watched like any other, and its timeouts are a one-shot timer — so a scrape is served
/// between samples and socket requests, never beside them on another thread.
public final class MetricsServer {
    /// What one request asked.
    public struct Request {
        public var method: String
        public var path: String
        public var accept: String?
        public var acceptEncoding: String?
    }

    /// The answer; `body` is sent as is (already compressed when `encoding` says so).
    public struct Answer {
        public var status: UInt32
        public var contentType: String
        public var encoding: String?
        public var allow: String?
        public var body: [UInt8]

        public init(status: UInt32, contentType: String, encoding: String? = nil, allow: String? = nil, body: [UInt8]) {
            (self.status, self.contentType, self.encoding, self.allow, self.body) = (status, contentType, encoding, allow, body)
        }
    }

    /// Limits like the Unix socket's: few connections, short patience, small headers.
    public struct Limits {
        /// Who gives way when connections wait too long or too many (``HTTPAdmission``).
        public var admission = HTTPAdmission.Limits()
        /// Seconds a connection may stay idle (libmicrohttpd's own timeout, renewed by traffic).
        public var timeoutSeconds: UInt32 = 10
        /// Request line and headers must fit in this (libmicrohttpd's per-connection pool).
        public var memoryPerConnection = 32 * 1024

        public init() {}
    }

    private var server: OpaquePointer?
    private let loop: EventLoop
    private var watcher: EventSource?
    private var timer: EventSource?
    /// Runs libmicrohttpd again on the next loop turn, when it has work that needs no input.
    private var again: EventSource?
    private let respond: (Request) -> Answer
    private var admission: HTTPAdmission
    /// Ends connections whose request is late (``HTTPAdmission/expired(at:)``), every second.
    private var sweep: EventSource?
    /// The port it listens on.
    public let port: UInt16

    /// Serves on `fd` (a listening TCP socket, owned from now on).
    public init(listening fd: Int32, limits: Limits = Limits(), loop: EventLoop, respond: @escaping (Request) -> Answer) throws(PlatformError) {
        self.loop = loop
        self.respond = respond
        admission = HTTPAdmission(limits: limits.admission)
        let bound = ifm_http_bound_port(fd)
        port = bound > 0 ? UInt16(bound) : 0
        // libmicrohttpd's own limits only as a backstop: it refuses the newcomer, where
        // HTTPAdmission ends whoever has waited longest. No per-address limit of its own:
        // it would refuse a scraper on an address a trickler also uses.
        var cLimits = ifm_http_limits(
            max_connections: UInt32(limits.admission.total * 2), max_connections_per_ip: 0,
            timeout_seconds: limits.timeoutSeconds, memory_per_connection: limits.memoryPerConnection)
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard let started = ifm_http_start(fd, &cLimits, { context, request, exchange in
            let server = Unmanaged<MetricsServer>.fromOpaque(context!).takeUnretainedValue()
            server.handle(request!.pointee, exchange: exchange!)
        }, { context, peer, kind in
            Unmanaged<MetricsServer>.fromOpaque(context!).takeUnretainedValue().peerEvent(peer, kind)
        }, context) else {
            close(fd)
            throw PlatformError.system("MHD_start_daemon", errno)
        }
        server = started
        let epoll = ifm_http_fd(started)
        guard epoll >= 0 else { throw PlatformError.system("MHD_get_daemon_info", -epoll) }
        watcher = try loop.watch(fd: epoll, events: UInt32(EPOLLIN.rawValue)) { [unowned self] _ in self.run() }
        // Armed by scheduleTimeout whenever libmicrohttpd has a deadline.
        timer = try loop.after(.seconds(86_400)) { [unowned self] in self.run() }
        again = try loop.deferred { [unowned self] in self.run() }
        sweep = try loop.every(.seconds(1)) { [unowned self] in self.end(self.admission.expired(at: self.loop.now)) }
        scheduleTimeout()
    }

    private func peerEvent(_ fd: Int32, _ kind: ifm_http_peer_event_kind) {
        switch kind {
        case IFM_HTTP_PEER_OPENED: end(admission.opened(fd, address: Self.peerAddress(fd), at: loop.now))
        case IFM_HTTP_PEER_ANSWERED: admission.answered(fd, at: loop.now)
        default: admission.closed(fd)
        }
    }

    /// Ends connections by shutting their socket down: libmicrohttpd, which owns the
    /// descriptor, reads the end on its next run and closes it.
    private func end(_ fds: [Int32]) {
        guard !fds.isEmpty else { return }
        for fd in fds { shutdown(fd, Int32(SHUT_RDWR)) }
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
    public static func listen(on address: MetricsAddress) throws(PlatformError) -> Int32 {
        let fd = ifm_http_listen(address.host, address.port)
        guard fd >= 0 else {
            let kind: PlatformError.Kind = -fd == EADDRINUSE ? .unavailable : -fd == EACCES ? .noPermission : .configuration
            throw PlatformError(kind, "cannot listen for metrics on \(address): \(Errno(-fd).description)",
                              call: "bind", errno: -fd)
        }
        return fd
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

    private func handle(_ request: ifm_http_request, exchange: OpaquePointer) {
        admission.requested(request.fd)
        let answer = respond(Request(
            method: request.method.map { String(cString: $0) } ?? "",
            path: request.url.map { String(cString: $0) } ?? "",
            accept: request.accept.map { String(cString: $0) },
            acceptEncoding: request.accept_encoding.map { String(cString: $0) }))
        // ifm_http_answer copies the body and headers, so the pointers need only live here.
        answer.contentType.withCString { contentType in
            withOptionalCString(answer.encoding) { encoding in
                withOptionalCString(answer.allow) { allow in
                    answer.body.withUnsafeBufferPointer { body in
                        var response = ifm_http_response(
                            status: answer.status, content_type: contentType, content_encoding: encoding, allow: allow,
                            body: body.baseAddress, body_length: body.count)
                        ifm_http_answer(exchange, &response)
                    }
                }
            }
        }
    }
}

private func withOptionalCString<T>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> T) -> T {
    guard let text else { return body(nil) }
    return text.withCString { body($0) }
}
