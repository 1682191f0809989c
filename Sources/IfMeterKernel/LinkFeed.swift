import CLinkStats
import IfMeterCore
#if canImport(Glibc)
import Glibc
#endif

/// The kernel as a source of link observations and counter readings: a link event socket, a
/// dump socket, and the sysfs facts read when a link is announced. It keeps no meter state;
/// ``MeterService`` in IfMeterService decides what the observations mean.
///
/// Its sockets belong to the network namespace of the thread that created it, which is
/// `namespace` in every link and reading it gives.
public final class LinkFeed {
    public let namespace: NamespaceID
    private let dumps: NetlinkSocket
    public let events: LinkEventSocket
    /// Other namespaces' link deletions, once ``listenToPeers(adopting:)`` succeeded.
    public private(set) var peers: LinkEventSocket?
    private var peerLoss = PeerLossWindow()
    /// Adds what netlink does not say (sysfs facts, link speed) to each link; runs on dumps and
    /// events, never per sample.
    public var annotate: (inout Link) -> Void = { _ in }
    /// Put before every link's name: `netns:vpn/` for a namespace metered from inside, whose
    /// links are subjects of their own (docs/NAMESPACES.md). Nil for the daemon's own.
    public var namePrefix: String?

    /// Subscribes to link events first, so nothing that happens during the start dump is missed.
    public init(namespace: NamespaceID = .own, eventSocket: Int32? = nil) throws(KernelError) {
        self.namespace = namespace
        events = try LinkEventSocket(adopting: eventSocket)
        dumps = try NetlinkSocket()
    }

    /// A feed of the namespace bound at `path` (`/run/netns/vpn`): its sockets are made on a
    /// thread that joined it, and stay there (needs `CAP_SYS_ADMIN`). Its links carry
    /// `namespace` and are named `prefix` + their own name.
    public static func inside(namespaceFile path: String, namespace: NamespaceID, prefix: String) throws(KernelError) -> LinkFeed {
        let result = JoinedThread.run { () throws(KernelError) -> LinkFeed in
            // Without blocking: a FIFO at the configured path must not hold up the start.
            guard let fd = FileDescriptor(adopting: open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) else {
                throw KernelError(call: "open \(path)", errno: errno)
            }
            _ = try KernelError.check(ifm_enter_netns(fd.rawValue), "setns into \(path)")
            return try LinkFeed(namespace: namespace)
        }
        let feed = try result.get()
        feed.namePrefix = prefix
        return feed
    }

    /// Hears the link deletions of every namespace this one has an nsid for, on a socket of
    /// their own (needs `CAP_NET_BROADCAST`): attribution reads a container's end of its veth
    /// from them (``LinkEventSocket/Kind/peers``). `adopting` is one systemd passed.
    public func listenToPeers(adopting fd: Int32? = nil) throws(KernelError) {
        peers = try LinkEventSocket(.peers, adopting: fd)
    }

    /// Reads that found the peers socket had lost messages.
    public var peerLosses: Int { peerLoss.losses }

    /// Annotates `link` with what sysfs says about it now.
    public static func reading(_ sysfs: SysfsReader) -> (inout Link) -> Void {
        { link in
            let facts = sysfs.facts(for: link.name)
            link.sysfs = facts
            link.speedBitsPerSecond = facts.speedBitsPerSecond
        }
    }

    /// The start dump: every link, and how many messages could not be parsed.
    public func startDump() throws(KernelError) -> (links: [Link], unparseable: Int) {
        let links = try annotated(dumps.dumpLinks())
        return (links, dumps.unparseableInLastDump)
    }

    /// What one bounded read takes off the event socket (the daemon calls this whenever the
    /// socket is readable, so a burst is taken over several loop turns), with a full dump after
    /// it if events were lost.
    public func readEvents() throws(KernelError) -> [LinkObservation] {
        try readOnce().observations
    }

    /// Reads before a sample give up after this many (each up to 1024 messages): far more than
    /// the largest event-socket buffer holds, so only an endless flood reaches it.
    static let maximumReadsBeforeSample = 64

    /// Every queued link event, however many reads that takes, then a counters-only dump: the
    /// events were queued before the counters were read, so they come first. Reads stop once
    /// the own socket is empty: the peers socket's deletions matter only before an own
    /// deletion, and each read takes it first.
    public func sample() throws(KernelError) -> (linkEvents: [LinkObservation], readings: [CounterReading]) {
        (try readQueuedEvents(), try dumpCounters())
    }

    /// A sample's first half: every queued link event, however many reads that takes.
    public func readQueuedEvents() throws(KernelError) -> [LinkObservation] {
        var observations: [LinkObservation] = []
        for _ in 0..<Self.maximumReadsBeforeSample {
            let (read, messages) = try readOnce()
            observations += read
            if messages == 0 { break }
        }
        return observations
    }

    /// A sample's second half: the counters-only dump. It uses the dump socket alone, so it may
    /// run on another thread while nothing else here is called (the daemon stops reading
    /// events until its readings are applied: a resync would dump on the same socket).
    public func dumpCounters() throws(KernelError) -> [CounterReading] {
        var readings = try dumps.dumpCounters()
        if namespace != .own {
            for index in readings.indices { readings[index].namespace = namespace }
        }
        return readings
    }

    private func readOnce() throws(KernelError) -> (observations: [LinkObservation], messages: Int) {
        var peerEvents = try readPeers()
        let batch = try events.readEvents()
        var observations = batch.observations
        if namespace != .own {
            // A namespace metered from inside numbers other namespaces its own way: attribution
            // reads the daemon's nsids only.
            observations.removeAll { if case .namespaceIDDeleted = $0 { true } else { false } }
        }
        var moved: [(at: Int, peer: Link)] = []
        for index in observations.indices {
            switch observations[index] {
            case .event(.newOrChanged(var link)):
                stamp(&link)
                annotate(&link)
                observations[index] = .event(.newOrChanged(link))
            case .event(.deleted(var link)):
                if let peer = try peerLeftBehind(by: link) { moved.append((index, peer)) }
                stamp(&link)
                observations[index] = .event(.deleted(link))
            default:
                break
            }
        }
        // Before the deletion: the peer's change happened as its other end left.
        for (index, peer) in moved.reversed() { observations.insert(.event(.newOrChanged(peer)), at: index) }
        if let peers, observations.contains(where: PeerOrder.needsPeers) {
            // Everything queued there now, however many forgeries a tenant put in front: the
            // kernel sent it the copies of this read's deletions, and the ends' before them.
            peerEvents += try readPeers(through: peers.queuedBytes)
        }
        observations = PeerOrder.merged(own: observations, peers: peerEvents, lost: peerLoss.isOpen)
        peerLoss.readFinished(at: Self.bootSeconds())
        if batch.overflowed {
            observations.append(.resync(links: try annotated(dumps.dumpLinks()), namespace: namespace,
                                        unparseable: batch.unparseable))
        }
        return (observations, batch.messages)
    }

    /// One read of the peers socket, bounded or `through` a number of queued bytes; a loss found
    /// opens ``PeerLossWindow``.
    private func readPeers(through bytes: Int? = nil) throws(KernelError) -> [LinkObservation] {
        guard let peers else { return [] }
        let batch = try peers.readEvents(through: bytes)
        if batch.overflowed { peerLoss.lost(at: Self.bootSeconds()) }
        return batch.observations
    }

    private static func bootSeconds() -> Double {
        Double(SystemClock.now().sinceBootNanoseconds) / 1e9
    }

    /// A veth whose peer was in this namespace went away: if the peer is still here with its
    /// own peer in another namespace now, the link that went was moved there (Docker and LXC
    /// create both ends here and move one into the container). The kernel tells nothing about
    /// the end that stayed, whose peer is now elsewhere: it is read afresh.
    private func peerLeftBehind(by link: Link) throws(KernelError) -> Link? {
        guard link.kind == "veth", link.peerNamespaceID == nil, let index = link.parent, index != link.ifindex,
              var peer = try dumps.link(index: index), peer.peerNamespaceID != nil else { return nil }
        stamp(&peer)
        annotate(&peer)
        return peer
    }

    /// Annotated in place: the dump is the only reference to its array, so nothing is copied.
    private func annotated(_ links: consuming [Link]) -> [Link] {
        var links = links
        for index in links.indices {
            stamp(&links[index])
            annotate(&links[index])
        }
        return links
    }

    /// The feed's namespace, and its prefix on the name.
    private func stamp(_ link: inout Link) {
        link.namespace = namespace
        if let namePrefix { link.name = namePrefix + link.name }
    }
}

/// Runs a body on a fresh thread and waits for it: a thread that joins another namespace must
/// not be one the daemon goes on using.
enum JoinedThread {
    static func run<T>(_ body: @escaping () throws(KernelError) -> T) -> Result<T, KernelError> {
        let box = JoinedBox<T>(body)
        var thread = pthread_t()
        let unmanaged = Unmanaged.passRetained(box).toOpaque()
        let created = pthread_create(&thread, nil, { context in
            let runnable = Unmanaged<AnyObject>.fromOpaque(context!).takeRetainedValue() as! Runnable
            runnable.runOnce()
            return nil
        }, unmanaged)
        guard created == 0 else {
            Unmanaged<JoinedBox<T>>.fromOpaque(unmanaged).release()
            return .failure(KernelError(call: "pthread_create", errno: created))
        }
        pthread_join(thread, nil)
        return box.result!
    }
}

private protocol Runnable: AnyObject { func runOnce() }

/// The body and its result, between the two threads (joined before the result is read).
private final class JoinedBox<T>: Runnable, @unchecked Sendable {
    var body: (() throws(KernelError) -> T)?
    var result: Result<T, KernelError>?

    init(_ body: @escaping () throws(KernelError) -> T) { self.body = body }

    func runOnce() {
        guard let body else { return }
        result = Result { () throws(KernelError) -> T in try body() }
        self.body = nil
    }
}
