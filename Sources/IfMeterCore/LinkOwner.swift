/// Who owns the network namespace a host-side link leads into: a container, a machine, a named
/// namespace or, failing those, the namespace's first process; or the virtual machine a tap
/// leads into (docs/NAMESPACES.md). A class, so
/// a link carries one reference to it (links are held by the thousand), never a copy.
public final class LinkOwner: Hashable, Sendable, CustomStringConvertible {
    /// Where the owner's name comes from: a runtime (`podman`, `libvirt`), a bound name
    /// (`netns`), a process (`process`). Each is declared by the source that finds it
    /// (IfMeterOwners' `OwnerSource`s), so a new runtime needs nothing here.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// Its name in views, metrics and the log: `podman`, `libvirt`.
        public let rawValue: String
        /// The subject its owners are named by: `container:NAME`, `vm:NAME`, `netns:NAME`.
        public let prefix: SubjectName.Prefix

        public init(_ rawValue: String, prefix: SubjectName.Prefix) {
            self.rawValue = rawValue
            self.prefix = prefix
        }

        /// Named by a runtime (a container, machine or virtual machine), not by a bound name or
        /// a process.
        public var isRuntime: Bool { prefix != .netns }

        /// What the owner is, in a sentence: "container", "virtual machine", "namespace".
        public var noun: String { prefix.kind?.noun ?? prefix.rawValue }

        public var description: String { rawValue }
    }

    public let kind: Kind
    /// The owner's own name: the container's, the machine's, the namespace's, the unit's.
    public let name: String
    /// The runtime's id (a container id), the namespace's inode for the others.
    public let id: String
    /// The link's own name in the kernel, which its history is not kept under: `veth3` today,
    /// `veth0` after the container's next start.
    public let alias: String
    /// Set for a second link into the same owner's namespace (a container on two networks): the
    /// ifindex of its peer there, which tells the owner's links apart (`container:web#3`); for a
    /// virtual machine's NIC after its first, its position among the domain's NICs (`vm:db#2`).
    public let peer: Int32?

    public init(kind: Kind, name: String, id: String, alias: String, peer: Int32? = nil) {
        self.kind = kind
        self.name = name
        self.id = id
        self.alias = alias
        self.peer = peer
    }

    /// The same owner reached through a link now called `alias`.
    public func with(alias: String) -> LinkOwner { LinkOwner(kind: kind, name: name, id: id, alias: alias, peer: peer) }

    /// The name the link's history is kept under: `container:web`, `netns:blue`, `container:web#3`,
    /// `vm:db`.
    public var subject: String {
        SubjectName.owned(kind.prefix, name) + (peer.map { "#\($0)" } ?? "")
    }

    public var description: String { "\(subject) (\(kind.rawValue) \(id), via \(alias))" }

    public static func == (lhs: LinkOwner, rhs: LinkOwner) -> Bool {
        (lhs.kind, lhs.name, lhs.id, lhs.alias, lhs.peer) == (rhs.kind, rhs.name, rhs.id, rhs.alias, rhs.peer)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        hasher.combine(name)
        hasher.combine(id)
        hasher.combine(alias)
        hasher.combine(peer)
    }
}

/// The names history is kept under, besides interface names: an owner's subject is its kind's
/// prefix, a `:` and its name (``SubjectKind``; no interface name has a `:`, so the two never
/// meet), and a link metered inside a namespace is `netns:NAME/IFACE`.
public enum SubjectName {
    /// An owner kind's prefix, as an owner source declares it (`LinkOwner.Kind`).
    public struct Prefix: Hashable, Sendable, RawRepresentable {
        public let rawValue: String

        public init(rawValue: String) { self.rawValue = rawValue }

        /// The prefix of `kind`, which must have one.
        public init(_ kind: some SubjectKind) { self.init(rawValue: kind.prefix!) }

        public static let container = Prefix(ContainerKind())
        public static let vm = Prefix(VirtualMachineKind())
        /// A Kubernetes pod, `pod:NAMESPACE/NAME`.
        public static let pod = Prefix(PodKind())
        public static let netns = Prefix(NamespaceKind())

        /// The kind it names, if one is listed.
        public var kind: (any SubjectKind)? { SubjectKinds.kind(prefix: rawValue) }
    }

    /// `container:web`.
    public static func owned(_ prefix: Prefix, _ name: String) -> String { prefix.rawValue + ":" + name }

    /// The kind and owner's name of an owner's subject (one of ``SubjectSection/owners``);
    /// nil for an interface's or a network's.
    public static func owner(of subject: String) -> (kind: any SubjectKind, name: Substring)? {
        guard let found = SubjectKinds.kind(of: subject), found.kind.section == .owners else { return nil }
        return found
    }
}
