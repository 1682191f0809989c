import IfMeterPlatform

/// Which connections of the metrics endpoint to end, so that clients who connect and never
/// finish a request (a slowloris trickling a header line every 2 s, from as many loopback
/// addresses as it likes) cannot keep a scraper out.
///
/// Every connection is let in; a connection still *waiting* for its request (no complete
/// headers since it opened or since its last answer) is the one that gives way:
/// - a request must be complete `requestTimeout` after the connection opened or was last
///   answered (a whole-request deadline: bytes trickled do not renew it);
/// - past `perAddress` connections from one address, or `total` in all, the oldest waiting one
///   is ended (the newcomer itself, if nothing else waits).
/// So a scraper that sends its request at once (Prometheus does) is answered unless more than
/// `total` connections newer than it are opened before its headers arrive.
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
        if peers.values.filter({ $0.address == address }).count > limits.perAddress,
           let oldest = oldestWaiting(where: { $0.address == address }) {
            ended.append(end(oldest))
        }
        if peers.count > limits.total, let oldest = oldestWaiting(where: { _ in true }) {
            ended.append(end(oldest))
        }
        return ended
    }

    /// Its request's headers are complete: it no longer waits.
    public mutating func requested(_ fd: Int32) {
        peers[fd]?.waitingSince = nil
    }

    /// Its request was answered: it waits for the next from now.
    public mutating func answered(_ fd: Int32, at now: UInt64) {
        peers[fd]?.waitingSince = now
    }

    public mutating func closed(_ fd: Int32) {
        peers[fd] = nil
    }

    /// Connections whose request is not complete by the deadline; they are forgotten here.
    public mutating func expired(at now: UInt64) -> [Int32] {
        let late = peers.filter { $0.value.waitingSince.map { now &- $0 >= EventLoop.microseconds(limits.requestTimeout) } ?? false }.keys
        return late.sorted().map { end($0) }
    }

    private func oldestWaiting(where matches: (Peer) -> Bool) -> Int32? {
        peers.filter { $0.value.waitingSince != nil && matches($0.value) }
            .min { ($0.value.waitingSince!, $0.key) < ($1.value.waitingSince!, $1.key) }?.key
    }

    private mutating func end(_ fd: Int32) -> Int32 {
        peers[fd] = nil
        return fd
    }
}
