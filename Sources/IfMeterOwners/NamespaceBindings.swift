import IfMeterCore

/// What was found by a peer namespace's number (its nsid, ``Attribution``): the namespace's
/// owner, and which host link each index there is the peer of. The kernel may give a deleted
/// number to the next namespace, and an index in a container to the next link, so nothing here
/// is kept longer than a link that found it.
struct NamespaceBindings: Sendable {
    private struct PeerKey: Hashable, Sendable {
        var nsid: Int32
        var ifindex: Int32
    }

    /// Owners found, by nsid, while a link leads there: a second link into the same namespace,
    /// or one re-created, needs no look.
    private var owners: [Int32: FoundOwner] = [:]
    /// Attributed links by their peer: the nsid of its namespace and its ifindex there.
    private var hosts: [PeerKey: LinkKey] = [:]

    func owner(of nsid: Int32) -> FoundOwner? {
        owners[nsid]
    }

    /// The attributed link whose peer is `ifindex` in the namespace numbered `nsid`.
    func host(ofPeer ifindex: Int32, in nsid: Int32) -> LinkKey? {
        hosts[PeerKey(nsid: nsid, ifindex: ifindex)]
    }

    /// `host` was found to lead to `owner`'s namespace numbered `nsid`, to its `peer` there.
    mutating func bind(_ host: LinkKey, peer: Int32?, in nsid: Int32, owner: FoundOwner) {
        owners[nsid] = owner
        if let peer { hosts[PeerKey(nsid: nsid, ifindex: peer)] = host }
    }

    /// `host` is no longer found by its peer's index in `nsid`.
    mutating func unbind(_ host: LinkKey, peer: Int32?, in nsid: Int32) {
        guard let peer, hosts[PeerKey(nsid: nsid, ifindex: peer)] == host else { return }
        hosts[PeerKey(nsid: nsid, ifindex: peer)] = nil
    }

    /// No link leads to the namespace numbered `nsid` by that number any more.
    mutating func forget(_ nsid: Int32) {
        owners[nsid] = nil
    }
}
