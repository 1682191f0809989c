import IfMeterPlatform

/// Which connections of the metrics endpoint to end, so that clients who connect and never
/// finish a request (a slowloris trickling a header line every 2 s, from as many loopback
/// addresses as it likes) cannot keep a scraper out.
///
/// Every connection is let in, and every one counts, those being answered too:
/// - a request must be complete `requestTimeout` after the connection opened or was last
///   answered (a whole-request deadline: bytes trickled do not renew it);
/// - past `perAddress` connections from one address, or `total` in all, one gives way: the
///   oldest still *waiting* for its request (no complete headers since it opened or since its
///   last answer); else the one being answered longest (a reader too slow for its answer, or a
///   client that loads page after page), a scrape of the reserved path (`/metrics`) only when
///   every other is one; else the newcomer itself.
/// So a scraper that sends its request at once (Prometheus does) is answered unless more than
/// `total` connections newer than it are opened before its headers arrive, however many slow
/// readers hold answers.
public struct HTTPAdmission {
    public struct Limits: Equatable {
        public var total: Int
        public var perAddress: Int
        public var requestTimeout: Duration

        public init(total: Int = 32, perAddress: Int = 8, requestTimeout: Duration = .seconds(5)) {
            (self.total, self.perAddress, self.requestTimeout) = (total, perAddress, requestTimeout)
        }
    }

    public struct Peer: Equatable {
        public var address: String
        /// When it began waiting for its current request; nil while a request is answered.
        public var waitingSince: UInt64?
        /// When its current request began to be answered; nil while it waits.
        public var answeringSince: UInt64?
        /// Its request is for the reserved path: it is never ended to make room.
        public var reserved = false
    }

    public var limits: Limits
    private(set) var peers: [Int32: Peer] = [:]

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// A connection opened; returns the connections to end now.
    public mutating func opened(_ fd: Int32, address: String, at now: UInt64) -> [Int32] {
        peers[fd] = Peer(address: address, waitingSince: now)
        var ended: [Int32] = []
        if peers.values.filter({ $0.address == address }).count > limits.perAddress {
            ended.append(end(givingWay(to: fd) { $0.address == address }))
        }
        if peers.count > limits.total, peers[fd] != nil {
            ended.append(end(givingWay(to: fd) { _ in true }))
        }
        return ended
    }

    /// Its request's headers are complete: it no longer waits, and is answered from now;
    /// `reserved` for a scrape of the reserved path.
    public mutating func requested(_ fd: Int32, reserved: Bool = false, at now: UInt64) {
        peers[fd]?.waitingSince = nil
        peers[fd]?.answeringSince = now
        peers[fd]?.reserved = reserved
    }

    /// Its request was answered: it waits for the next from now.
    public mutating func answered(_ fd: Int32, at now: UInt64) {
        peers[fd]?.waitingSince = now
        peers[fd]?.answeringSince = nil
        peers[fd]?.reserved = false
    }

    public mutating func closed(_ fd: Int32) {
        peers[fd] = nil
    }

    /// Connections whose request is not complete by the deadline; they are forgotten here.
    public mutating func expired(at now: UInt64) -> [Int32] {
        let late = peers.filter { $0.value.waitingSince.map { now &- $0 >= EventLoop.microseconds(limits.requestTimeout) } ?? false }.keys
        return late.sorted().map { end($0) }
    }

    /// Who makes room for `newcomer` among the connections that match: the oldest other one
    /// waiting for its request, else the one answered longest (a reserved-path scrape last:
    /// anyone may ask for `/metrics` and read slowly, so being one cannot keep a slot), else the
    /// newcomer.
    private func givingWay(to newcomer: Int32, where matches: (Peer) -> Bool) -> Int32 {
        let others = peers.filter { $0.key != newcomer && matches($0.value) }
        let waiting = others.filter { $0.value.waitingSince != nil }
            .min { ($0.value.waitingSince!, $0.key) < ($1.value.waitingSince!, $1.key) }?.key
        let answered = others.filter { $0.value.answeringSince != nil }
            .min { ($0.value.reserved ? 1 : 0, $0.value.answeringSince!, $0.key) < ($1.value.reserved ? 1 : 0, $1.value.answeringSince!, $1.key) }?.key
        return waiting ?? answered ?? newcomer
    }

    private mutating func end(_ fd: Int32) -> Int32 {
        peers[fd] = nil
        return fd
    }
}
