import IfMeterCore
import IfMeterJSON

extension LinkOwner.Kind {
    /// A Podman container: its name and id from Podman's own state.
    public static let podman = LinkOwner.Kind("podman", prefix: .container)
}

/// Podman's containers, from its storage (`GRAPHROOT/overlay-containers`): `containers.json`
/// lists them with their names, in the order they were created, and each one's
/// `userdata/config.json` (its OCI spec) holds its network namespace's path. Each file is read
/// again only when it changed.
public final class PodmanSource: OwnerSource {
    public static let kind = LinkOwner.Kind.podman
    public static let fuzzSeeds = ["podman-containers.json", "oci-config.json"]

    private let storage: String
    /// Each container's namespace path, by id, read again when its spec changes.
    private var specs: [String: CachedFile<String?>] = [:]
    private var listed = CachedFile<[(id: String, name: String)]>()
    /// The paths as the last look read them, by id: a cgroup's claim is checked against them.
    private var namespaces: [String: String] = [:]
    private var names: [String: String] = [:]

    public init(paths: OwnerPaths) { storage = paths.podmanStorage }

    public func find(_ look: inout OwnerLook) {
        guard look.anySought else { return }
        let base = storage + "/overlay-containers"
        let ids = Set(SysfsReader.listDirectory(base).filter(ContainerID.isValid))
        specs = specs.filter { ids.contains($0.key) }
        var found: [String: String] = [:]
        for id in ids {
            // Absent until the container's first start, and rewritten with a new namespace at
            // every restart: read again whenever the file changed.
            var cached = specs[id] ?? CachedFile()
            if let path = cached.read(base + "/" + id + "/userdata/config.json", rootOwned: true, Self.networkNamespacePath(ociConfig:)) ?? nil {
                found[id] = path
            }
            specs[id] = cached
        }
        namespaces = found
        let containers = listed.read(base + "/containers.json", rootOwned: true, Self.containers(containersJSON:)) ?? []
        // In creation order: of containers sharing a namespace (a pod, `--network container:X`),
        // the first created names it, whatever order the files are listed in.
        names = Dictionary(containers.map { ($0.id, $0.name) }) { first, _ in first }
        for (id, name) in containers {
            guard let path = namespaces[id], let nsid = look.files.nsid(ofFile: path), look.isSought(nsid) else { continue }
            look.namespaces[nsid] = .found(FoundOwner(.podman, name: name, id: id))
        }
    }

    public func confirm(_ claim: CgroupClaim, nsid: Int32, files: inout NamespaceFiles) -> FoundOwner? {
        guard claim.kind == .podman, let name = names[claim.id], let path = namespaces[claim.id],
              files.nsid(ofFile: path) == nsid else { return nil }
        return FoundOwner(.podman, name: name, id: claim.id)
    }

    /// `containers.json` (containers/storage): each container's id and its first name (the one
    /// `podman ps` shows), in the file's order.
    public static func containers(containersJSON bytes: [UInt8]) -> [(id: String, name: String)] {
        var names: [(id: String, name: String)] = []
        var reader = JSONReader(bytes)
        do {
            try reader.readArray { element in
                var id: String?
                var first: String?
                try element.readObject { member, key in
                    switch key {
                    case "id": id = try member.readString()
                    case "names": first = try member.readStrings().first
                    default: try member.skipValue()
                    }
                }
                if let id, let first, ContainerID.isValid(id), OwnerName.isAcceptable(first) { names.append((id, first)) }
            }
        } catch {
            return names
        }
        return names
    }

    /// The network namespace path of an OCI runtime spec (a container's `userdata/config.json`):
    /// `linux.namespaces[type == "network"].path`.
    public static func networkNamespacePath(ociConfig bytes: [UInt8]) -> String? {
        var reader = JSONReader(bytes)
        var path: String?
        do {
            try reader.readObject { top, key in
                guard key == "linux" else { return try top.skipValue() }
                try top.readObject { linux, key in
                    guard key == "namespaces" else { return try linux.skipValue() }
                    try linux.readArray { element in
                        var type: String?
                        var found: String?
                        try element.readObject { member, key in
                            switch key {
                            case "type": type = try member.readString()
                            case "path": found = try member.readString()
                            default: try member.skipValue()
                            }
                        }
                        if type == "network", let found, !found.isEmpty { path = found }
                    }
                }
            }
        } catch {
            return nil
        }
        return path
    }

    public static func fuzz(_ bytes: [UInt8]) {
        for (id, name) in containers(containersJSON: bytes) where !OwnerName.isAcceptable(name) || !ContainerID.isValid(id) {
            fatalError("podman state gave \(id) \(name)")
        }
        _ = networkNamespacePath(ociConfig: bytes)
    }

    public static func names(seed bytes: [UInt8]) -> Bool {
        !containers(containersJSON: bytes).isEmpty || networkNamespacePath(ociConfig: bytes) != nil
    }
}
