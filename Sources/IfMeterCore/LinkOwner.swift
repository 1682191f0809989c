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
        public var noun: String {
            switch prefix {
            case .container: "container"
            case .vm: "virtual machine"
            case .pod: "pod"
            case .netns: "namespace"
            }
        }

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

/// The names history is kept under, besides interface names: an owner's subject is
/// `container:NAME`, `vm:NAME` or `netns:NAME` (no interface name has a `:`, so the two never
/// meet), and a link metered inside a namespace is `netns:NAME/IFACE`.
public enum SubjectName {
    public enum Prefix: String, Sendable, CaseIterable {
        /// A Kubernetes pod, `pod:NAMESPACE/NAME`: the one owner name that holds a `/`.
        case container, vm, pod, netns
    }

    /// `container:web`.
    public static func owned(_ prefix: Prefix, _ name: String) -> String { prefix.rawValue + ":" + name }

    /// The prefix and owner's name of an owner's subject; nil for an interface name.
    public static func owner(of subject: String) -> (prefix: Prefix, name: String)? {
        guard let colon = subject.utf8.firstIndex(of: UInt8(ascii: ":")),
              let prefix = Prefix(rawValue: String(subject[..<colon])) else { return nil }
        let name = String(subject[subject.index(after: colon)...])
        return name.isEmpty ? nil : (prefix, name)
    }

    /// The label of an owner's subject counted on the host side of its link, whose counters are
    /// the owner's traffic seen from the host, turned round: `host-side-veth` for a container,
    /// pod or namespace, `host-side-tap` for a virtual machine; nil for any other subject
    /// (`netns:vpn/tun0`, a link metered inside its namespace, is its own).
    public static func hostSideLabel(_ subject: String) -> EstimateLabel? {
        guard let owner = owner(of: subject) else { return nil }
        switch owner.prefix {
        case .vm: return .hostSideTap
        case .pod, .container: return .hostSideVeth
        case .netns: return owner.name.utf8.contains(UInt8(ascii: "/")) ? nil : .hostSideVeth
        }
    }

    /// A pod's namespace and name, from its subject's owner name `NAMESPACE/NAME`.
    public static func pod(_ name: String) -> (namespace: String, name: String)? {
        guard let slash = name.firstIndex(of: "/") else { return nil }
        return (String(name[..<slash]), String(name[name.index(after: slash)...]))
    }
}
