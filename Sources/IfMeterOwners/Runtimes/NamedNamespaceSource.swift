import IfMeterCore

extension LinkOwner.Kind {
    /// A namespace bound under `/run/netns` (`ip netns add NAME`) that no runtime claims.
    public static let netns = LinkOwner.Kind("netns", prefix: .netns)
}

/// Namespaces bound to a name: `ip netns`'s and Podman's (`/run/netns`), Docker's sandboxes
/// (`EXEC-ROOT/netns`). A name a runtime gives its containers' namespaces (Podman's `netns-UUID`,
/// CNI's `cni-UUID`, any of Docker's) is a container's being started, until its runtime's state
/// says whose. Reads directory entries, no file's contents.
public final class NamedNamespaceSource: OwnerSource {
    public static let kind = LinkOwner.Kind.netns
    public static let fuzzSeeds: [String] = []

    private let directories: [String]
    private let runtimeOwned: String

    public init(paths: OwnerPaths) {
        directories = paths.namedNamespaces
        runtimeOwned = paths.dockerNamespaces
    }

    public func find(_ look: inout OwnerLook) {
        guard look.anySought else { return }
        for directory in directories {
            let runtimes = directory == runtimeOwned
            for name in SysfsReader.listDirectory(directory).sorted() where OwnerName.isAcceptable(name) {
                guard let (nsid, inode) = look.files.nsidAndInode(ofFile: directory + "/" + name), look.isSought(nsid) else { continue }
                let named = FoundOwner(.netns, name: name, id: String(inode))
                let starting = runtimes || name.hasPrefix("netns-") || name.hasPrefix("cni-")
                look.namespaces[nsid] = starting ? .starting(fallback: named) : .found(named)
            }
        }
    }

    public static func fuzz(_ bytes: [UInt8]) {}

    public static func names(seed bytes: [UInt8]) -> Bool { false }
}
