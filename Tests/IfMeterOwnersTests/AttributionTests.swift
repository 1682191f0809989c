import IfMeterCore
import IfMeterOwners
import IfMeterTestSupport
import Testing

/// The attribution state machine with made-up links and looks, and through the real meter: what
/// a container's subject counts across restarts, renames and a veth name another container
/// takes over.
@Suite("Attribution", .ownThread, .timeLimit(.minutes(3)))
struct AttributionTests {
    static let web = FoundOwner(.podman, name: "web", id: String(repeating: "a", count: 64))
    static let db = FoundOwner(.podman, name: "db", id: String(repeating: "b", count: 64))

    static func veth(_ ifindex: Int32, _ name: String, nsid: Int32?, rx: UInt64 = 0, tx: UInt64 = 0, peer: Int32 = 2) -> Link {
        Link(ifindex: ifindex, name: name, kind: "veth", arpType: 1, flags: [.up], operState: .up,
             parent: peer, peerNamespaceID: nsid, counters: LinkCounters(rxBytes: rx, txBytes: tx))
    }

    static func reading(_ ifindex: Int32, rx: UInt64, tx: UInt64) -> CounterReading {
        CounterReading(ifindex: ifindex, counters: LinkCounters(rxBytes: rx, txBytes: tx))
    }

    static func shown(_ observations: [LinkObservation]) -> [Link] {
        observations.compactMap { if case .event(.newOrChanged(let link)) = $0 { link } else { nil } }
    }

    @Test("a link whose owner is found: named by its subject, its counters turned round, and its readings too")
    func foundAtOnce() {
        var attribution = Attribution(scope: .all)
        #expect(Self.shown(attribution.apply([.event(.newOrChanged(Self.veth(7, "veth0", nsid: 3, rx: 10, tx: 20)))], at: 100)).isEmpty)
        #expect(attribution.unsettled.nsids == [3])
        let settled = Self.shown(attribution.settle([3: .found(Self.web)], at: 100))
        #expect(settled.map(\.name) == ["container:web"])
        #expect(settled.first?.owner?.alias == "veth0")
        #expect(settled.first?.counters == LinkCounters(rxBytes: 20, txBytes: 10))
        #expect(attribution.isSettled)
        let readings = attribution.apply(readings: [Self.reading(7, rx: 100, tx: 300), Self.reading(1, rx: 5, tx: 6)])
        #expect(readings.map(\.counters) == [LinkCounters(rxBytes: 300, txBytes: 100), LinkCounters(rxBytes: 5, txBytes: 6)])
    }

    @Test("only the container end's deletion, with its host end's, raises the figure: a tenant's link that took the end's index moves nothing")
    func raiseOnlyAtTheEnd() {
        func attributed() -> Attribution {
            var attribution = Attribution(scope: .all)
            _ = attribution.apply([.event(.newOrChanged(Self.veth(7, "veth0", nsid: 3, rx: 1000, tx: 2000)))], at: 100)
            _ = attribution.settle([3: .found(Self.web)], at: 100)
            return attribution
        }
        // Root in the container moved its end (index 2) away and made another link with index 2:
        // its changes and its deletion, however large its counters, raise nothing, and the host
        // end's next reading and its own deletion count as they are.
        var attacked = attributed()
        let impostor = Self.veth(2, "d0", nsid: nil, rx: 9_000_000, tx: 9_000_000, peer: 5)
        #expect(attacked.apply([.peer(nsid: 3, .newOrChanged(impostor))], at: 101).isEmpty)
        #expect(attacked.apply([.peer(nsid: 3, .deleted(impostor))], at: 102).isEmpty)
        #expect(attacked.apply(readings: [Self.reading(7, rx: 1100, tx: 2100)]).map(\.counters) == [LinkCounters(rxBytes: 2100, txBytes: 1100)])
        let gone = attacked.apply([.event(.deleted(Self.veth(7, "veth0", nsid: 3, rx: 1100, tx: 2100)))], at: 103)
        #expect(Self.shown(gone).isEmpty, "no raise: \(gone)")
        // The kernel deletes both ends together: the container end's final counters count.
        var ended = attributed()
        let end = Self.veth(2, "eth0", nsid: 1, rx: 2500, tx: 1500, peer: 7)
        let final = ended.apply([.peer(nsid: 3, .deleted(end)), .hostMark(ifindex: 7, deleted: true),
                                 .event(.deleted(Self.veth(7, "veth0", nsid: 3, rx: 1000, tx: 2000)))], at: 104)
        #expect(Self.shown(final).map(\.counters) == [LinkCounters(rxBytes: 2500, txBytes: 1500)])
        guard case .event(.deleted)? = final.last else { Issue.record("the deletion last: \(final)"); return }
    }

    @Test("the peers socket's order decides: an end's counters count when its host end's deletion is next there; after a change of the host end (an impostor deleted before it went down) they never do")
    func orderOnThePeersSocket() {
        func attributed() -> Attribution {
            var attribution = Attribution(scope: .all)
            _ = attribution.apply([.event(.newOrChanged(Self.veth(7, "veth0", nsid: 3, rx: 1000, tx: 2000))),
                                   .event(.newOrChanged(Self.veth(8, "veth1", nsid: 4, rx: 10, tx: 20)))], at: 100)
            _ = attribution.settle([3: .found(Self.web), 4: .found(FoundOwner(.podman, name: "db", id: String(repeating: "b", count: 64)))], at: 100)
            return attribution
        }
        // Two containers removed in one read: the kernel takes each pair down, deletes the end,
        // then the host end. The own socket's changes of the host ends come after both ends'
        // deletions in the merge; the marks keep the kernel's order.
        let firstEnd = Self.veth(2, "eth0", nsid: 1, rx: 2500, tx: 1500, peer: 7)
        let secondEnd = Self.veth(2, "eth0", nsid: 1, rx: 40, tx: 30, peer: 8)
        var down = Self.veth(8, "veth1", nsid: nil, rx: 20, tx: 10)
        down.flags = []
        var removed = attributed()
        let output = removed.apply([.hostMark(ifindex: 7, deleted: false), .peer(nsid: 3, .deleted(firstEnd)), .hostMark(ifindex: 7, deleted: true),
                                    .hostMark(ifindex: 8, deleted: false), .peer(nsid: 4, .deleted(secondEnd)), .hostMark(ifindex: 8, deleted: true),
                                    .event(.deleted(Self.veth(7, "veth0", nsid: nil, rx: 0, tx: 2000))),
                                    .event(.newOrChanged(down)),
                                    .event(.deleted(Self.veth(8, "veth1", nsid: nil, rx: 0, tx: 20)))], at: 101)
        // web raised to its end's counters; db going down (turned round), then raised to its end's.
        let shown = Self.shown(output)
        #expect(shown.map(\.name) == ["container:web", "container:db", "container:db"], "\(output)")
        #expect(shown.map(\.counters) == [LinkCounters(rxBytes: 2500, txBytes: 1500), LinkCounters(rxBytes: 10, txBytes: 20),
                                          LinkCounters(rxBytes: 40, txBytes: 30)])

        // Root in db moved its down end away (no word about the host end), brought a link it
        // filled to the end's index and deleted it, then deleted its end where it had moved it.
        var attacked = attributed()
        let impostor = Self.veth(2, "z", nsid: nil, rx: 9_000_000, tx: 9_000_000, peer: 5)
        let gone = attacked.apply([.peer(nsid: 4, .deleted(impostor)), .hostMark(ifindex: 8, deleted: false), .hostMark(ifindex: 8, deleted: true),
                                   .event(.newOrChanged(down)), .event(.deleted(Self.veth(8, "veth1", nsid: nil, rx: 0, tx: 20)))], at: 101)
        #expect(Self.shown(gone).allSatisfy { $0.counters == LinkCounters(rxBytes: 10, txBytes: 20) }, "\(gone)")
    }

    @Test("an end's counters confirmed before its host end's going down, which carries what the host sent since: the raise keeps that, so the meter does not take it for an older reading")
    func raiseAgainstTheHostEndAsItIsNow() {
        var attribution = Attribution(scope: .all)
        _ = attribution.apply([.event(.newOrChanged(Self.veth(7, "veth0", nsid: 3, rx: 1000, tx: 2000)))], at: 100)
        _ = attribution.settle([3: .found(Self.web)], at: 100)
        // Host sent 500 more (its tx, the container's rx) before going down; the end sent 9000.
        var down = Self.veth(7, "veth0", nsid: nil, rx: 0, tx: 2500)
        down.flags = []
        let end = Self.veth(2, "eth0", nsid: 1, rx: 0, tx: 9000, peer: 7)
        let output = attribution.apply([.peer(nsid: 3, .deleted(end)), .hostMark(ifindex: 7, deleted: true),
                                        .event(.newOrChanged(down)), .event(.deleted(Self.veth(7, "veth0", nsid: nil, rx: 0, tx: 2500)))], at: 101)
        #expect(Self.shown(output).last?.counters == LinkCounters(rxBytes: 2500, txBytes: 9000), "\(output)")
    }

    @Test("an end's deletion merged before its number's deletion raises nothing deleted after it: that end was the next namespace's")
    func endOfTheNextNamespace() {
        var attribution = Attribution(scope: .all)
        _ = attribution.apply([.event(.newOrChanged(Self.veth(7, "veth0", nsid: 3, rx: 1000, tx: 2000)))], at: 100)
        _ = attribution.settle([3: .found(Self.web)], at: 100)
        // The namespace died with its end inside (never heard); the kernel gave 3 to a new one,
        // whose root pushed traffic through its own end (index 2, as the old one's) and deleted it.
        let newcomer = Self.veth(2, "eth0", nsid: 1, rx: 9_000_000, tx: 9_000_000, peer: 9)
        let output = attribution.apply([.peer(nsid: 3, .deleted(newcomer)), .namespaceIDDeleted(3),
                                        .event(.deleted(Self.veth(7, "veth0", nsid: nil, rx: 1000, tx: 2000)))], at: 101)
        #expect(Self.shown(output).isEmpty, "raised: \(output)")
    }

    @Test("a peers-socket loss before a deletion concerns an owner's link only: renamed to its subject for it, dropped for anyone else")
    func peerEventsLost() {
        var attribution = Attribution(scope: .all)
        _ = attribution.apply([.event(.newOrChanged(Self.veth(7, "veth0", nsid: 3, rx: 10, tx: 20)))], at: 100)
        _ = attribution.settle([3: .found(Self.web)], at: 100)
        let plain = Link(ifindex: 1, name: "eth0", kind: "", arpType: 1)
        _ = attribution.apply([.event(.newOrChanged(plain))], at: 100)
        let owned = attribution.apply([.peerEventsLost(before: Self.veth(7, "veth0", nsid: nil)),
                                       .event(.deleted(Self.veth(7, "veth0", nsid: nil, rx: 10, tx: 20)))], at: 101)
        guard case .peerEventsLost(let shown)? = owned.first else { Issue.record("first: \(owned)"); return }
        #expect(shown.name == "container:web")
        #expect(attribution.apply([.peerEventsLost(before: plain), .event(.deleted(plain))], at: 102) == [.event(.deleted(plain))])
    }

    @Test("an nsid the kernel deleted and gave to the next namespace: its link waits for a look, never the old owner's")
    func nsidReused() {
        var attribution = Attribution(scope: .all)
        _ = attribution.apply([.event(.newOrChanged(Self.veth(7, "veth0", nsid: 3, rx: 10, tx: 20)))], at: 100)
        _ = attribution.settle([3: .found(Self.web)], at: 100)
        // The tenant moves its end to a namespace of its own (the host end now leads to nsid 4),
        // then lets its namespace die: nsid 3 is deleted, and the next namespace gets it.
        let moved = Self.shown(attribution.apply([.event(.newOrChanged(Self.veth(7, "veth0", nsid: 4, rx: 10, tx: 20)))], at: 101))
        #expect(moved.map(\.name) == ["container:web"], "the link stays its owner's")
        #expect(attribution.apply([.namespaceIDDeleted(3)], at: 102).isEmpty)
        let victim = attribution.apply([.event(.newOrChanged(Self.veth(9, "veth1", nsid: 3, rx: 5, tx: 6)))], at: 103)
        #expect(Self.shown(victim).isEmpty, "waits for a look: \(victim)")
        #expect(attribution.unsettled.nsids == [3])
        let settled = Self.shown(attribution.settle([3: .found(Self.db)], at: 104))
        #expect(settled.map(\.name) == ["container:db"])
        #expect(settled.first?.owner?.peer == nil, "not a second link of web's")
    }

    @Test("a peer moved away and its old nsid re-used without a deletion heard (lost events): the old owner does not vouch for it")
    func peerMovedAway() {
        var attribution = Attribution(scope: .all)
        _ = attribution.apply([.event(.newOrChanged(Self.veth(7, "veth0", nsid: 3)))], at: 100)
        _ = attribution.settle([3: .found(Self.web)], at: 100)
        _ = attribution.apply([.event(.newOrChanged(Self.veth(7, "veth0", nsid: 4)))], at: 101)
        #expect(Self.shown(attribution.apply([.event(.newOrChanged(Self.veth(9, "veth1", nsid: 3)))], at: 103)).isEmpty)
        // Nor does its old end's index in that nsid raise it any more.
        let end = Self.veth(2, "eth0", nsid: nil, rx: 9_000_000, tx: 9_000_000, peer: 7)
        let gone = attribution.apply([.peer(nsid: 3, .deleted(end)), .event(.deleted(Self.veth(7, "veth0", nsid: 4)))], at: 104)
        #expect(Self.shown(gone).isEmpty, "no raise: \(gone)")
    }

    @Test("an nsid the kernel deleted: links gone while waiting on it count under their own names; one waiting is the dying namespace's if it goes, the next one's if a look finds it")
    func waitingOnDeletedNsid() {
        var attribution = Attribution(scope: .all)
        _ = attribution.apply([.event(.newOrChanged(Self.veth(7, "veth0", nsid: 3, rx: 10, tx: 20)))], at: 100)
        _ = attribution.apply([.event(.newOrChanged(Self.veth(8, "veth1", nsid: 3, rx: 1, tx: 2)))], at: 100)
        _ = attribution.apply([.event(.deleted(Self.veth(8, "veth1", nsid: 3, rx: 1, tx: 2)))], at: 101)
        // The kernel frees a number before it says so: veth2 already leads to the next namespace.
        _ = attribution.apply([.event(.newOrChanged(Self.veth(9, "veth2", nsid: 3, rx: 5, tx: 6)))], at: 101)
        let out = attribution.apply([.namespaceIDDeleted(3)], at: 102)
        #expect(Self.shown(out).map(\.name) == ["veth1"])
        #expect(out.contains { if case .event(.deleted(let link)) = $0 { link.name == "veth1" } else { false } })
        // The dying namespace's veth0 goes (the kernel deletes its links after the number).
        let gone = attribution.apply([.event(.deleted(Self.veth(7, "veth0", nsid: nil, rx: 10, tx: 20)))], at: 103)
        #expect(Self.shown(gone).map(\.name) == ["veth0"])
        #expect(gone.contains { if case .event(.deleted(let link)) = $0 { link.name == "veth0" } else { false } })
        // veth2 stays, and the look finds the number's new owner.
        #expect(attribution.unsettled.nsids == [3])
        #expect(Self.shown(attribution.settle([3: .found(Self.db)], at: 104)).map(\.name) == ["container:db"])
        #expect(attribution.isSettled)
    }

    @Test("a namespace its runtime is still setting up: withheld with its latest counters, then counted from them")
    func waitsWhileStarting() {
        var attribution = Attribution(scope: .all, grace: .seconds(10))
        _ = attribution.apply([.event(.newOrChanged(Self.veth(7, "veth0", nsid: 3)))], at: 100)
        #expect(attribution.apply(readings: [Self.reading(7, rx: 40, tx: 50)]).isEmpty)
        #expect(attribution.settle([3: .starting(fallback: FoundOwner(.netns, name: "netns-x", id: "9"))], at: 101).isEmpty)
        #expect(!attribution.isSettled)
        let settled = Self.shown(attribution.settle([3: .found(Self.web)], at: 102))
        #expect(settled.map(\.name) == ["container:web"])
        #expect(settled.first?.counters == LinkCounters(rxBytes: 50, txBytes: 40))
    }

    @Test("past the grace period a starting namespace takes its fallback name, or none")
    func graceExpires() {
        var attribution = Attribution(scope: .all, grace: .seconds(10))
        _ = attribution.apply([.event(.newOrChanged(Self.veth(7, "veth0", nsid: 3))),
                               .event(.newOrChanged(Self.veth(8, "veth1", nsid: 4)))], at: 100)
        let lookups: OwnerLookups = [3: .starting(fallback: FoundOwner(.netns, name: "netns-x", id: "9")),
                                             4: .starting(fallback: nil)]
        #expect(attribution.settle(lookups, at: 109).isEmpty)
        let settled = Self.shown(attribution.settle(lookups, at: 110))
        #expect(settled.map(\.name) == ["netns:netns-x", "veth1"])
        #expect(settled.last?.owner == nil && settled.last?.counters == LinkCounters())
    }

    @Test("a namespace nobody can see is counted as a plain link from then on, unchanged")
    func unknownIsPlain() {
        var attribution = Attribution(scope: .all)
        _ = attribution.apply([.event(.newOrChanged(Self.veth(7, "veth0", nsid: 3, rx: 1, tx: 2)))], at: 100)
        #expect(Self.shown(attribution.settle([3: .unknown], at: 100)).map(\.name) == ["veth0"])
        #expect(Self.shown(attribution.apply([.event(.newOrChanged(Self.veth(7, "veth0", nsid: 3, rx: 1, tx: 2)))], at: 101))
            .map(\.counters) == [LinkCounters(rxBytes: 1, txBytes: 2)])
        #expect(attribution.apply(readings: [Self.reading(7, rx: 9, tx: 8)]).map(\.counters) == [LinkCounters(rxBytes: 9, txBytes: 8)])
        #expect(attribution.isSettled)
    }

    @Test("a link deleted while it waits is settled at the next look: seen, then deleted, under its owner")
    func deletedWhileWaiting() {
        var attribution = Attribution(scope: .all)
        _ = attribution.apply([.event(.newOrChanged(Self.veth(7, "veth0", nsid: 3, rx: 5, tx: 6)))], at: 100)
        #expect(attribution.apply([.event(.deleted(Self.veth(7, "veth0", nsid: 3, rx: 0, tx: 9)))], at: 100).isEmpty)
        let settled = attribution.settle([3: .found(Self.web)], at: 100)
        guard settled.count == 2, case .event(.newOrChanged(let seen)) = settled[0], case .event(.deleted(let gone)) = settled[1] else {
            Issue.record("expected a sighting then a deletion, got \(settled)")
            return
        }
        #expect(seen.name == "container:web" && gone.name == "container:web")
        #expect(seen.counters == LinkCounters(rxBytes: 6, txBytes: 5))
        #expect(gone.counters == LinkCounters(rxBytes: 9, txBytes: 0))
        #expect(attribution.entries.isEmpty)
    }

    @Test("a second link into the same container is a subject of its own, named by its peer's ifindex")
    func secondLinkOfOneOwner() {
        var attribution = Attribution(scope: .all)
        _ = attribution.apply([.event(.newOrChanged(Self.veth(7, "veth0", nsid: 3, peer: 2))),
                               .event(.newOrChanged(Self.veth(8, "veth1", nsid: 3, peer: 3)))], at: 100)
        let settled = Self.shown(attribution.settle([3: .found(Self.web)], at: 100))
        #expect(settled.map(\.name) == ["container:web", "container:web#3"])
        // The owner is known by its nsid now: a third link into it needs no look.
        let third = Self.shown(attribution.apply([.event(.newOrChanged(Self.veth(9, "veth2", nsid: 3, peer: 4)))], at: 101))
        #expect(third.map(\.name) == ["container:web#4"])
    }

    @Test("incarnations of one name at the same time (a pod re-created while its old sandbox goes), each eth0 ifindex 2 in its own namespace, and one's second network: never two on one subject")
    func incarnationsAtOnce() {
        var attribution = Attribution()
        func pod(_ uid: String) -> FoundOwner { FoundOwner(.kubernetes, name: "team-x/web-0", id: uid) }
        _ = attribution.apply([.event(.newOrChanged(Self.veth(20, "vetha", nsid: 5, peer: 2))),
                               .event(.newOrChanged(Self.veth(21, "vethb", nsid: 6, peer: 2))),
                               .event(.newOrChanged(Self.veth(22, "vethc", nsid: 7, peer: 2))),
                               .event(.newOrChanged(Self.veth(23, "vethd", nsid: 6, peer: 3)))], at: 100)
        let settled = Self.shown(attribution.settle([5: .found(pod("u1")), 6: .found(pod("u2")), 7: .found(pod("u3"))], at: 100))
        let names = settled.map(\.name)
        #expect(names.count == 4 && Set(names).count == 4, "\(names)")
        #expect(names.contains("pod:team-x/web-0"), "\(names)")
        // The first gone, the next incarnation of the name takes the plain subject.
        _ = attribution.apply([.event(.deleted(Self.veth(20, "vetha", nsid: 5, peer: 2)))], at: 101)
        _ = attribution.apply([.event(.newOrChanged(Self.veth(24, "vethe", nsid: 8, peer: 2)))], at: 102)
        let next = Self.shown(attribution.settle([8: .found(pod("u4"))], at: 102)).map(\.name)
        #expect(next == ["pod:team-x/web-0"], "\(next)")
    }

    @Test("a rename of the host side keeps the subject and changes the alias")
    func renamedHostSide() {
        var attribution = Attribution(scope: .all)
        _ = attribution.apply([.event(.newOrChanged(Self.veth(7, "veth0", nsid: 3)))], at: 100)
        _ = attribution.settle([3: .found(Self.web)], at: 100)
        let renamed = Self.shown(attribution.apply([.event(.newOrChanged(Self.veth(7, "web-host", nsid: 3)))], at: 101))
        #expect(renamed.map(\.name) == ["container:web"])
        #expect(renamed.first?.owner?.alias == "web-host")
    }

    @Test("at start every host-side link is looked up at once; one whose owner is not found yet is plain")
    func startLooksUpAtOnce() {
        var attribution = Attribution(scope: .all)
        var asked: Set<Int32> = []
        let links = attribution.start([Self.veth(7, "veth0", nsid: 3), Self.veth(8, "veth1", nsid: 4),
                                       Link(ifindex: 1, name: "lo", arpType: 772)], at: 100) { unsettled in
            asked = unsettled.nsids
            return [3: .found(Self.web), 4: .starting(fallback: nil)]
        }
        #expect(asked == [3, 4])
        #expect(links.map(\.name) == ["container:web", "veth1", "lo"])
        #expect(attribution.isSettled)
    }

    @Test("a resync forgets links missing from the dump, so their nsid's owner is looked up afresh")
    func resyncForgets() {
        var attribution = Attribution(scope: .all)
        _ = attribution.apply([.event(.newOrChanged(Self.veth(7, "veth0", nsid: 3)))], at: 100)
        _ = attribution.settle([3: .found(Self.web)], at: 100)
        let after = attribution.apply([.resync(links: [Self.veth(9, "veth0", nsid: 3)], unparseable: 0)], at: 101)
        #expect(after == [.resync(links: [], unparseable: 0)])
        #expect(attribution.unsettled.nsids == [3])
        let settled = Self.shown(attribution.settle([3: .found(Self.db)], at: 101))
        #expect(settled.map(\.name) == ["container:db"])
    }

    /// The issue's case on Podman: a and b run (veth0, veth1), a goes, c comes and its host side
    /// is `veth0` again, then a comes back on `veth2`. Through the real meter, each subject's
    /// deltas are its own counters, turned round, summed over its lifetimes.
    @Test("through the meter: a veth name reused by another container counts for the new one; a restart continues the old one")
    func reuseThroughTheMeter() {
        var attribution = Attribution(scope: .all)
        var meter = Meter(bootID: "boot")
        var totals: [String: Traffic] = [:]
        var second: UInt64 = 0
        func run(_ observations: [LinkObservation], _ readings: [CounterReading], lookups: OwnerLookups) {
            second += 1
            let instant = MeterInstant(wall: 1000 + Double(second), sinceBootNanoseconds: second * 1_000_000_000)
            var events = attribution.apply(observations, at: instant.wall)
            let kept = attribution.apply(readings: readings)
            events += attribution.settle(lookups, at: instant.wall)
            var output = MeterOutput()
            for event in events {
                if case .event(let linkEvent) = event { output += meter.apply(linkEvent, at: instant) }
            }
            output += meter.apply(sample: kept, at: instant)
            for delta in output.deltas { totals[delta.name, default: .zero] = totals[delta.name, default: .zero].adding(delta.traffic).sum }
        }
        _ = meter.start(links: [Link(ifindex: 1, name: "lo", arpType: 772, counters: LinkCounters())],
                        at: MeterInstant(wall: 1000, sinceBootNanoseconds: 0))
        let c = FoundOwner(.podman, name: "c", id: String(repeating: "c", count: 64))
        run([.event(.newOrChanged(Self.veth(10, "veth0", nsid: 0))), .event(.newOrChanged(Self.veth(11, "veth1", nsid: 1)))],
            [], lookups: [0: .found(Self.web), 1: .found(Self.db)])
        run([], [Self.reading(10, rx: 100, tx: 1000), Self.reading(11, rx: 7, tx: 70)], lookups: [:])
        run([.event(.deleted(Self.veth(10, "veth0", nsid: 0, rx: 0, tx: 1500)))], [Self.reading(11, rx: 8, tx: 80)], lookups: [:])
        // The kernel reuses nsid 0 for c's new namespace, and Podman the name veth0.
        run([.event(.newOrChanged(Self.veth(12, "veth0", nsid: 0)))], [Self.reading(12, rx: 3, tx: 30)], lookups: [0: .found(c)])
        run([.event(.newOrChanged(Self.veth(13, "veth2", nsid: 2)))], [Self.reading(12, rx: 4, tx: 40), Self.reading(13, rx: 50, tx: 500)],
            lookups: [2: .found(Self.web)])
        #expect(totals["container:web"] == Traffic(rxBytes: 1500 + 500, txBytes: 100 + 50))
        #expect(totals["container:db"] == Traffic(rxBytes: 80, txBytes: 8))
        #expect(totals["container:c"] == Traffic(rxBytes: 40, txBytes: 4))
        #expect(totals["veth0"] == nil && totals["veth1"] == nil && totals["veth2"] == nil)
    }

    @Test("by default only containers: a namespace someone named keeps its link's own name, a runtime's unnamed one does not")
    func containersScope() {
        var attribution = Attribution(scope: .containers)
        _ = attribution.apply([.event(.newOrChanged(Self.veth(7, "veth-vpn", nsid: 3))),
                               .event(.newOrChanged(Self.veth(8, "veth0", nsid: 4))),
                               .event(.newOrChanged(Self.veth(9, "veth1", nsid: 5)))], at: 100)
        let lookups: OwnerLookups = [3: .found(FoundOwner(.netns, name: "vpn", id: "1")),
                                             4: .found(Self.web),
                                             5: .starting(fallback: FoundOwner(.netns, name: "netns-x", id: "2"))]
        #expect(Self.shown(attribution.settle(lookups, at: 100)).map(\.name) == ["veth-vpn", "container:web"])
        #expect(Self.shown(attribution.settle(lookups, at: 110)).map(\.name) == ["netns:netns-x"])
        #expect(attribution.isSettled)
        // A plain link is a key, not an entry: thousands of veths into named namespaces leave the
        // table, and the readings pass, empty.
        #expect(attribution.plain == [LinkKey(ifindex: 7)] && attribution.entries.count == 2)
    }

    @Test("a look that did not cover a link (it began waiting after the look began) leaves it waiting")
    func lookNotCovering() {
        var attribution = Attribution(scope: .all)
        _ = attribution.apply([.event(.newOrChanged(Self.veth(7, "veth0", nsid: 3)))], at: 100)
        _ = attribution.apply([.event(.deleted(Self.veth(8, "veth1", nsid: 4)))], at: 100)
        _ = attribution.apply([.event(.newOrChanged(Self.veth(9, "veth2", nsid: 5))),
                               .event(.deleted(Self.veth(9, "veth2", nsid: 5)))], at: 100)
        #expect(attribution.settle([:], at: 200).isEmpty)
        #expect(attribution.unsettled.nsids == [3, 5])
        #expect(Self.shown(attribution.settle([3: .found(Self.web), 5: .found(Self.db)], at: 200)).map(\.name)
                == ["container:web", "container:db"])
        #expect(attribution.isSettled)
    }
}
