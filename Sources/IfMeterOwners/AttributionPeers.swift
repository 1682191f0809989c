import IfMeterCore

/// How an attributed link is bound to its peer's namespace number and index there, and what
/// that peer says as it goes: a number the kernel deletes may name the next namespace, and an
/// index in a container may be the next link's, so nothing found by them outlives them.
extension Attribution {
    /// The nsid an attributed link was found by, once that number may name another namespace.
    static let unbound: Int32 = -1

    /// The namespace numbered `nsid` was destroyed: the number may go to the next namespace, so
    /// nothing found by it is kept, final counters an end reported by it included. Attributed links keep their owners, found when the number
    /// was theirs. A link gone while waiting on it is counted under its own name now: a later
    /// look would find whoever has the number next. A link still waiting on it is either the
    /// dying namespace's (the kernel deletes those links after the number) or already the next
    /// one's (the kernel frees the number before it says so, and may give it out in between):
    /// it is ``unnumbered`` — counted under its own name if it is deleted before a look, and
    /// settled by the look as any other if it is not.
    mutating func forget(_ nsid: Int32) -> [LinkObservation] {
        bindings.forget(nsid)
        let bound = entries.compactMap { key, entry -> LinkKey? in
            if case .owned(_, nsid, _) = entry { key } else { nil }
        }
        for key in bound {
            // An end's deletion merged before the number's: if the end was this link's, its host
            // end was deleted with it, before the number. One still here is the next namespace's,
            // which may have the number already (docs/NAMESPACES.md, "Two sockets").
            finals.drop(key)
            unbind(key)
        }
        for (key, entry) in entries {
            if case .waiting(let link, _) = entry, link.peerNamespaceID == nsid { table.unnumbered.insert(key) }
        }
        var output: [LinkObservation] = []
        departed.removeAll { pair in
            guard pair.last.peerNamespaceID == nsid else { return false }
            output.append(.event(.newOrChanged(pair.last)))
            output.append(.event(.deleted(pair.final)))
            return true
        }
        return output
    }

    /// The link at `key` keeps its owner but is no longer found by its nsid or its peer's index.
    mutating func unbind(_ key: LinkKey) {
        guard case .owned(let owner, let nsid, let last)? = entries[key] else { return }
        table.set(key, .owned(owner, nsid: Self.unbound, last: last))
        bindings.unbind(key, peer: last.link.parent, in: nsid)
        if !entries.values.contains(where: { if case .owned(_, nsid, _) = $0 { true } else { false } }) {
            bindings.forget(nsid)
        }
    }

    /// The container's end of an attributed link was deleted with these counters: its host
    /// end's key and the end's own counters (raised to when the host end goes, ``raised(_:to:)``).
    func finalCounters(byPeer peer: Link, nsid: Int32) -> (LinkKey, LinkCounters)? {
        guard let key = bindings.host(ofPeer: peer.ifindex, in: nsid),
              case .owned(_, let entryNsid, _)? = entries[key], entryNsid == nsid,
              let theirs = peer.counters else { return nil }
        return (key, theirs)
    }

    /// The attributed link at `key` as the meter saw it last, raised counter by counter to its
    /// container end's own final counters `theirs`; nil when that changes nothing.
    func raised(_ key: LinkKey, to theirs: LinkCounters) -> LinkCounters? {
        guard case .owned(_, _, let last)? = entries[key], let ours = last.counters else { return nil }
        let raised = LinkCounters(
            rxBytes: max(ours.rxBytes, theirs.rxBytes), txBytes: max(ours.txBytes, theirs.txBytes),
            rxPackets: max(ours.rxPackets, theirs.rxPackets), txPackets: max(ours.txPackets, theirs.txPackets),
            rxErrors: max(ours.rxErrors, theirs.rxErrors), txErrors: max(ours.txErrors, theirs.txErrors),
            rxDropped: max(ours.rxDropped, theirs.rxDropped), txDropped: max(ours.txDropped, theirs.txDropped))
        return raised == ours ? nil : raised
    }

    /// The host end at `key` as the meter saw it last, with `counters`: what it counted up to
    /// its deletion.
    mutating func raise(_ key: LinkKey, to counters: LinkCounters) -> Link? {
        guard case .owned(_, _, let last)? = entries[key] else { return nil }
        last.counters = counters
        return last.link
    }
}
