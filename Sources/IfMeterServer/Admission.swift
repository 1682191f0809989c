#if canImport(Glibc)
import Glibc
#endif

/// Who may connect now: a per-uid limit (dbus-daemon's `max_connections_per_user`) and slots
/// reserved for admins, so no local user, however many connections it opens, locks out root
/// or the admin group. A plain value: the server asks it at accept and tells it at close.
///
/// Connections are also paced: a non-admin uid may open `connects.burst` at once and
/// `connects.perSecond` after that, and all non-admin uids together ten times as many. A uid
/// that connects, asks and closes as fast as it can otherwise kept its slots busy with new
/// requests, each parsed and answered, while root's connection waited behind them in the
/// kernel's listen queue; paced, the surplus costs an accept and a refusal.
public struct Admission: Hashable, Sendable {
    /// A token bucket: `burst` connections at once, refilled at `perSecond`.
    public struct Pace: Hashable, Sendable {
        public var perSecond: Double = 100
        public var burst: Double = 200
    }

    private struct Bucket: Hashable, Sendable {
        public var tokens: Double
        public var at: UInt64

        /// Takes one token at `now` (µs) if there is one, refilled at `pace` since the last.
        public mutating func take(_ pace: Pace, at now: UInt64) -> Bool {
            tokens = min(pace.burst, tokens + Double(now &- at) / 1_000_000 * pace.perSecond)
            at = now
            guard tokens >= 1 else { return false }
            tokens -= 1
            return true
        }
    }

    public struct Limits: Hashable, Sendable {
        /// All clients together.
        public var maxClients: Int
        /// One non-admin uid's clients.
        public var maxClientsPerUID: Int
        /// Slots of `maxClients` only admins may take.
        public var adminReserved: Int

        public init(maxClients: Int, maxClientsPerUID: Int, adminReserved: Int) {
            (self.maxClients, self.maxClientsPerUID, self.adminReserved) = (maxClients, maxClientsPerUID, adminReserved)
        }
    }

    public enum Verdict: Hashable, Sendable {
        case admit
        /// Refused, with the reason to tell the peer.
        case refuse(String)
    }

    public var limits: Limits
    public var connects = Pace()
    private(set) var total = 0
    private(set) var nonAdmins = 0
    private(set) var perUID: [uid_t: Int] = [:]
    private var paces: [uid_t: Bucket] = [:]
    private var othersPace: Bucket?

    public init(limits: Limits) {
        self.limits = limits
    }

    /// Whether a peer of `uid` may connect now (`now` in µs, monotonic). Admins are bounded
    /// only by `maxClients`.
    public mutating func verdict(uid: uid_t, isAdmin: Bool, at now: UInt64) -> Verdict {
        guard total < limits.maxClients else {
            return .refuse("ifmeterd already serves \(limits.maxClients) clients (max_clients); try again later")
        }
        if isAdmin { return .admit }
        if paces.count > 4096 { paces = paces.filter { $0.value.tokens + Double(now &- $0.value.at) / 1_000_000 * connects.perSecond < connects.burst } }
        var own = paces[uid] ?? Bucket(tokens: connects.burst, at: now)
        let ownTaken = own.take(connects, at: now)
        paces[uid] = own
        guard ownTaken else {
            return .refuse("uid \(uid) connects faster than \(Int(connects.perSecond)) a second; try again later")
        }
        let all = Pace(perSecond: connects.perSecond * 10, burst: connects.burst * 10)
        var others = othersPace ?? Bucket(tokens: all.burst, at: now)
        let othersTaken = others.take(all, at: now)
        othersPace = others
        guard othersTaken else {
            return .refuse("users other than admins connect faster than \(Int(all.perSecond)) a second; try again later")
        }
        if perUID[uid, default: 0] >= limits.maxClientsPerUID {
            return .refuse("uid \(uid) already has \(limits.maxClientsPerUID) connections (max_clients_per_uid); close one first")
        }
        if nonAdmins >= limits.maxClients - limits.adminReserved {
            return .refuse("the slots open to every user are taken (max_clients less admin_reserved_clients); try again later")
        }
        return .admit
    }

    public mutating func admit(uid: uid_t, isAdmin: Bool) {
        total += 1
        if !isAdmin {
            nonAdmins += 1
            perUID[uid, default: 0] += 1
        }
    }

    public mutating func release(uid: uid_t, isAdmin: Bool) {
        total -= 1
        if !isAdmin {
            nonAdmins -= 1
            let left = perUID[uid, default: 1] - 1
            perUID[uid] = left > 0 ? left : nil
        }
    }
}
