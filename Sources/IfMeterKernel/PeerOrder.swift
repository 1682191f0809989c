import IfMeterCore

/// How one read of a feed's two event sockets is put back in the kernel's order, and where the
/// peers socket's losses may have hidden an end's final counters (docs/NAMESPACES.md).
///
/// The kernel sends a container's end's deletion (to the peers socket) before its host end's
/// (to the own socket), and frees an nsid (own) after the deletions in that namespace it was
/// heard by (peers). A read takes the peers socket (P1), then the own one (O), and, when O
/// holds a deletion, the peers socket again through everything queued there then (P2): the
/// kernel sent it the ends' deletions, and its copies of O's deletions, before O was read. P1
/// and P2 go just before O's first deletion. Which end's counters a host end takes is decided
/// by the kernel's order on the peers socket alone (``LinkObservation/hostMark(ifindex:deleted:)``).
enum PeerOrder {
    /// Whether the peers' messages sent before `observation` must be read before it is applied.
    static func needsPeers(_ observation: LinkObservation) -> Bool {
        switch observation {
        case .event(.deleted), .namespaceIDDeleted: true
        default: false
        }
    }

    /// `own`, with `peers` just before its first observation that needs them (at the end when
    /// none does), and before each deletion while `lost` a ``LinkObservation/peerEventsLost(before:)``.
    static func merged(own: [LinkObservation], peers: [LinkObservation], lost: Bool) -> [LinkObservation] {
        var merged: [LinkObservation] = []
        merged.reserveCapacity(own.count + peers.count)
        var peersPlaced = false
        for observation in own {
            if !peersPlaced, needsPeers(observation) {
                merged += peers
                peersPlaced = true
            }
            if lost, case .event(.deleted(let link)) = observation { merged.append(.peerEventsLost(before: link)) }
            merged.append(observation)
        }
        if !peersPlaced { merged += peers }
        return merged
    }
}

/// Whether a deletion read now may have lost its other end's final counters to the peers
/// socket's overflow, as plain value state. The end's deletion is sent just before its host
/// end's, so a loss found on the peers socket covers the deletions read with it and those the
/// kernel had not queued yet when the own socket was read: the window stays open through the
/// next read, and for at least ``hold`` after the last loss, whichever ends later. A label may
/// be given where nothing was lost, never withheld where something was.
struct PeerLossWindow: Hashable, Sendable {
    /// Far longer than the kernel takes between an end's deletion and its host end's.
    static let hold = 10.0

    /// Boot-time seconds of the last loss found; nil while closed.
    private(set) var lastLoss: Double?
    /// Reads finished since the last loss was found (the one that found it included).
    private var readsSince = 0
    /// Reads that found the peers socket had lost messages.
    private(set) var losses = 0

    var isOpen: Bool { lastLoss != nil }

    /// A read of the peers socket found messages lost, at `now`.
    mutating func lost(at now: Double) {
        lastLoss = now
        readsSince = 0
        losses += 1
    }

    /// A read (both sockets, merged) is finished at `now`.
    mutating func readFinished(at now: Double) {
        guard let lastLoss else { return }
        readsSince += 1
        if readsSince >= 2, now - lastLoss >= Self.hold { self.lastLoss = nil }
    }
}
