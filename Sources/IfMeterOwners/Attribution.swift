import IfMeterCore

/// Which of the daemon's links are counted as the traffic of the container or namespace at
/// their other end (docs/NAMESPACES.md), as a value that rewrites what the feeds read before the
/// meter sees it: an attributed link is named by its owner's subject (`container:web`), carries
/// its ``LinkOwner``, and has its counters turned round to the owner's point of view.
///
/// States of a host-side link (a veth whose peer is in another namespace, `IFLA_LINK_NETNSID`):
/// - ``Entry/waiting(_:since:)``: seen, owner not known yet. Withheld from the meter, its latest
///   metadata and counters kept, until the owner is known (then the meter counts it from zero,
///   so nothing it carried meanwhile is lost) or ``grace`` pass.
/// - ``Entry/owned(_:nsid:last:)``: counted as its owner's until it goes. `last` is the link as
///   the meter last saw it: when the container's end of the veth reports its own counters
///   (``LinkObservation/peer(nsid:_:)``, as it is deleted), the host's end is raised to them —
///   the host's end reads what the container sent through that end, and reads 0 once it is gone.
///   `last` is a box changed in place, so copies of one attribution share it: the daemon holds
///   one, and a copy is for reading. `nsid` is the number its peer's namespace had when the
///   owner was found, until the kernel deletes that number (`RTM_DELNSID`) or the peer moves to
///   another namespace: then ``unbound``, since the next namespace may get the number.
/// - ``Entry/plain``: nobody could be found (the namespace is invisible to the daemon); counted
///   under its own name like any link.
/// - ``Entry/home(of:)``: the container's end of an owned link, brought back into the daemon's
///   namespace as its runtime takes the container down; never counted.
///
/// A veth whose both ends are in the daemon's namespace waits too (Docker and LXC make a pair so
/// and move one end into the container): until an end moves away, then as any link into another
/// namespace, or until ``grace`` pass, then plain.
///
/// A tap (``isTap(_:)``) waits for a look at libvirt's live status files, which say whose
/// virtual machine's NIC it is (by its name and address, ``OwnerLookups/taps``); owned, it is
/// counted as the machine's, turned round as a host-side veth is.
public struct Attribution: Sendable {
    public var scope: Scope
    /// How long a link into a namespace its runtime is still setting up waits for the runtime
    /// to say whose it is.
    public var grace: Duration
    var table = AttributionTable()
    /// The links waiting, attributed or home.
    public var entries: [LinkKey: Entry] { table.entries }
    /// The links counted under their own names.
    public var plain: Set<LinkKey> { table.plain }
    /// Owners and peers found by a namespace's number.
    var bindings = NamespaceBindings()
    /// Links that went while waiting: their final counters, settled at the next look.
    var departed: [(last: Link, final: Link)] = []
    /// Container ends' final counters on their way to their host ends.
    var finals = PeerFinals()
    /// Plain links that were veths with both ends here when their grace ran out: one whose end a
    /// runtime moves away later still becomes its owner's.
    var pairsAtHome: Set<LinkKey> = []

    public init(scope: Scope = .containers, grace: Duration = .seconds(10)) {
        self.scope = scope
        self.grace = grace
    }

    /// True when no link waits for a look.
    public var isSettled: Bool {
        departed.isEmpty && !entries.values.contains { if case .waiting = $0 { true } else { false } }
    }

    /// What a look has to find now.
    public var unsettled: Unsettled {
        var unsettled = Unsettled()
        let waiting = entries.values.compactMap { entry -> Link? in if case .waiting(let link, _) = entry { link } else { nil } }
        for link in waiting + departed.map(\.last) {
            if Self.isTap(link) { unsettled.taps[link.ifindex] = TapSight(name: link.name, address: link.address) }
            guard let nsid = link.peerNamespaceID else { continue }
            unsettled.nsids.insert(nsid)
            unsettled.hostNames[nsid] = link.name
        }
        return unsettled
    }

    /// Whether `span` has passed from `since` to `wall` (wall-clock seconds, as links are seen).
    static func hasPassed(_ span: Duration, since: Double, at wall: Double) -> Bool {
        let (seconds, attoseconds) = span.components
        return wall - since >= Double(seconds) + Double(attoseconds) / 1e18
    }

    /// A tap (a tun device in TAP mode, an Ethernet device): a virtual machine's NIC if a running
    /// domain's status names it, whatever its name (libvirt's own `vnetN` or one the domain
    /// chose); counted under its own name otherwise. A tun device in TUN mode (a VPN's) is no
    /// machine's and never waits.
    public static func isTap(_ link: Link) -> Bool {
        link.kind == "tun" && link.arpType == ARPHRD.ether
    }

    // MARK: Inputs

    /// The start dump: every host-side link is looked up at once and, if its owner is not
    /// found, counted under its own name — a restored epoch resumes only from the start dump.
    public mutating func start(_ links: [Link], at wall: Double, lookUp: (Unsettled) -> OwnerLookups) -> [Link] {
        var links = links
        for link in links { _ = observe(link, at: wall) }
        defer { table.compact() }
        guard !isSettled else { return links.map(rewritten) }
        _ = settle(lookUp(unsettled), at: wall, final: true)
        for index in links.indices { links[index] = rewritten(links[index]) }
        return links
    }

    /// Link events and resync dumps, rewritten: waiting links left out, attributed ones renamed
    /// and turned round.
    public mutating func apply(_ observations: [LinkObservation], at wall: Double) -> [LinkObservation] {
        guard !observations.isEmpty else { return observations }
        var output: [LinkObservation] = []
        output.reserveCapacity(observations.count)
        for observation in observations {
            switch observation {
            case .event(.newOrChanged(let link)) where Self.leftHomeUnused(link) && pairsAtHome.contains(link.key):
                // A pair that outwaited its grace at home, an end of which a runtime moved only
                // now: it carried nothing under its own name, which closes here, and it is
                // counted as its owner's from zero once a look names the owner.
                remove(link.key)
                output.append(.event(.deleted(link)))
                if let shown = observe(link, at: wall) { output.append(.event(.newOrChanged(shown))) }
            case .event(.newOrChanged(let link)):
                if let shown = observe(link, at: wall) { output.append(.event(.newOrChanged(shown))) }
            case .event(.deleted(let link)) where table.unnumbered.contains(link.key):
                // Gone before a look could say whose: its own name, never the number's next owner.
                guard case .waiting(let last, _)? = entries[link.key] else { continue }
                table.set(link.key, .plain)
                output.append(.event(.newOrChanged(last)))
                if let shown = delete(link) { output.append(.event(.deleted(shown))) }
            case .event(.deleted(let link)):
                // Raised against the host end as it is now: a change applied since the end's
                // deletion (its going down, with what the host sent meanwhile) is newer than the
                // counters the meter saw then, and a raise below it would be taken as an older reading.
                if let theirs = finals.take(for: link.key), let counters = raised(link.key, to: theirs),
                   let raised = raise(link.key, to: counters) {
                    output.append(.event(.newOrChanged(raised)))
                }
                if let shown = delete(link) { output.append(.event(.deleted(shown))) }
            case .peer(let nsid, .deleted(let end)):
                // Only an end's deletion brings counters the host end may not have: any other
                // message about an index in the container proves nothing about whose link it is.
                if let (key, counters) = finalCounters(byPeer: end, nsid: nsid) { finals.reported(counters, for: key) }
            case .hostMark(let ifindex, let deleted):
                finals.mark(LinkKey(.own, ifindex: ifindex), deleted: deleted)
            case .peer:
                break
            case .peerEventsLost(let link):
                // Only an owner's figures take a container end's counters; nobody else's can miss them.
                if case .owned(_, _, let last)? = entries[link.key] { output.append(.peerEventsLost(before: last.link)) }
            case .namespaceIDDeleted(let nsid):
                output += forget(nsid)
            case .resync(let links, let namespace, let unparseable):
                guard namespace == .own else { output.append(observation); continue }
                let present = Set(links.map(\.key))
                for key in present { finals.drop(key) }
                for key in Array(entries.keys) + Array(plain) where !present.contains(key) { remove(key) }
                output.append(.resync(links: links.compactMap { observe($0, at: wall) }, namespace: namespace,
                                      unparseable: unparseable))
                table.compact()
            }
        }
        return output
    }

    /// A sample's counters: attributed links' turned round, waiting links' kept and left out.
    /// Runs for every link every sample: attributed links are found in ``turning`` (a box
    /// each), and the table of entries, whose waiting links are whole `Link`s, is read only while
    /// some wait.
    public mutating func apply(readings: [CounterReading]) -> [CounterReading] {
        guard !entries.isEmpty else { return readings }
        if !finals.isEmpty {
            for reading in readings { finals.drop(reading.key) }
        }
        var readings = readings
        let anyWithheld = table.withheldCount > 0
        var withheld = false
        readings.withUnsafeMutableBufferPointer { readings in
            for index in readings.indices where readings[index].namespace == .own {
                if let last = table.turning[readings[index].ifindex] {
                    readings[index].counters = readings[index].counters.turnedRound
                    last.counters = readings[index].counters
                } else if anyWithheld, let entry = entries[readings[index].key] {
                    switch entry {
                    case .waiting:
                        table.updateWaiting(readings[index].key, counters: readings[index].counters)
                        withheld = true
                    case .home:
                        withheld = true
                    case .owned, .plain:
                        break
                    }
                }
            }
        }
        if withheld {
            readings.removeAll { reading in
                switch entries[reading.key] {
                case .waiting?, .home?: true
                default: false
                }
            }
        }
        return readings
    }

    // MARK: Transitions

    /// The link as the meter should see it; nil while it waits.
    private mutating func observe(_ link: Link, at wall: Double) -> Link? {
        guard link.namespace == .own else { return link }
        switch table.entry(link.key) {
        case .owned(let owner, var nsid, let last)?:
            if nsid != Self.unbound, let now = link.peerNamespaceID, now != nsid {
                // Its end was moved to another namespace: the link stays its owner's, but no
                // longer vouches for whose the namespace numbered `nsid` is. (No nsid at all
                // means the end is being deleted, and its final counters are still to come.)
                unbind(link.key)
                nsid = Self.unbound
            }
            let shown = Self.shown(link, as: owner.alias == link.name ? owner : owner.with(alias: link.name))
            last.update(shown)
            if shown.owner !== owner { table.set(link.key, .owned(shown.owner!, nsid: nsid, last: last)) }
            return shown
        case .waiting(_, let since)?:
            table.set(link.key, .waiting(link, since: since))
            return nil
        case .plain?:
            return link
        case .home?:
            return nil
        case nil:
            if Self.isTap(link) {
                table.set(link.key, .waiting(link, since: wall))
                return nil
            }
            // The first end of a new pair is announced before its peer exists (no IFLA_LINK yet).
            if link.kind == "veth", link.peerNamespaceID == nil, link.parent != link.ifindex {
                if let peer = link.parent, case .owned? = entries[LinkKey(link.namespace, ifindex: peer)] {
                    table.set(link.key, .home(of: LinkKey(link.namespace, ifindex: peer)))
                    return nil
                }
                // Both ends here: Docker and LXC make a pair so and move one end into the
                // container (Docker 0.2 s later). It waits, so that the end that stays is named by
                // its owner from its first byte and the one that leaves is never a name of its
                // own; one still here after the grace is counted under its own name, from zero.
                table.set(link.key, .waiting(link, since: wall))
                return nil
            }
            guard link.kind == "veth", let nsid = link.peerNamespaceID else { return link }
            if let owner = bindings.owner(of: nsid) {
                attribute(link, to: owner, nsid: nsid)
                return rewritten(link)
            }
            table.set(link.key, .waiting(link, since: wall))
            return nil
        }
    }

    private mutating func delete(_ link: Link) -> Link? {
        guard link.namespace == .own else { return link }
        switch table.entry(link.key) {
        case .owned?:
            let shown = rewritten(link)
            remove(link.key)
            return shown
        case .waiting(let last, _)?:
            table.set(link.key, nil)
            if last.peerNamespaceID == nil, let peer = link.parent ?? last.parent, movedAway(from: LinkKey(link.namespace, ifindex: peer)) {
                // Moved into a container, not deleted: its peer leads there now.
                return nil
            }
            departed.append((last, link))
            return nil
        case .plain?:
            remove(link.key)
            return link
        case .home(let host)?:
            table.set(link.key, nil)
            if let counters = link.counters { finals.confirm(counters, for: host) }
            return nil
        case nil:
            return link
        }
    }

    /// A veth of the daemon's namespace that leads to another one and has carried no byte.
    private static func leftHomeUnused(_ link: Link) -> Bool {
        guard link.namespace == .own, link.kind == "veth", link.peerNamespaceID != nil, let counters = link.counters else { return false }
        return counters.rxBytes == 0 && counters.txBytes == 0
    }

    /// True when the link at `key` leads to another namespace now (its end went there).
    private func movedAway(from key: LinkKey) -> Bool {
        switch entries[key] {
        case .waiting(let link, _)?: link.peerNamespaceID != nil
        case .owned?: true
        default: false
        }
    }

    mutating func remove(_ key: LinkKey) {
        finals.drop(key)
        pairsAtHome.remove(key)
        unbind(key)
        table.set(key, nil)
    }

    /// `link` renamed and turned round if it is attributed, as it is otherwise.
    func rewritten(_ link: Link) -> Link {
        guard link.namespace == .own, case .owned(let owner, _, _)? = entries[link.key] else { return link }
        return Self.shown(link, as: owner)
    }

    static func shown(_ link: Link, as owner: LinkOwner) -> Link {
        var shown = link
        shown.name = owner.subject
        shown.owner = owner
        shown.counters = link.counters?.turnedRound
        // The tun driver reports no RFC 2863 state (`ip link` says UNKNOWN): a tap that is up
        // with its carrier on is a running machine's NIC that is up.
        if link.operState == .unknown, link.flags.isSuperset(of: [.up, .lowerUp]) { shown.operState = .up }
        return shown
    }
}
