import CLinkStats
import IfMeterCore
#if canImport(Glibc)
import Glibc
#endif

/// A socket subscribed to `RTNLGRP_LINK`, each message parsed by itself so a deletion carries
/// the kernel's final counters. Connected to the kernel: no other process can queue a unicast
/// datagram on it. Of two kinds:
/// - the own socket: links of its namespace appearing, changing and disappearing, and the nsids
///   of destroyed namespaces (`RTNLGRP_NSID`);
/// - a peers socket (``Kind/peers``): the link deletions of every namespace its own has an nsid
///   for (`NETLINK_LISTEN_ALL_NSID`), where a container's end of its veth reports its own
///   counters. Root in such a namespace can multicast forged datagrams to its link group, and
///   they reach every socket that listens there: kept apart, a tenant that overflows it costs
///   what only this socket says (its subjects' last moments), never a resync of the daemon's
///   own links.
///
/// Poll ``fileDescriptor`` for readability, then call ``readEvents()``.
public final class LinkEventSocket {
    /// What a socket hears.
    public enum Kind: Sendable {
        case own
        case peers
    }

    private let handle: OpaquePointer
    private var events = ifm_event_array()

    public let kind: Kind
    /// The socket's origin, for `status`: `own`, or `systemd` when it was passed in.
    public let origin: String

    /// Opens its own socket, or takes over `adopting` (a `NETLINK_ROUTE` socket systemd
    /// created with `ListenNetlink=route 1` and a large `ReceiveBuffer=`). A peers socket needs
    /// `CAP_NET_BROADCAST`.
    public init(_ kind: Kind = .own, adopting fd: Int32? = nil) throws(KernelError) {
        var handle: OpaquePointer?
        let peers: Int32 = kind == .peers ? 1 : 0
        let what = kind == .peers ? "netlink NETLINK_LISTEN_ALL_NSID (the peers socket)" : "netlink RTNLGRP_LINK subscription"
        if let fd {
            _ = try KernelError.check(ifm_nl_adopt_events(fd, peers, &handle), "\(what), on the socket passed by systemd")
            origin = "systemd"
        } else {
            _ = try KernelError.check(ifm_nl_open_events(&handle, peers), what)
            origin = "own"
        }
        self.kind = kind
        self.handle = handle!
    }

    deinit {
        ifm_event_array_free(&events)
        ifm_nl_close(handle)
    }

    public var fileDescriptor: Int32 { ifm_nl_fd(handle) }

    /// The bytes its receive queue holds now (datagrams at their kernel size), for
    /// ``readEvents(through:)``.
    public var queuedBytes: Int { max(0, Int(ifm_nl_queued_bytes(handle))) }

    /// The receive buffer the kernel granted, in bytes.
    public var receiveBufferSize: Int { Int(ifm_nl_rcvbuf(handle)) }

    /// What one read found on the socket.
    public struct Batch: Sendable {
        /// In the order the kernel sent them: an own socket's link events as
        /// ``LinkObservation/event(_:)`` and the nsids its namespace deleted, a peers socket's
        /// deletions as ``LinkObservation/peer(nsid:_:)`` among its copies of the own
        /// namespace's messages (``LinkObservation/hostMark(ifindex:deleted:)``). Only a link's own messages:
        /// per-family notifications (`AF_BRIDGE` port changes) are not events about the link
        /// and are left out.
        public var observations: [LinkObservation]
        /// True when events were lost — the kernel dropped some (`ENOBUFS`), a read failed, or
        /// a message could not be parsed: resynchronise with a full dump.
        public var overflowed: Bool
        /// Messages that could not be parsed (counted in `overflowed` too).
        public var unparseable: Int
        /// Link messages this read took off the socket, kept or not: zero when it was empty.
        public var messages: Int
    }

    /// Reads what is queued without blocking, up to a read's budget (1024 datagrams), or with
    /// `through` everything that was queued when ``queuedBytes`` said it held that many bytes;
    /// an empty batch when none are queued.
    public func readEvents(through bytes: Int? = nil) throws(KernelError) -> Batch {
        events.count = 0
        events.skipped = 0
        let result = bytes.map { ifm_nl_read_events_through(handle, &events, $0) } ?? ifm_nl_read_events(handle, &events)
        let overflowed = result == -ENOBUFS
        if !overflowed { _ = try KernelError.check(result, "netlink link event read") }
        var observations: [LinkObservation] = []
        observations.reserveCapacity(events.count)
        for raw in UnsafeBufferPointer(start: events.items, count: events.count) {
            if raw.type == Int32(IFM_EVENT_OWN_NEW_MARK) || raw.type == Int32(IFM_EVENT_OWN_DEL_MARK) {
                observations.append(.hostMark(ifindex: raw.link.ifindex, deleted: raw.type == Int32(IFM_EVENT_OWN_DEL_MARK)))
                continue
            }
            if raw.type == Int32(IFM_EVENT_DEL_NSID) {
                // Another namespace's own nsids say nothing about the numbers here.
                if raw.source_nsid < 0 { observations.append(.namespaceIDDeleted(raw.nsid)) }
                continue
            }
            // An AF_BRIDGE RTM_DELLINK means "left the bridge", not "deleted".
            guard raw.link.family == 0 else { continue }
            let link = Link(raw.link)
            let event: LinkEvent = raw.type == Int32(IFM_EVENT_DEL_LINK) ? .deleted(link) : .newOrChanged(link)
            observations.append(raw.source_nsid >= 0 ? .peer(nsid: raw.source_nsid, event) : .event(event))
        }
        let batch = Batch(observations: observations, overflowed: overflowed, unparseable: events.skipped,
                          messages: events.count + events.skipped)
        // A burst (thousands of links created at once) grows the array to 184 bytes an event;
        // it is not kept for the quiet reads after it.
        if events.capacity > Self.keptCapacity { ifm_event_array_free(&events) }
        return batch
    }

    /// Events a read's array keeps room for between reads: more than a quiet system queues.
    static let keptCapacity = 256
}
