import IfMeterCore

/// The states a link can be in (``Attribution``'s entries) and what a look is asked.
extension Attribution {
    public enum Entry: Hashable, Sendable {
        // Boxed: a Link is some 250 bytes, and every entry would be that large.
        indirect case waiting(Link, since: Double)
        case owned(LinkOwner, nsid: Int32, last: LastSeen)
        case plain
        /// The container's end of the attributed link at that key, come back into the daemon's
        /// namespace as its runtime takes the container down (Docker moves it back before it
        /// deletes it): never counted — its counters are the container's, which the host end
        /// counted —; its deletion raises the host end as a peer's would.
        case home(of: LinkKey)
    }

    /// An attributed link as the meter last saw it, changed in place by every sample's reading
    /// (a box: writing a link back into the table for each reading was most of the cost). Its
    /// counters are kept apart from the rest: a reading replaces them in place, where setting a
    /// link's counters boxes them anew.
    public final class LastSeen: Hashable, @unchecked Sendable {
        private var seen: Link
        var counters: LinkCounters?

        init(_ link: Link) {
            seen = link
            seen.counters = nil
            counters = link.counters
        }

        public var link: Link {
            var link = seen
            link.counters = counters
            return link
        }

        /// The link seen again; a sight without counters keeps the last ones.
        func update(_ link: Link) {
            if let counters = link.counters { self.counters = counters }
            seen = link
            seen.counters = nil
        }

        public static func == (lhs: LastSeen, rhs: LastSeen) -> Bool { lhs.link == rhs.link }
        public func hash(into hasher: inout Hasher) { hasher.combine(link) }
    }

    /// Which owners a link is counted as.
    public enum Scope: String, Hashable, Sendable, CaseIterable {
        /// Containers and machines (Podman, Docker, nspawn, LXC), virtual machines (libvirt), and
        /// the namespaces their runtimes bound but have not named: their host-side links have
        /// names nobody chose, which the runtimes give to the next container or machine. A link into a namespace someone named (`ip netns
        /// add vpn`, a service's) keeps the name its admin gave it.
        case containers
        /// Every owner found: bound namespaces and those only processes hold too.
        case all
    }

    /// What a look has to find.
    public struct Unsettled: Hashable, Sendable {
        /// The nsids links wait on, and the host-side names leading there.
        public var nsids: Set<Int32> = []
        public var hostNames: [Int32: String] = [:]
        /// The taps waiting for a virtual machine to claim them, by ifindex.
        public var taps: [Int32: TapSight] = [:]

        public init(nsids: Set<Int32> = [], hostNames: [Int32: String] = [:], taps: [Int32: TapSight] = [:]) {
            self.nsids = nsids
            self.hostNames = hostNames
            self.taps = taps
        }

        public var isEmpty: Bool { nsids.isEmpty && taps.isEmpty }
    }
}

/// ``Attribution``'s links by state, with what it keeps beside them to read a sample fast: the
/// attributed links of the daemon's own namespace by ifindex (``turning``), and how many links
/// are withheld from the meter. ``set(_:_:)`` is the one writer, so those never drift.
struct AttributionTable: Sendable {
    /// The links waiting, attributed or home. Plain ones are in ``plain``: on a host whose veths
    /// all lead into namespaces someone named, that is every link, and a key is all it needs.
    private(set) var entries: [LinkKey: Attribution.Entry] = [:]
    private(set) var plain: Set<LinkKey> = []
    /// The attributed links of the daemon's own namespace by ifindex, for the readings.
    private(set) var turning: [Int32: Attribution.LastSeen] = [:]
    /// Waiting and home links: readings are looked up only while there are some.
    private(set) var withheldCount = 0
    /// Waiting links whose nsid the kernel deleted while they waited (``Attribution``'s
    /// `forget`); a link leaves it as it settles.
    var unnumbered: Set<LinkKey> = []

    /// A link's state, plain ones included.
    func entry(_ key: LinkKey) -> Attribution.Entry? {
        entries[key] ?? (plain.contains(key) ? .plain : nil)
    }

    mutating func set(_ key: LinkKey, _ entry: Attribution.Entry?) {
        switch entries[key] {
        case .waiting?, .home?: withheldCount -= 1
        default: break
        }
        switch entry {
        case .waiting?: withheldCount += 1
        case .home?:
            withheldCount += 1
            if !unnumbered.isEmpty { unnumbered.remove(key) }
        default:
            if !unnumbered.isEmpty { unnumbered.remove(key) }
        }
        if key.namespace == .own {
            if case .owned(_, _, let last)? = entry { turning[key.ifindex] = last } else { turning[key.ifindex] = nil }
        }
        if case .plain? = entry {
            plain.insert(key)
            entries[key] = nil
        } else {
            plain.remove(key)
            entries[key] = entry
        }
    }

    /// A waiting link's latest counters, read by a sample: its state is unchanged, so nothing
    /// kept beside it is.
    mutating func updateWaiting(_ key: LinkKey, counters: LinkCounters) {
        guard case .waiting(var link, let since)? = entries[key] else { return }
        link.counters = counters
        entries[key] = .waiting(link, since: since)
    }

    /// A dump enters every link as waiting before most turn plain, and a dictionary keeps the
    /// capacity it once needed: 8192 slots of 32 bytes for 4000 links that are all plain after.
    mutating func compact() {
        guard entries.capacity > 2 * entries.count + 64 else { return }
        entries = Dictionary(uniqueKeysWithValues: entries.map { ($0.key, $0.value) })
    }
}
