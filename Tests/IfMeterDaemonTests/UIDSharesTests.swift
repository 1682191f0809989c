@testable import IfMeterDaemon
import IfMeterWire
import Testing

@Suite("UIDShares")
struct UIDSharesTests {
    @Test("large answers wait while their uid holds the limit unread, and come back when it reads")
    func unreadLimit() {
        var shares = UIDShares(unreadLimit: 1000)
        var admitted = shares.admit(.interfaces, fd: 5, uid: 1000)
        #expect(admitted)
        var woken = shares.unreadChanged(by: 1200, uid: 1000)
        #expect(woken.isEmpty)
        admitted = shares.admit(.interfaces, fd: 6, uid: 1000)
        #expect(!admitted)
        admitted = shares.admit(.query, fd: 7, uid: 1000)
        #expect(!admitted)
        admitted = shares.admit(.status, fd: 6, uid: 1000)
        #expect(admitted, "a small answer never waits")
        admitted = shares.admit(.interfaces, fd: 8, uid: 0)
        #expect(admitted, "another uid is not held back")
        woken = shares.unreadChanged(by: -100, uid: 1000)
        #expect(woken.isEmpty, "still at the limit")
        woken = shares.unreadChanged(by: -101, uid: 1000)
        #expect(woken == [6, 7], "in the order they began to wait")
        admitted = shares.admit(.interfaces, fd: 6, uid: 1000)
        #expect(admitted)
        #expect(shares.unreadBytes(of: 1000) == 999)
        woken = shares.unreadChanged(by: -999, uid: 1000)
        #expect(woken.isEmpty && shares.unreadBytes(of: 1000) == 0)
    }

    @Test("one answer at a time off the loop per uid; its own connection and other uids go on")
    func oneStoreAnswerPerUID() {
        var shares = UIDShares(unreadLimit: 1 << 20)
        shares.startBuilding(fd: 5, uid: 1000)
        var admitted = shares.admit(.usage, fd: 6, uid: 1000)
        #expect(!admitted)
        admitted = shares.admit(.events, fd: 7, uid: 1000)
        #expect(!admitted)
        admitted = shares.admit(.status, fd: 7, uid: 1000)
        #expect(admitted, "answered on the loop")
        admitted = shares.admit(.query, fd: 5, uid: 1000)
        #expect(admitted)
        admitted = shares.admit(.query, fd: 9, uid: 0)
        #expect(admitted)
        var woken = shares.finishBuilding(fd: 9, uid: 1000)
        #expect(woken.isEmpty, "not the one building")
        shares.closed(fd: 7, uid: 1000)
        woken = shares.finishBuilding(fd: 5, uid: 1000)
        #expect(woken == [6])
        admitted = shares.admit(.usage, fd: 6, uid: 1000)
        #expect(admitted)
    }

    @Test("a new limit wakes every waiting connection to try again")
    func reload() {
        var shares = UIDShares(unreadLimit: 10)
        _ = shares.unreadChanged(by: 50, uid: 1)
        _ = shares.unreadChanged(by: 50, uid: 2)
        var admitted = shares.admit(.interfaces, fd: 3, uid: 1)
        #expect(!admitted)
        admitted = shares.admit(.interfaces, fd: 3, uid: 1)
        #expect(!admitted, "counted once however often it asks")
        admitted = shares.admit(.metrics, fd: 4, uid: 2)
        #expect(!admitted)
        let woken = shares.changeLimit(to: 100)
        #expect(woken == [3, 4])
        admitted = shares.admit(.interfaces, fd: 3, uid: 1)
        #expect(admitted)
    }

    @Test("what is answered off the loop, apart from forget, may answer large", arguments: Command.allCases)
    func classification(command: Command) {
        if command.isAnsweredOffLoop && command != .forget {
            #expect(command.mayAnswerLarge)
        }
    }
}
