#if canImport(Glibc)
import Glibc
#endif
import Foundation
import IfMeterCore
@testable import IfMeterDaemon
@testable import IfMeterServer
@testable import IfMeterHistory
import IfMeterWire
import IfMeterTestSupport
import Testing

/// Numbers from a peer are checked where they enter: nothing a request line carries reaches a
/// conversion that could trap.
@Suite("Hostile input: requests", .ownThread, .timeLimit(.minutes(3)))
struct RequestRangeTests {
    @Test("times and limits out of range are bad_request under the request's own id", arguments: [
        (#"{"v":1,"id":7,"cmd":"usage","class":"loopback","period":"day","from":1e30}"#, "from"),
        (#"{"v":1,"id":7,"cmd":"usage","interface":"lo","period":"day","to":-1e30}"#, "to"),
        (#"{"v":1,"id":7,"cmd":"usage","interface":"lo","period":"day","from":-1}"#, "from"),
        (#"{"v":1,"id":7,"cmd":"usage","interface":"lo","period":"day","to":1e400}"#, "to"),
        (#"{"v":1,"id":7,"cmd":"events","from":253402300800}"#, "from"),
        (#"{"v":1,"id":7,"cmd":"events","limit":100001}"#, "limit"),
        (#"{"v":1,"id":7,"cmd":"events","limit":-5}"#, "limit"),
    ])
    func outOfRange(_ line: String, _ field: String) throws {
        guard case .failure(let error) = RequestLine.parse(Array(line.utf8)) else {
            Issue.record("\(line) was accepted")
            return
        }
        if error.code == .badJSON {
            // A number JSON cannot hold as a Double is refused by the decoder itself.
            #expect(line.contains("1e400"))
            return
        }
        #expect(error.code == .badRequest)
        #expect(error.id == .number(7))
        #expect(error.message.contains("\"\(field)\""), "\(error.message)")
    }

    @Test("the edges of the accepted range are accepted")
    func edges() throws {
        let line = #"{"v":1,"cmd":"usage","interface":"lo","period":"day","from":0,"to":"9999-12-31T23:59:59Z"}"#
        let request = UsageRequest(try RequestLine.parse(Array(line.utf8)).get())
        #expect(request.from?.floorSeconds == 0 && request.to?.ceilingSeconds == 253_402_300_799)
    }
}

@Suite("Hostile input: admission", .ownThread, .timeLimit(.minutes(3)))
struct AdmissionTests {
    let limits = Admission.Limits(maxClients: 11, maxClientsPerUID: 3, adminReserved: 4)

    @Test("one uid gets max_clients_per_uid; the reserve stays for admins; admins only meet max_clients")
    func perUIDAndReserve() {
        var admission = Admission(limits: limits)
        func verdict(_ uid: uid_t, _ isAdmin: Bool) -> Admission.Verdict { admission.verdict(uid: uid, isAdmin: isAdmin, at: 0) }
        for _ in 0..<3 { #expect(verdict(65534, false) == .admit); admission.admit(uid: 65534, isAdmin: false) }
        guard case .refuse(let perUID) = verdict(65534, false) else {
            Issue.record("a fourth connection of one uid was admitted")
            return
        }
        #expect(perUID.contains("max_clients_per_uid"))
        for _ in 0..<3 { admission.admit(uid: 1000, isAdmin: false) }
        #expect(verdict(1001, false) == .admit)
        // The seventh non-admin slot is the last one not reserved.
        admission.admit(uid: 1001, isAdmin: false)
        guard case .refuse(let shared) = verdict(1002, false) else {
            Issue.record("a non-admin took a reserved slot")
            return
        }
        #expect(shared.contains("admin_reserved_clients"))
        for _ in 0..<4 { #expect(verdict(0, true) == .admit); admission.admit(uid: 0, isAdmin: true) }
        guard case .refuse(let full) = verdict(0, true) else {
            Issue.record("an admin passed max_clients")
            return
        }
        #expect(full.contains("max_clients"))
        admission.release(uid: 65534, isAdmin: false)
        #expect(verdict(0, true) == .admit)
        #expect(admission.perUID[65534] == 2 && admission.total == 10 && admission.nonAdmins == 6)
    }

    @Test("a non-admin uid connects at most its burst at once and its pace after; all of them ten times that; admins unpaced")
    func connectPace() {
        var admission = Admission(limits: Admission.Limits(maxClients: 10_000, maxClientsPerUID: 10_000, adminReserved: 0))
        admission.connects = Admission.Pace(perSecond: 10, burst: 20)
        func verdict(_ uid: uid_t, _ isAdmin: Bool = false, at seconds: Double) -> Admission.Verdict {
            admission.verdict(uid: uid, isAdmin: isAdmin, at: UInt64(seconds * 1_000_000))
        }
        for _ in 0..<20 { #expect(verdict(1000, at: 0) == .admit) }
        guard case .refuse(let paced) = verdict(1000, at: 0) else {
            Issue.record("a 21st connection in the same instant was admitted")
            return
        }
        #expect(paced.contains("faster than 10 a second"))
        #expect(verdict(1000, at: 0.05) != .admit, "half a token")
        #expect(verdict(1000, at: 0.1) == .admit, "one token a tenth of a second")
        #expect(verdict(1001, at: 0.1) == .admit, "another uid has its own")
        #expect(verdict(0, true, at: 0.1) == .admit)
        // All non-admins together: 200 at once, 100 a second after. Ten more uids take 20 each.
        for uid in uid_t(2000)..<2010 { for _ in 0..<20 { _ = verdict(uid, at: 0.1) } }
        guard case .refuse(let together) = verdict(3000, at: 0.1) else {
            Issue.record("the non-admins together passed ten times the burst")
            return
        }
        #expect(together.contains("faster than 100 a second"))
        for _ in 0..<50 { #expect(verdict(0, true, at: 0.1) == .admit, "admins are never paced") }
    }
}

@Suite("Hostile input: arithmetic", .ownThread, .timeLimit(.minutes(3)))
struct ArithmeticTests {
    @Test("a sum past 2^64 − 1 saturates and says so, never traps")
    func saturatingTraffic() {
        let near = Traffic(rxBytes: .max - 1, txBytes: 5, rxPackets: 0, txPackets: .max)
        let (sum, overflowed) = near.adding(Traffic(rxBytes: 10, txBytes: 5, rxPackets: 1, txPackets: 0))
        #expect(overflowed)
        #expect(sum == Traffic(rxBytes: .max, txBytes: 10, rxPackets: 1, txPackets: .max))
        #expect(!Traffic(rxBytes: 1).adding(Traffic(rxBytes: 2)).overflowed)
        #expect(near + near == Traffic(rxBytes: .max, txBytes: 10, rxPackets: 0, txPackets: .max))
    }

    @Test("a pending total that would pass 2^64 − 1 is labelled implausible with an event")
    func pendingOverflow() {
        var pending = PendingWrites()
        let epoch = Epoch(bootID: "b", ifindex: 2, since: 0)
        let huge = MeterDelta(name: "tun0", ifindex: 2, epoch: epoch, traffic: Traffic(rxBytes: .max - 5), at: 1_790_000_000)
        let more = MeterDelta(name: "tun0", ifindex: 2, epoch: epoch, traffic: Traffic(rxBytes: 10), at: 1_790_000_001)
        pending.add(MeterOutput(deltas: [huge, more]), calendar: BucketCalendar(zone: .utc), monthStartDay: { _ in 1 })
        let total = pending.unsavedTotal(of: "tun0")
        #expect(total?.traffic.rxBytes == .max)
        #expect(total?.implausible == 1)
        #expect(total?.labels(tunnel: true).contains(.implausibleDropped) == true)
        #expect(pending.events.count == 1 && pending.events.first?.kind == .implausible)
    }

    @Test("while saves fail, unsaved buckets stay bounded: the finest are folded away, no traffic is lost")
    func pendingBounded() {
        var pending = PendingWrites()
        pending.maximumSpans = 100
        var unbounded = PendingWrites()
        let epoch = Epoch(bootID: "b", ifindex: 2, since: 0)
        let origin = 1_790_000_000.0
        // Two days of 5-minute deltas: 576 five-minute buckets, 49 hourly and 3 daily ones.
        for step in 0..<576 {
            let delta = MeterDelta(name: "wwan0", ifindex: 2, epoch: epoch, traffic: Traffic(rxBytes: 1000, txBytes: 10),
                                   at: origin + Double(step) * 300)
            pending.add(MeterOutput(deltas: [delta]), calendar: BucketCalendar(zone: .utc), monthStartDay: { _ in 1 })
            unbounded.add(MeterOutput(deltas: [delta]), calendar: BucketCalendar(zone: .utc), monthStartDay: { _ in 1 })
        }
        #expect((pending.traffic["wwan0"]?.spans.count ?? 0) <= 100)
        #expect(pending.unsavedTotal(of: "wwan0")?.traffic == Traffic(rxBytes: 576_000, txBytes: 5760))
        let buckets = Self.buckets(of: pending), every = Self.buckets(of: unbounded)
        #expect(every[.fiveMinutes]?.count == 576 && every[.hour]?.count == 49 && every[.day]?.count == 3)
        for resolution in [Resolution.hour, .day, .month, .year] {
            #expect(buckets[resolution] == every[resolution], "folding keeps the \(resolution.rawValue) buckets as they were")
        }
        #expect(pending.events.contains { $0.kind == .bucketsFolded })
        // The newest 5-minute buckets are the ones kept, each as it was.
        let kept = buckets[.fiveMinutes] ?? [:]
        #expect(!kept.isEmpty && kept.count < 100)
        let newest = (every[.fiveMinutes] ?? [:]).sorted { $0.key > $1.key }.prefix(kept.count)
        #expect(kept == Dictionary(uniqueKeysWithValues: newest.map { ($0.key, $0.value) }))
    }

    /// Every bucket `pending` would write, by resolution and start; a bucket written twice fails.
    static func buckets(of pending: PendingWrites) -> [Resolution: [Int64: Traffic]] {
        var buckets: [Resolution: [Int64: Traffic]] = [:]
        pending.forEachBucket { _, resolution, start, tally in
            #expect(buckets[resolution, default: [:]][start] == nil, "each bucket is written once")
            buckets[resolution, default: [:]][start] = tally.traffic
        }
        return buckets
    }
}
