/// What the owner kinds share: the owner's own name in a subject's name.
enum OwnerLabels {
    /// The owner's name without the `#N` of its second link or NIC (the `interface` label
    /// keeps it), so that a sum by owner is the owner's.
    static func owner(_ name: Substring) -> Substring { name.prefix { $0 != "#" } }

    /// `container="web"`: the owner's name, up to a `/` (`netns:vpn/tun0` is the namespace's).
    static func named(_ key: String, _ name: Substring) -> [(key: String, value: String)] {
        [(key, String(owner(name).prefix { $0 != "/" }))]
    }
}
