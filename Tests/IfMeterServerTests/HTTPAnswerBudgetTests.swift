import IfMeterHTTP
import IfMeterTestSupport
import Testing

@Suite("HTTPAnswerBudget", .ownThread, .timeLimit(.minutes(3)))
struct HTTPAnswerBudgetTests {
    /// 32 slow readers of API answers once held 645 MiB: nothing bounded what answers not yet
    /// sent may hold, nor how many were made at once.
    @Test("answers are made two at a time here; the next waits, in the order asked, until one comes back")
    func makingLimit() {
        var budget = HTTPAnswerBudget(heldLimit: 1000, makingLimit: 2)
        let admitted1 = budget.admit(1)
        #expect(admitted1)
        let admitted2 = budget.admit(2)
        #expect(admitted2)
        let admitted3 = budget.admit(3)
        #expect(!admitted3)
        let admitted4 = budget.admit(4)
        #expect(!admitted4)
        #expect(budget.waiting == [3, 4])
        let started5 = budget.made()
        #expect(started5 == [3], "the first to wait goes first")
        #expect(budget.making == 2)
        let started6 = budget.made()
        #expect(started6 == [4])
        let started7 = budget.made()
        #expect(started7.isEmpty && budget.making == 1)
    }

    @Test("while unsent answers hold the limit, no answer is started; room is made as libmicrohttpd lets bytes go")
    func heldLimit() {
        var budget = HTTPAnswerBudget(heldLimit: 1000, makingLimit: 4)
        let admitted8 = budget.admit(1)
        #expect(admitted8)
        let started9 = budget.heldChanged(by: 999)
        #expect(started9.isEmpty)
        let started10 = budget.made()
        #expect(started10.isEmpty)
        let admitted11 = budget.admit(2)
        #expect(admitted11, "999 of 1000 held: room for one more")
        let started12 = budget.heldChanged(by: 600)
        #expect(started12.isEmpty)
        let started13 = budget.made()
        #expect(started13.isEmpty)
        let admitted14 = budget.admit(3)
        #expect(!admitted14, "1599 held")
        let admitted15 = budget.admit(4)
        #expect(!admitted15)
        let started16 = budget.heldChanged(by: -500)
        #expect(started16.isEmpty, "1099 held: still past the limit")
        let started17 = budget.heldChanged(by: -600)
        #expect(started17 == [3, 4], "499 held: both start, the limit counts answers held, not made")
        #expect(budget.making == 2)
    }

    @Test("a connection that closes while it waits is passed over, and a newcomer never goes before one that waits")
    func closedAndOrder() {
        var budget = HTTPAnswerBudget(heldLimit: 1000, makingLimit: 1)
        let admitted18 = budget.admit(1)
        #expect(admitted18)
        let admitted19 = budget.admit(2)
        #expect(!admitted19)
        let admitted20 = budget.admit(3)
        #expect(!admitted20)
        budget.closed(2)
        let started21 = budget.made()
        #expect(started21 == [3])
        let admitted22 = budget.admit(4)
        #expect(!admitted22)
        let admitted23 = budget.admit(4)
        #expect(!admitted23, "asked twice, waits once")
        #expect(budget.waiting == [4])
        let started24 = budget.made()
        #expect(started24 == [4])
        let started25 = budget.made()
        #expect(started25.isEmpty && budget.making == 0 && budget.waiting.isEmpty)
    }
}
