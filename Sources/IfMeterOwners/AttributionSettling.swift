import IfMeterCore

/// How a look's findings settle the links waiting for them.
extension Attribution {
    /// Takes a look's findings: a waiting link whose owner was found is attributed; one still
    /// being set up waits until ``grace`` have passed since it was seen (or, with
    /// `final`, not at all), then takes the fallback; one nobody could find is plain. A link
    /// whose nsid the look did not cover (it began waiting after the look did) waits for the
    /// next, unless `final`. Returns what the meter should now see: each settled link as it is
    /// now, and each departed one's last sight and deletion.
    public mutating func settle(_ lookups: OwnerLookups, at wall: Double, final: Bool = false) -> [LinkObservation] {
        var output: [LinkObservation] = []
        let waiting = entries.compactMap { key, entry -> (key: LinkKey, link: Link, since: Double)? in
            if case .waiting(let link, let since) = entry { (key, link, since) } else { nil }
        }.sorted { $0.key < $1.key }
        for (key, link, since) in waiting {
            guard let lookup = finding(for: link, since: since, at: wall, in: lookups, final: final) else { continue }
            let expired = final || Self.hasPassed(grace, since: since, at: wall)
            guard let shown = resolve(link, key: key, lookup, expired: expired) else { continue }
            if link.kind == "veth", link.peerNamespaceID == nil { pairsAtHome.insert(key) }
            output.append(.event(.newOrChanged(shown)))
        }
        var later: [(last: Link, final: Link)] = []
        for (last, gone) in departed {
            guard let lookup = finding(for: last, since: -.infinity, at: wall, in: lookups, final: final) else {
                later.append((last, gone))
                continue
            }
            let shown = resolve(last, key: last.key, lookup, expired: true)!
            output.append(.event(.newOrChanged(shown)))
            output.append(.event(.deleted(rewritten(gone))))
            remove(last.key)
        }
        departed = later
        return output
    }

    /// What a look found for a waiting link's nsid, or for a tap; nil when it did not cover it.
    /// A veth whose both ends are here has no owner to find: once ``grace`` passed and no
    /// runtime moved an end away, it is counted under its own name.
    private func finding(for link: Link, since: Double, at wall: Double, in lookups: OwnerLookups, final: Bool) -> OwnerLookup? {
        if Self.isTap(link) { return lookups.taps[link.ifindex] ?? (final ? .unknown : nil) }
        guard let nsid = link.peerNamespaceID else { return final || Self.hasPassed(grace, since: since, at: wall) ? .unknown : nil }
        return lookups.namespaces[nsid] ?? (final ? .unknown : nil)
    }

    /// Settles a waiting link by a look's finding; nil when it goes on waiting.
    private mutating func resolve(_ link: Link, key: LinkKey, _ lookup: OwnerLookup, expired: Bool) -> Link? {
        switch lookup {
        case .found(let owner) where scope == .all || owner.kind.isRuntime:
            attribute(link, to: owner, nsid: link.peerNamespaceID ?? Self.unbound)
        case .found:
            table.set(key, .plain)
        case .starting(let fallback):
            guard expired else { return nil }
            if let fallback {
                attribute(link, to: fallback, nsid: link.peerNamespaceID ?? Self.unbound)
            } else {
                table.set(key, .plain)
            }
        case .unknown:
            table.set(key, .plain)
        }
        return rewritten(link)
    }

    /// Counts `link` as `owner`'s, found by the namespace numbered `nsid` (``unbound`` for a tap).
    mutating func attribute(_ link: Link, to owner: FoundOwner, nsid: Int32) {
        // Never two present links on one subject. A virtual machine's NICs are told apart by
        // their place in its definition, a second link into a namespace by its peer's ifindex
        // there; both stay across restarts (`vm:db#2`, `container:web#3`). A link whose subject
        // that would be is taken (another owner of the name running at the same time, a pod
        // re-created while its old sandbox goes; a NIC hot-plugged where one was unplugged) is
        // told apart by its own ifindex here.
        var taken: Set<Int32?> = []
        for (key, entry) in entries where key != link.key {
            guard case .owned(let other, _, _) = entry, other.kind.prefix == owner.kind.prefix, other.name == owner.name else { continue }
            taken.insert(other.peer)
        }
        var peer: Int32?
        if let nic = owner.nic {
            peer = nic > 1 ? nic : nil
        } else if taken.contains(nil) {
            peer = link.parent ?? link.ifindex
        }
        if taken.contains(peer) {
            var candidate = link.ifindex
            while taken.contains(candidate) { candidate = candidate &+ 1_000_000 }
            peer = candidate
        }
        let attributed = LinkOwner(kind: owner.kind, name: owner.name, id: owner.id, alias: link.name, peer: peer)
        table.set(link.key, .owned(attributed, nsid: nsid, last: LastSeen(Self.shown(link, as: attributed))))
        guard nsid != Self.unbound else { return }
        bindings.bind(link.key, peer: link.parent, in: nsid, owner: owner)
    }
}
