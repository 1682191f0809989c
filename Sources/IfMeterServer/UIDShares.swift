#if canImport(Glibc)
import Glibc
#endif

/// What each uid's connections hold of the daemon's memory in answers. A client's next request
/// waits until it has read its last answer, but one uid may have many connections (64 for a
/// non-admin), each holding one unread answer of up to tens of megabytes. So, per uid: a
/// request whose answer may be large waits while the uid's connections hold `unreadLimit` or
/// more unread bytes, and a request answered off the loop (from the store, or `interfaces`)
/// waits while another connection of the uid has an answer being built there. A uid only ever waits for its own connections, and
/// its waiting connections are woken in the order they began to wait, so none is passed over
/// for long.
///
/// Kernel uids are cheap to come by (Debian gives each user 65,536 subordinate ones), so the
/// non-admin uids together are bounded too: while they hold `totalUnreadLimit` unread, or have
/// `totalBuildingLimit` answers being built off the loop, a non-admin request of that kind
/// waits (in one queue, in order) whatever its uid. Admins are bounded per uid only: an admin
/// is never kept waiting by what others hold.
public struct UIDShares {
    private(set) var unreadLimit: Int
    /// Unread bytes all non-admin uids may hold together.
    public var totalUnreadLimit: Int { unreadLimit * 4 }
    /// Answers all non-admin uids may have built off the loop at once.
    public static let totalBuildingLimit = 4
    private var unread: [uid_t: Int] = [:]
    private var building: [uid_t: Int32] = [:]
    private var waiting: [uid_t: [Int32]] = [:]
    private var othersUnread = 0
    private var othersBuilding = 0
    /// Non-admin connections waiting for room in the totals, in the order they began to wait.
    private var waitingForTotals: [Int32] = []

    public init(unreadLimit: Int) {
        self.unreadLimit = unreadLimit
    }

    /// Whether a request of `cost` from connection `fd` of `uid` may run now. If not, `fd` is
    /// noted, and comes back from the call that makes room.
    public mutating func admit(_ cost: RequestCost, fd: Int32, uid: uid_t, isAdmin: Bool = false) -> Bool {
        let tooMuchUnread = cost.contains(.largeAnswer) && unread[uid, default: 0] >= unreadLimit
        let busy = cost.contains(.offLoop) && building[uid].map { $0 != fd } ?? false
        if tooMuchUnread || busy {
            if !waiting[uid, default: []].contains(fd) { waiting[uid, default: []].append(fd) }
            return false
        }
        guard !isAdmin else { return true }
        let totalUnread = cost.contains(.largeAnswer) && othersUnread >= totalUnreadLimit
        let totalBusy = cost.contains(.offLoop) && building[uid] != fd && othersBuilding >= Self.totalBuildingLimit
        guard totalUnread || totalBusy else { return true }
        if !waitingForTotals.contains(fd) { waitingForTotals.append(fd) }
        return false
    }

    /// `fd`'s answer is being built off the loop.
    public mutating func startBuilding(fd: Int32, uid: uid_t, isAdmin: Bool = false) {
        if !isAdmin && building[uid] == nil { othersBuilding += 1 }
        building[uid] = fd
    }

    /// `fd`'s answer built off the loop came back (sent, or dropped if `fd` closed
    /// meanwhile). Returns the connections to try again.
    public mutating func finishBuilding(fd: Int32, uid: uid_t, isAdmin: Bool = false) -> [Int32] {
        guard building[uid] == fd else { return [] }
        building[uid] = nil
        var woken = waiting.removeValue(forKey: uid) ?? []
        if !isAdmin {
            othersBuilding -= 1
            if othersBuilding == Self.totalBuildingLimit - 1 { woken += takeWaitingForTotals() }
        }
        return woken
    }

    /// A connection of `uid` queued (positive) or sent or dropped (negative) `delta` bytes.
    /// Returns the connections to try again once unread bytes fall below a limit.
    public mutating func unreadChanged(by delta: Int, uid: uid_t, isAdmin: Bool = false) -> [Int32] {
        let before = unread[uid, default: 0]
        let after = before + delta
        unread[uid] = after == 0 ? nil : after
        var woken = before >= unreadLimit && after < unreadLimit ? waiting.removeValue(forKey: uid) ?? [] : []
        if !isAdmin {
            let totalBefore = othersUnread
            othersUnread += delta
            if totalBefore >= totalUnreadLimit && othersUnread < totalUnreadLimit { woken += takeWaitingForTotals() }
        }
        return woken
    }

    /// Connection `fd` of `uid` closed: it waits for nothing any more.
    public mutating func closed(fd: Int32, uid: uid_t) {
        waiting[uid]?.removeAll { $0 == fd }
        if waiting[uid]?.isEmpty == true { waiting[uid] = nil }
        waitingForTotals.removeAll { $0 == fd }
    }

    /// A new limit (a reload): every waiting connection is returned, to try again under it.
    public mutating func changeLimit(to limit: Int) -> [Int32] {
        unreadLimit = limit
        defer { waiting = [:] }
        return waiting.keys.sorted().flatMap { waiting[$0]! } + takeWaitingForTotals()
    }

    private mutating func takeWaitingForTotals() -> [Int32] {
        defer { waitingForTotals = [] }
        return waitingForTotals
    }

    /// Unread bytes held by `uid`'s connections.
    public func unreadBytes(of uid: uid_t) -> Int { unread[uid, default: 0] }
}
