@testable import IfMeterServer
#if canImport(Glibc)
import Glibc
#endif
import IfMeterRequests
import IfMeterWire
import IfMeterTestSupport
import Testing

/// The protocol's commands, not the test support's child processes.
typealias Command = IfMeterWire.Command

/// What `command` costs, from the daemon's one table.
private func cost(_ command: Command) -> RequestCost {
    let policy = command.policy
    return RequestCost(largeAnswer: policy.largeAnswer, offLoop: policy.offLoop)
}

@Suite("UIDShares", .ownThread, .timeLimit(.minutes(3)))
struct UIDSharesTests {
    @Test("large answers wait while their uid holds the limit unread, and come back when it reads")
    func unreadLimit() {
        var shares = UIDShares(unreadLimit: 1000)
        var admitted = shares.admit(cost(.interfaces), fd: 5, uid: 1000)
        #expect(admitted)
        var woken = shares.unreadChanged(by: 1200, uid: 1000)
        #expect(woken.isEmpty)
        admitted = shares.admit(cost(.interfaces), fd: 6, uid: 1000)
        #expect(!admitted)
        admitted = shares.admit(cost(.query), fd: 7, uid: 1000)
        #expect(!admitted)
        admitted = shares.admit(cost(.status), fd: 6, uid: 1000)
        #expect(admitted, "a small answer never waits")
        admitted = shares.admit(cost(.interfaces), fd: 8, uid: 0)
        #expect(admitted, "another uid is not held back")
        woken = shares.unreadChanged(by: -100, uid: 1000)
        #expect(woken.isEmpty, "still at the limit")
        woken = shares.unreadChanged(by: -101, uid: 1000)
        #expect(woken == [6, 7], "in the order they began to wait")
        admitted = shares.admit(cost(.interfaces), fd: 6, uid: 1000)
        #expect(admitted)
        #expect(shares.unreadBytes(of: 1000) == 999)
        woken = shares.unreadChanged(by: -999, uid: 1000)
        #expect(woken.isEmpty && shares.unreadBytes(of: 1000) == 0)
    }

    @Test("one answer at a time off the loop per uid; its own connection and other uids go on")
    func oneStoreAnswerPerUID() {
        var shares = UIDShares(unreadLimit: 1 << 20)
        shares.startBuilding(fd: 5, uid: 1000)
        var admitted = shares.admit(cost(.usage), fd: 6, uid: 1000)
        #expect(!admitted)
        admitted = shares.admit(cost(.events), fd: 7, uid: 1000)
        #expect(!admitted)
        admitted = shares.admit(cost(.status), fd: 7, uid: 1000)
        #expect(admitted, "answered on the loop")
        admitted = shares.admit(cost(.query), fd: 5, uid: 1000)
        #expect(admitted)
        admitted = shares.admit(cost(.query), fd: 9, uid: 0)
        #expect(admitted)
        var woken = shares.finishBuilding(fd: 9, uid: 1000)
        #expect(woken.isEmpty, "not the one building")
        shares.closed(fd: 7, uid: 1000)
        woken = shares.finishBuilding(fd: 5, uid: 1000)
        #expect(woken == [6])
        admitted = shares.admit(cost(.usage), fd: 6, uid: 1000)
        #expect(admitted)
    }

    @Test("a new limit wakes every waiting connection to try again")
    func reload() {
        var shares = UIDShares(unreadLimit: 10)
        _ = shares.unreadChanged(by: 50, uid: 1)
        _ = shares.unreadChanged(by: 50, uid: 2)
        var admitted = shares.admit(cost(.interfaces), fd: 3, uid: 1)
        #expect(!admitted)
        admitted = shares.admit(cost(.interfaces), fd: 3, uid: 1)
        #expect(!admitted, "counted once however often it asks")
        admitted = shares.admit(cost(.metrics), fd: 4, uid: 2)
        #expect(!admitted)
        let woken = shares.changeLimit(to: 100)
        #expect(woken == [3, 4])
        admitted = shares.admit(cost(.interfaces), fd: 3, uid: 1)
        #expect(admitted)
    }

    @Test("what is answered off the loop, apart from forget and alias, may answer large; what changes state is admin only",
          arguments: Command.allCases)
    func classification(command: Command) {
        let policy = command.policy
        if policy.offLoop && command != .forget && command != .alias {
            #expect(policy.largeAnswer)
        }
        #expect(policy.adminOnly == [.reload, .forget, .importHistory, .alias].contains(command))
    }

    @Test("many uids together: past the totals a non-admin waits whatever its uid, an admin never; room wakes them in order")
    func totalsAcrossUIDs() {
        var shares = UIDShares(unreadLimit: 1000)
        // Four uids build answers off the loop: the totals' limit.
        for uid in uid_t(2000)..<2004 {
            let admitted1 = shares.admit(cost(.usage), fd: Int32(uid), uid: uid)
            #expect(admitted1)
            shares.startBuilding(fd: Int32(uid), uid: uid)
        }
        let admitted2 = shares.admit(cost(.usage), fd: 50, uid: 2010)
        #expect(!admitted2, "a fifth uid waits")
        let admitted3 = shares.admit(cost(.query), fd: 51, uid: 2011)
        #expect(!admitted3)
        let admitted4 = shares.admit(cost(.status), fd: 52, uid: 2012)
        #expect(admitted4, "a small answer on the loop never waits")
        let admitted5 = shares.admit(cost(.usage), fd: 53, uid: 0, isAdmin: true)
        #expect(admitted5, "an admin is not held back")
        shares.startBuilding(fd: 53, uid: 0, isAdmin: true)
        let woken6 = shares.finishBuilding(fd: 53, uid: 0, isAdmin: true)
        #expect(woken6.isEmpty, "an admin's answer makes no room for others")
        let woken7 = shares.finishBuilding(fd: 2000, uid: 2000)
        #expect(woken7 == [50, 51])
        let admitted8 = shares.admit(cost(.usage), fd: 50, uid: 2010)
        #expect(admitted8)

        // Unread bytes: four uids at 999 each hold less than 4 × 1000; one more byte fills it.
        var unread = UIDShares(unreadLimit: 1000)
        for uid in uid_t(3000)..<3004 {
            let woken = unread.unreadChanged(by: 999, uid: uid)
            #expect(woken.isEmpty)
        }
        let admitted9 = unread.admit(cost(.interfaces), fd: 60, uid: 3010)
        #expect(admitted9)
        let none = unread.unreadChanged(by: 4, uid: 3010)
        #expect(none.isEmpty)
        let admitted10 = unread.admit(cost(.interfaces), fd: 61, uid: 3011)
        #expect(!admitted10, "the totals are full though 3011 holds nothing")
        let admitted11 = unread.admit(cost(.interfaces), fd: 62, uid: 0, isAdmin: true)
        #expect(admitted11)
        unread.closed(fd: 61, uid: 3011)
        let admitted12 = unread.admit(cost(.metrics), fd: 63, uid: 3012)
        #expect(!admitted12)
        let woken = unread.unreadChanged(by: -4, uid: 3010)
        #expect(woken == [63], "the closed one is not woken")
    }
}
