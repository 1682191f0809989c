import IfMeterCore

extension LinkOwner.Kind {
    /// A namespace bound under `/run/netns` (`ip netns add NAME`) that no runtime claims.
    public static let netns = LinkOwner.Kind("netns", prefix: .netns)
}

/// Namespaces bound to a name: `ip netns`'s, Podman's, containerd's CRI's and CRI-O's
/// (`/run/netns`), Docker's sandboxes (`EXEC-ROOT/netns`). A name a runtime gives its containers'
/// namespaces (``isRuntimes(_:)``, any of Docker's) is a container's being started, until its
/// runtime's state says whose. Reads directory entries, no file's contents.
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
                let starting = runtimes || Self.isRuntimes(name)
                look.namespaces[nsid] = starting ? .starting(fallback: named) : .found(named)
            }
        }
    }

    /// A name a runtime gives the namespace of a container or pod it is starting, which its own
    /// state names once written: Podman's `netns-UUID`, containerd's CRI's `cni-UUID`, CRI-O's
    /// bare UUID (`NAMESPACES-DIR/netns/UUID`).
    static func isRuntimes(_ name: String) -> Bool {
        name.hasPrefix("netns-") || name.hasPrefix("cni-") || isUUID(name)
    }

    private static func isUUID(_ name: String) -> Bool {
        let groups = name.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.utf8.count) == [8, 4, 4, 4, 12]
            && groups.allSatisfy { $0.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) || (0x41...0x46).contains($0) } }
    }

    public static func fuzz(_ bytes: [UInt8]) {}

    public static func names(seed bytes: [UInt8]) -> Bool { false }
}
