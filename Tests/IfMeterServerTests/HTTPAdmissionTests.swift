@testable import IfMeterHTTP
import IfMeterTestSupport
import Testing

@Suite("HTTPAdmission", .ownThread, .timeLimit(.minutes(3)))
struct HTTPAdmissionTests {
    let limits = HTTPAdmission.Limits(total: 4, perAddress: 2, requestTimeout: .seconds(5), answerTimeout: .seconds(30), requestGrace: .seconds(1))

    @Test("a request not complete by the deadline is ended; trickled bytes do not renew it; an answer starts it again")
    func deadline() {
        var admission = HTTPAdmission(limits: limits)
        #expect(admission.opened(10, address: "127.0.0.2", at: 0).isEmpty)
        #expect(admission.opened(11, address: "127.0.0.3", at: 1_000_000).isEmpty)
        _ = admission.requested(11, at: 2_000_000)
        admission.answered(11, at: 3_000_000)
        #expect(admission.expired(at: 4_999_999).isEmpty)
        #expect(admission.expired(at: 5_000_000) == [10])
        #expect(admission.expired(at: 7_999_999).isEmpty)
        #expect(admission.expired(at: 8_000_000) == [11])
        #expect(admission.peers.isEmpty)
    }

    /// 32 slow readers each held an answer of megabytes for as long as they kept reading a
    /// byte now and then: libmicrohttpd's idle timeout is renewed by every byte.
    @Test("an answer not sent by its deadline after it was made is ended, a scrape's too; bytes read do not renew it; the next request starts it again")
    func answerDeadline() {
        var admission = HTTPAdmission(limits: limits)
        #expect(admission.opened(10, address: "127.0.0.2", at: 0).isEmpty)
        #expect(admission.opened(11, address: "127.0.0.3", at: 0).isEmpty)
        _ = admission.requested(10, at: 1_000_000)
        _ = admission.requested(11, reserved: true, at: 2_000_000)
        #expect(admission.expired(at: 60_000_000).isEmpty, "answers still being made have no deadline: the wait is the daemon's")
        admission.sending(10, at: 61_000_000)
        admission.sending(11, at: 62_000_000)
        #expect(admission.expired(at: 90_999_999).isEmpty)
        #expect(admission.expired(at: 91_000_000) == [10])
        #expect(admission.expired(at: 92_000_000) == [11], "a scrape read a byte at a time is no exception")
        #expect(admission.opened(12, address: "127.0.0.2", at: 100_000_000).isEmpty)
        _ = admission.requested(12, at: 101_000_000)
        admission.sending(12, at: 101_000_000)
        admission.answered(12, at: 110_000_000)
        _ = admission.requested(12, at: 111_000_000)
        admission.sending(12, at: 111_000_000)
        #expect(admission.expired(at: 140_999_999).isEmpty, "its second answer has a deadline of its own")
        #expect(admission.expired(at: 141_000_000) == [12])
    }

    /// Times in microseconds, as the loop gives them.
    static func seconds(_ value: Double) -> UInt64 { UInt64(value * 1_000_000) }

    @Test("one address past its share, or everyone past the total: the oldest waiting past its grace gives way, then the reader of an answer sent longest ago; newcomers in their grace are judged later")
    func sharesAndTotal() {
        var admission = HTTPAdmission(limits: limits)
        let s = Self.seconds
        #expect(admission.opened(1, address: "a", at: s(0)).isEmpty)
        #expect(admission.opened(2, address: "a", at: s(0.1)).isEmpty)
        #expect(admission.opened(3, address: "a", at: s(2)) == [1], "a's oldest waiting")
        #expect(admission.requested(2, at: s(2.1)).isEmpty)
        admission.sending(2, at: s(2.15))
        #expect(admission.opened(4, address: "a", at: s(2.2)) == [2], "3 is in its grace, so 2, its answer being sent, goes")
        #expect(admission.opened(5, address: "b", at: s(2.3)).isEmpty)
        #expect(admission.opened(6, address: "c", at: s(2.4)).isEmpty)
        #expect(admission.opened(7, address: "d", at: s(2.5)).isEmpty, "past the total, but every other is a newcomer in its grace")
        #expect(admission.expired(at: s(3.1)) == [3], "its grace over, the oldest waiting gives way")
        #expect(Set(admission.peers.keys) == [4, 5, 6, 7])
    }

    /// 32 slow readers on 127.0.0.1, each reconnecting as soon as it was ended, ended or
    /// refused every scrape from there: connections were judged as they opened, when the
    /// newcomers of one turn of the loop were all unread, the scraper among them.
    @Test("slow readers reconnecting as fast as they are ended: a scraper among them is never the one that gives way")
    func reconnectingReaders() {
        var admission = HTTPAdmission(limits: limits)
        let s = Self.seconds
        #expect(admission.opened(1, address: "127.0.0.1", at: s(0)).isEmpty)
        #expect(admission.requested(1, at: s(0.001)).isEmpty)
        admission.sending(1, at: s(0.002))
        #expect(admission.opened(2, address: "127.0.0.1", at: s(2)).isEmpty, "the scraper")
        #expect(admission.opened(3, address: "127.0.0.1", at: s(2.0001)) == [1], "the slow reader goes, not the scraper")
        #expect(admission.opened(4, address: "127.0.0.1", at: s(2.0002)).isEmpty, "three newcomers in their grace: none is ended yet")
        #expect(admission.requested(3, at: s(2.0003)).isEmpty, "4 will ask after it")
        #expect(admission.requested(2, reserved: true, at: s(2.0004)).isEmpty)
        #expect(admission.requested(4, at: s(2.0005)) == [4], "asked last: it gives way itself")
        #expect(admission.expired(at: s(3.5)).isEmpty, "within the share again, and no deadline passed")
        #expect(Set(admission.peers.keys) == [2, 3])
    }

    @Test("a scrape of the reserved path gives way only when every other is one; a plain request among scrapes gives way itself")
    func scrapesLast() {
        var admission = HTTPAdmission(limits: limits)
        let s = Self.seconds
        #expect(admission.opened(1, address: "127.0.0.1", at: s(0)).isEmpty)
        #expect(admission.requested(1, reserved: true, at: s(0.001)).isEmpty)
        #expect(admission.opened(2, address: "127.0.0.1", at: s(0.01)).isEmpty)
        #expect(admission.requested(2, at: s(0.011)).isEmpty)
        admission.sending(2, at: s(0.012))
        #expect(admission.opened(3, address: "127.0.0.1", at: s(0.02)) == [2], "the slow reader, not the scrape nor the newcomer")
        #expect(admission.requested(3, reserved: true, at: s(0.021)).isEmpty)
        #expect(admission.opened(4, address: "127.0.0.1", at: s(0.03)).isEmpty, "judged once its request is read")
        #expect(admission.requested(4, reserved: true, at: s(0.031)) == [1], "all are scrapes: the one answered longest goes")
        #expect(admission.opened(5, address: "127.0.0.1", at: s(0.04)).isEmpty)
        #expect(admission.requested(5, at: s(0.041)) == [5])
        admission.answered(3, at: s(0.05))
        #expect(admission.peers[3]?.reserved == false && admission.peers[3]?.answeringSince == nil)
    }

    /// 40 clients loading pages and asking queries back to back, past the total, once ended
    /// one another's requests in turn, the one asked longest ago first: none was ever answered.
    @Test("of the requests whose answer is still being made, the last asked gives way; a reader of an answer sent goes before any")
    func newestRequestGivesWay() {
        var admission = HTTPAdmission(limits: limits)
        let s = Self.seconds
        for fd in Int32(1)...2 {
            #expect(admission.opened(fd, address: "a", at: s(0)).isEmpty)
            #expect(admission.requested(fd, at: s(0.1 * Double(fd))).isEmpty)
        }
        #expect(admission.opened(3, address: "a", at: s(0.3)).isEmpty, "it may ask after them")
        #expect(admission.requested(3, at: s(0.4)) == [3], "asked last: the work for 1 and 2 goes on")
        admission.sending(2, at: s(0.5))
        #expect(admission.opened(4, address: "a", at: s(0.6)) == [2], "2's answer is made and sent: its reader goes first")
        #expect(admission.requested(4, at: s(0.7)) == [], "within the share again")
        #expect(Set(admission.peers.keys) == [1, 4])
    }

    /// 100 connects a second that sent nothing kept 100 newcomers in their grace and filled
    /// libmicrohttpd's table: 84 of 199 scrapes were refused. Ending the oldest waiting at
    /// twice the total instead ended scrapers among 72 attackers' requests, before theirs was
    /// read: the flood rule waits for six times the total.
    @Test("past six times the total, one already in gives way as a newcomer opens: the oldest waiting, grace or not, never the newcomer")
    func connectFlood() {
        var admission = HTTPAdmission(limits: limits)
        let s = Self.seconds
        let flood = Int32(HTTPAdmission.floodFactor * limits.total)
        for fd in 1...flood { #expect(admission.opened(fd, address: "flood\(fd % 2)", at: s(0.001 * Double(fd))).isEmpty) }
        #expect(admission.opened(flood + 1, address: "127.0.0.1", at: s(0.1)) == [1], "the scraper stays; the flood's oldest goes")
        _ = admission.requested(flood + 1, reserved: true, at: s(0.101))
        #expect(admission.peers[flood + 1]?.reserved == true)
    }
}
