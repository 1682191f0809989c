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
        admission.requested(11)
        admission.answered(11, at: 3_000_000)
        #expect(admission.expired(at: 4_999_999).isEmpty)
        #expect(admission.expired(at: 5_000_000) == [10])
        #expect(admission.expired(at: 7_999_999).isEmpty)
        #expect(admission.expired(at: 8_000_000) == [11])
        #expect(admission.peers.isEmpty)
    }

    @Test("one address past its share, or everyone past the total: the oldest still waiting gives way, never one being answered")
    func sharesAndTotal() {
        var admission = HTTPAdmission(limits: limits)
        #expect(admission.opened(1, address: "a", at: 10).isEmpty)
        #expect(admission.opened(2, address: "a", at: 20).isEmpty)
        #expect(admission.opened(3, address: "a", at: 30) == [1], "a's oldest waiting")
        admission.requested(2)
        #expect(admission.opened(4, address: "a", at: 40) == [3], "2 is being answered, so 3 goes")
        #expect(admission.opened(5, address: "b", at: 50).isEmpty)
        #expect(admission.opened(6, address: "c", at: 60).isEmpty)
        #expect(admission.opened(7, address: "d", at: 70) == [4], "past the total: the oldest waiting of all")
        admission.requested(5)
        admission.requested(6)
        admission.requested(7)
        #expect(admission.opened(8, address: "e", at: 80) == [8], "nothing else waits: the newcomer")
        admission.closed(2)
        #expect(admission.opened(9, address: "e", at: 90).isEmpty)
        #expect(Set(admission.peers.keys) == [5, 6, 7, 9])
    }
}
