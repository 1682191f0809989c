import IfMeterCore

/// A container end's final counters, reported as the end is deleted, on their way to its host
/// end (``Attribution``): pending until the peers socket says what followed for that host end
/// (its copy of the own namespace's messages, in the kernel's order among the ends' deletions:
/// ``LinkObservation/hostMark(ifindex:deleted:)``), then confirmed until the own socket's
/// deletion of the host end applies them. The host end's deletion next confirms them (the
/// kernel deletes both ends of a veth together); any change of it next drops them (the message
/// was about another link that took the end's index in the container, or the end was moved
/// away: nothing a tenant does there moves the figures).
struct PeerFinals: Sendable {
    /// Reported and not yet followed by the host end's mark, by the host end's key.
    private var pending: [LinkKey: LinkCounters] = [:]
    /// Confirmed (the end's own), by the host end's key.
    private var confirmed: [LinkKey: LinkCounters] = [:]

    var isEmpty: Bool { pending.isEmpty && confirmed.isEmpty }

    /// The container's end of the link at `host` was deleted with `counters`.
    mutating func reported(_ counters: LinkCounters, for host: LinkKey) {
        pending[host] = counters
    }

    /// What followed for `host` on the peers socket: its deletion confirms what its end
    /// reported, anything else drops it.
    mutating func mark(_ host: LinkKey, deleted: Bool) {
        if let counters = pending.removeValue(forKey: host), deleted { confirmed[host] = counters }
    }

    /// Counters known to be the end's own, without a mark (the end came home and was deleted here).
    mutating func confirm(_ counters: LinkCounters, for host: LinkKey) {
        confirmed[host] = counters
    }

    /// The confirmed counters for `host`, taken as its deletion comes.
    mutating func take(for host: LinkKey) -> LinkCounters? {
        confirmed.removeValue(forKey: host)
    }

    /// Forgets whatever `host`'s end reported: the host end changed, or is no longer the link it was.
    mutating func drop(_ host: LinkKey) {
        pending[host] = nil
        confirmed[host] = nil
    }
}
