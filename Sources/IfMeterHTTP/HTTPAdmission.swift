import IfMeterPlatform

/// Which connections of the HTTP listener to end, so that clients who connect and never
/// finish a request (a slowloris trickling a header line every 2 s, from as many loopback
/// addresses as it likes), read their answers slowly, or reconnect as fast as they are ended
/// cannot keep a scraper out.
///
/// Every connection is let in, and every one counts, those being answered too:
/// - a request must be complete `requestTimeout` after the connection opened or was last
///   answered (a whole-request deadline: bytes trickled do not renew it), and its answer sent
///   `answerTimeout` after it was made (a whole-answer deadline: a reader taking its answer a
///   byte at a time holds it no longer; the time its answer waited to be made is the
///   daemon's, and does not count);
/// - while one address has more than `perAddress` connections, or all more than `total`, the
///   connections that match give way one by one: the oldest still *waiting* for its request
///   (no complete headers since it opened or since its last answer) for `requestGrace` or
///   longer; else the one whose answer has been sent longest (a reader too slow for it); else
///   the one that asked last of those whose answer is still being made (so the work for
///   those that asked first is not thrown away, and a client that reconnects as soon as it is
///   ended ends only itself); a scrape of the reserved path (`/metrics`) only when every other
///   is one. A connection that has just opened is judged once its request is read, or
///   its grace is over (at the next ``expired(at:)``). Past six times the total, a connect
///   flood, one already in gives way as the newcomer opens: the first in that order with no
///   grace, a request being made included.
/// So a scraper that sends its request at once (Prometheus does) is answered however many slow
/// readers hold answers and however fast they reconnect when ended. Judged as they opened, the
/// newcomers of one busy turn of the loop were all still unread, and a scraper among them was
/// ended, or refused, before its request was seen.
public struct HTTPAdmission {
    public struct Limits: Equatable {
        public var total: Int
        public var perAddress: Int
        public var requestTimeout: Duration
        public var answerTimeout: Duration
        public var requestGrace: Duration

        public init(total: Int = 32, perAddress: Int = 8, requestTimeout: Duration = .seconds(5),
                    answerTimeout: Duration = .seconds(30), requestGrace: Duration = .seconds(1)) {
            (self.total, self.perAddress, self.requestTimeout) = (total, perAddress, requestTimeout)
            (self.answerTimeout, self.requestGrace) = (answerTimeout, requestGrace)
        }
    }

    public struct Peer: Equatable {
        public var address: String
        /// When it began waiting for its current request; nil while a request is answered.
        public var waitingSince: UInt64?
        /// When its current request began to be answered; nil while it waits.
        public var answeringSince: UInt64?
        /// When its answer was handed over to be sent; nil until then.
        public var sendingSince: UInt64?
        /// Its request is for the reserved path: it is never ended to make room.
        public var reserved = false
    }

    /// Past this many times the total, a connect flood: the grace is not waited for. Far above
    /// what requests and slow readers keep open (judged by their requests, they stay near the
    /// total), below libmicrohttpd's table (``HTTPServer``: eight times the total), which a
    /// flood would otherwise fill.
    public static let floodFactor = 6

    public var limits: Limits
    private(set) var peers: [Int32: Peer] = [:]

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// A connection opened; returns the connections to end now.
    public mutating func opened(_ fd: Int32, address: String, at now: UInt64) -> [Int32] {
        peers[fd] = Peer(address: address, waitingSince: now)
        if peers.count > Self.floodFactor * limits.total {
            // Flooded: no newcomer waits for a judgement; one already in, if any, makes room.
            return [end(givingWay(at: now, waitingForNewcomers: false) { key, _ in key != fd } ?? fd)]
        }
        return trim(around: address, at: now)
    }

    /// Its request's headers are complete: it no longer waits, and is answered from now;
    /// `reserved` for a scrape of the reserved path. Returns the connections to end now (it
    /// may be one).
    public mutating func requested(_ fd: Int32, reserved: Bool = false, at now: UInt64) -> [Int32] {
        guard let address = peers[fd]?.address else { return [] }
        peers[fd]?.waitingSince = nil
        peers[fd]?.answeringSince = now
        peers[fd]?.reserved = reserved
        return trim(around: address, at: now)
    }

    /// Whether one more connection from `address` would pass its share or the total.
    public func overLimit(adding address: String) -> Bool {
        peers.count >= limits.total || peers.values.filter { $0.address == address }.count >= limits.perAddress
    }

    /// Whether `fd`'s address, or everyone, has more connections than allowed.
    public func overLimit(around fd: Int32) -> Bool {
        guard let address = peers[fd]?.address else { return false }
        return peers.count > limits.total || peers.values.filter { $0.address == address }.count > limits.perAddress
    }

    /// Its answer is made, and is being sent from now.
    public mutating func sending(_ fd: Int32, at now: UInt64) {
        peers[fd]?.sendingSince = now
    }

    /// Its request was answered: it waits for the next from now.
    public mutating func answered(_ fd: Int32, at now: UInt64) {
        peers[fd]?.waitingSince = now
        peers[fd]?.answeringSince = nil
        peers[fd]?.sendingSince = nil
        peers[fd]?.reserved = false
    }

    public mutating func closed(_ fd: Int32) {
        peers[fd] = nil
    }

    /// Connections whose request is not complete, or whose answer is not sent, by its
    /// deadline, and those that give way where a limit is still exceeded once the newcomers'
    /// grace is over; they are forgotten here.
    public mutating func expired(at now: UInt64) -> [Int32] {
        let late = peers.filter { _, peer in
            if let since = peer.waitingSince { return now &- since >= EventLoop.microseconds(limits.requestTimeout) }
            if let since = peer.sendingSince { return now &- since >= EventLoop.microseconds(limits.answerTimeout) }
            return false
        }.keys
        var ended = late.sorted().map { end($0) }
        for address in Set(peers.values.map(\.address)).sorted() { ended += trim(around: address, at: now) }
        return ended
    }

    /// Ends connections while `address` has more than its share or everyone more than the
    /// total, each the one that gives way; none while only newcomers in their grace are left
    /// to choose from.
    private mutating func trim(around address: String, at now: UInt64) -> [Int32] {
        var ended: [Int32] = []
        while peers.values.filter({ $0.address == address }).count > limits.perAddress,
              let fd = givingWay(at: now, where: { $1.address == address }) {
            ended.append(end(fd))
        }
        while peers.count > limits.total, let fd = givingWay(at: now, where: { _, _ in true }) {
            ended.append(end(fd))
        }
        return ended
    }

    /// Who gives way among the connections that match: the oldest waiting for its request
    /// past the grace; else the one whose answer has been sent longest; else the one that
    /// asked last of those whose answer is being made, unless a newcomer will ask after it; a
    /// reserved-path scrape only when every
    /// other is one (anyone may ask for `/metrics` and read slowly, so being one cannot keep a
    /// slot); nil when the others are newcomers in their grace. Flooded (`waitingForNewcomers`
    /// false), there is no grace: the oldest waiting goes even if it opened a moment ago (a
    /// connect flood keeps more newcomers in their grace than the table holds), and a request
    /// being made gives way even while newcomers have yet to ask.
    private func givingWay(at now: UInt64, waitingForNewcomers: Bool = true, where matches: (Int32, Peer) -> Bool) -> Int32? {
        let matching = peers.filter { matches($0.key, $0.value) }
        let grace = waitingForNewcomers ? EventLoop.microseconds(limits.requestGrace) : 0
        if let waiting = matching.filter({ $0.value.waitingSince.map { now &- $0 >= grace } ?? false })
            .min(by: { ($0.value.waitingSince!, $0.key) < ($1.value.waitingSince!, $1.key) }) {
            return waiting.key
        }
        let answering = matching.filter { $0.value.answeringSince != nil }
        let plain = answering.filter { !$0.value.reserved }
        if let sent = plain.filter({ $0.value.sendingSince != nil })
            .min(by: { ($0.value.sendingSince!, $0.key) < ($1.value.sendingSince!, $1.key) }) {
            return sent.key
        }
        // A newcomer in its grace will ask after all of them: it gives way itself, if it must,
        // once it asks, and no work already begun is thrown away for it.
        let newcomers = waitingForNewcomers && matching.contains { $0.value.waitingSince != nil }
        if !newcomers, let latest = plain.max(by: { ($0.value.answeringSince!, $0.key) < ($1.value.answeringSince!, $1.key) }) {
            return latest.key
        }
        guard answering.count == matching.count else { return nil }
        return answering.min { ($0.value.answeringSince!, $0.key) < ($1.value.answeringSince!, $1.key) }?.key
    }

    private mutating func end(_ fd: Int32) -> Int32 {
        peers[fd] = nil
        return fd
    }
}
