#if canImport(Glibc)
import Glibc
#endif
import IfMeterWire

/// What each uid's connections hold of the daemon's memory in answers. A client's next request
/// waits until it has read its last answer, but one uid may have many connections (64 for a
/// non-admin), each holding one unread answer of up to tens of megabytes. So, per uid: a
/// request whose answer may be large waits while the uid's connections hold `unreadLimit` or
/// more unread bytes, and a request answered off the loop (from the store, or `interfaces`)
/// waits while another connection of the uid has an answer being built there. A uid only ever waits for its own connections, and
/// its waiting connections are woken in the order they began to wait, so none is passed over
/// for long.
struct UIDShares {
    private(set) var unreadLimit: Int
    private var unread: [uid_t: Int] = [:]
    private var building: [uid_t: Int32] = [:]
    private var waiting: [uid_t: [Int32]] = [:]

    init(unreadLimit: Int) {
        self.unreadLimit = unreadLimit
    }

    /// Whether `command` from connection `fd` of `uid` may run now. If not, `fd` is noted, and
    /// comes back from the call that makes room.
    mutating func admit(_ command: Command, fd: Int32, uid: uid_t) -> Bool {
        let tooMuchUnread = command.mayAnswerLarge && unread[uid, default: 0] >= unreadLimit
        let busy = command.isAnsweredOffLoop && building[uid].map { $0 != fd } ?? false
        guard tooMuchUnread || busy else { return true }
        if !waiting[uid, default: []].contains(fd) { waiting[uid, default: []].append(fd) }
        return false
    }

    /// `fd`'s answer is being built off the loop.
    mutating func startBuilding(fd: Int32, uid: uid_t) {
        building[uid] = fd
    }

    /// `fd`'s answer built off the loop came back (sent, or dropped if `fd` closed
    /// meanwhile). Returns the connections of `uid` to try again.
    mutating func finishBuilding(fd: Int32, uid: uid_t) -> [Int32] {
        guard building[uid] == fd else { return [] }
        building[uid] = nil
        return waiting.removeValue(forKey: uid) ?? []
    }

    /// A connection of `uid` queued (positive) or sent or dropped (negative) `delta` bytes.
    /// Returns the connections of `uid` to try again once its unread bytes fall below the limit.
    mutating func unreadChanged(by delta: Int, uid: uid_t) -> [Int32] {
        let before = unread[uid, default: 0]
        let after = before + delta
        unread[uid] = after == 0 ? nil : after
        guard before >= unreadLimit, after < unreadLimit else { return [] }
        return waiting.removeValue(forKey: uid) ?? []
    }

    /// Connection `fd` of `uid` closed: it waits for nothing any more.
    mutating func closed(fd: Int32, uid: uid_t) {
        waiting[uid]?.removeAll { $0 == fd }
        if waiting[uid]?.isEmpty == true { waiting[uid] = nil }
    }

    /// A new limit (a reload): every waiting connection is returned, to try again under it.
    mutating func changeLimit(to limit: Int) -> [Int32] {
        unreadLimit = limit
        defer { waiting = [:] }
        return waiting.keys.sorted().flatMap { waiting[$0]! }
    }

    /// Unread bytes held by `uid`'s connections.
    func unreadBytes(of uid: uid_t) -> Int { unread[uid, default: 0] }
}
