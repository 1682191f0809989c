#if canImport(Glibc)
import Glibc
#endif

/// Who may connect now: a per-uid limit (dbus-daemon's `max_connections_per_user`) and slots
/// reserved for admins, so no local user, however many connections it opens, locks out root
/// or the admin group. A plain value: the server asks it at accept and tells it at close.
struct Admission: Hashable, Sendable {
    struct Limits: Hashable, Sendable {
        /// All clients together.
        var maxClients: Int
        /// One non-admin uid's clients.
        var maxClientsPerUID: Int
        /// Slots of `maxClients` only admins may take.
        var adminReserved: Int
    }

    enum Verdict: Hashable, Sendable {
        case admit
        /// Refused, with the reason to tell the peer.
        case refuse(String)
    }

    var limits: Limits
    private(set) var total = 0
    private(set) var nonAdmins = 0
    private(set) var perUID: [uid_t: Int] = [:]

    init(limits: Limits) {
        self.limits = limits
    }

    /// Whether a peer of `uid` may connect now. Admins are bounded only by `maxClients`.
    func verdict(uid: uid_t, isAdmin: Bool) -> Verdict {
        guard total < limits.maxClients else {
            return .refuse("ifmeterd already serves \(limits.maxClients) clients (max_clients); try again later")
        }
        if isAdmin { return .admit }
        if perUID[uid, default: 0] >= limits.maxClientsPerUID {
            return .refuse("uid \(uid) already has \(limits.maxClientsPerUID) connections (max_clients_per_uid); close one first")
        }
        if nonAdmins >= limits.maxClients - limits.adminReserved {
            return .refuse("the slots open to every user are taken (max_clients less admin_reserved_clients); try again later")
        }
        return .admit
    }

    mutating func admit(uid: uid_t, isAdmin: Bool) {
        total += 1
        if !isAdmin {
            nonAdmins += 1
            perUID[uid, default: 0] += 1
        }
    }

    mutating func release(uid: uid_t, isAdmin: Bool) {
        total -= 1
        if !isAdmin {
            nonAdmins -= 1
            let left = perUID[uid, default: 1] - 1
            perUID[uid] = left > 0 ? left : nil
        }
    }
}
