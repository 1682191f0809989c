import IfMeterCore

/// An owner as a look found it.
public struct FoundOwner: Hashable, Sendable {
    public var kind: LinkOwner.Kind
    public var name: String
    public var id: String
    /// A virtual machine's NIC: its position (from 1) among the domain's NICs.
    public var nic: Int32?

    public init(_ kind: LinkOwner.Kind, name: String, id: String, nic: Int32? = nil) {
        self.kind = kind
        self.name = name
        self.id = id
        self.nic = nic
    }
}

/// A tap as a look needs it: its name and hardware address.
public struct TapSight: Hashable, Sendable {
    public var name: String
    public var address: String

    public init(name: String, address: String) {
        self.name = name
        self.address = address
    }
}

/// What a look found: host-side veths' owners by the nsid of their peer's namespace, taps'
/// by their ifindex.
public struct OwnerLookups: Hashable, Sendable, ExpressibleByDictionaryLiteral {
    public var namespaces: [Int32: OwnerLookup]
    public var taps: [Int32: OwnerLookup]

    public init(namespaces: [Int32: OwnerLookup] = [:], taps: [Int32: OwnerLookup] = [:]) {
        self.namespaces = namespaces
        self.taps = taps
    }

    /// A look that found namespaces only: `[3: .found(web)]`.
    public init(dictionaryLiteral elements: (Int32, OwnerLookup)...) {
        self.init(namespaces: Dictionary(elements) { first, _ in first })
    }
}

/// What the directory found about one nsid.
public enum OwnerLookup: Hashable, Sendable {
    case found(FoundOwner)
    /// A namespace a runtime bound but no container of its state names yet: one being started
    /// (Podman writes its container's spec tens of milliseconds after the veth). `fallback` is
    /// what it is known by if that never changes.
    case starting(fallback: FoundOwner?)
    /// No namespace this process can see has that nsid.
    case unknown
}
