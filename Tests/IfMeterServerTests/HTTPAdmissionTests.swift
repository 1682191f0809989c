@testable import IfMeterHTTP
import IfMeterTestSupport
import Testing

@Suite("HTTPAdmission", .ownThread, .timeLimit(.minutes(3)))
struct HTTPAdmissionTests {
    let limits = HTTPAdmission.Limits(total: 4, perAddress: 2, requestTimeout: .seconds(5))

    @Test("a request not complete by the deadline is ended; trickled bytes do not renew it; an answer starts it again")
    func deadline() {
        var admission = HTTPAdmission(limits: limits)
        #expect(admission.opened(10, address: "127.0.0.2", at: 0).isEmpty)
        #expect(admission.opened(11, address: "127.0.0.3", at: 1_000_000).isEmpty)
        admission.requested(11, at: 2_000_000)
        admission.answered(11, at: 3_000_000)
        #expect(admission.expired(at: 4_999_999).isEmpty)
        #expect(admission.expired(at: 5_000_000) == [10])
        #expect(admission.expired(at: 7_999_999).isEmpty)
        #expect(admission.expired(at: 8_000_000) == [11])
        #expect(admission.peers.isEmpty)
    }

    @Test("one address past its share, or everyone past the total: the oldest still waiting gives way before any being answered")
    func sharesAndTotal() {
        var admission = HTTPAdmission(limits: limits)
        #expect(admission.opened(1, address: "a", at: 10).isEmpty)
        #expect(admission.opened(2, address: "a", at: 20).isEmpty)
        #expect(admission.opened(3, address: "a", at: 30) == [1], "a's oldest waiting")
        admission.requested(2, at: 35)
        #expect(admission.opened(4, address: "a", at: 40) == [3], "2 is being answered, so 3 goes")
        #expect(admission.opened(5, address: "b", at: 50).isEmpty)
        #expect(admission.opened(6, address: "c", at: 60).isEmpty)
        #expect(admission.opened(7, address: "d", at: 70) == [4], "past the total: the oldest waiting of all")
        admission.requested(5, at: 75)
        admission.requested(6, at: 76)
        admission.requested(7, at: 77)
        #expect(admission.opened(8, address: "e", at: 80) == [2], "nothing else waits: the one answered longest")
        admission.closed(6)
        #expect(admission.opened(9, address: "e", at: 90).isEmpty)
        #expect(Set(admission.peers.keys) == [5, 7, 8, 9])
    }

    /// Eight slow readers on 127.0.0.1 once shut out every scrape from there: they were being
    /// answered, so the newcomer (the scrape) was the one ended.
    @Test("slow readers being answered give way to a newcomer, the one answered longest first; a scrape of the reserved path only when all are")
    func answeredGiveWay() {
        var admission = HTTPAdmission(limits: limits)
        #expect(admission.opened(1, address: "127.0.0.1", at: 10).isEmpty)
        admission.requested(1, reserved: true, at: 11)
        #expect(admission.opened(2, address: "127.0.0.1", at: 20).isEmpty)
        admission.requested(2, at: 21)
        #expect(admission.opened(3, address: "127.0.0.1", at: 30) == [2], "the slow reader, not the scrape nor the newcomer")
        admission.requested(3, reserved: true, at: 31)
        #expect(admission.opened(4, address: "127.0.0.1", at: 40) == [1], "only scrapes are answered: the one answered longest goes, never the newcomer")
        admission.requested(4, reserved: true, at: 41)
        #expect(admission.opened(1, address: "127.0.0.1", at: 45) == [3], "eight slow readers of /metrics cannot keep a scrape out")
        admission.requested(1, at: 46)
        admission.answered(1, at: 50)
        #expect(admission.peers[1]?.reserved == false && admission.peers[1]?.answeringSince == nil)
        for (fd, address) in [(5, "b"), (6, "c")] {
            #expect(admission.opened(Int32(fd), address: address, at: UInt64(60 + fd)).isEmpty)
            admission.requested(Int32(fd), at: UInt64(70 + fd))
        }
        #expect(admission.opened(7, address: "d", at: 80) == [1], "past the total, the one waiting goes first")
        #expect(admission.opened(8, address: "e", at: 90) == [7], "then the newcomer still waiting; 5 and 6 answered go after it")
    }
}
