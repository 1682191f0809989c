import IfMeterCore
import IfMeterJSON

extension LinkOwner.Kind {
    /// A Docker container: its name and id from Docker's own state.
    public static let docker = LinkOwner.Kind("docker", prefix: .container)
}

/// Docker's containers, from its data root (`DATA-ROOT/containers/ID/config.v2.json`): each
/// one's id, name and network namespace (`NetworkSettings.SandboxKey`). Each file is read again
/// only when it changed.
public final class DockerSource: OwnerSource {
    public static let kind = LinkOwner.Kind.docker
    public static let fuzzSeeds = ["docker-config.v2.json"]

    typealias Container = (id: String, name: String, sandbox: String)

    private let root: String
    private var configs: [String: CachedFile<Container?>] = [:]

    public init(paths: OwnerPaths) { root = paths.dockerRoot }

    public func find(_ look: inout OwnerLook) {
        guard look.anySought else { return }
        let base = root + "/containers"
        let ids = Set(SysfsReader.listDirectory(base).filter(ContainerID.isValid))
        configs = configs.filter { ids.contains($0.key) }
        for id in ids.sorted() {
            var cached = configs[id] ?? CachedFile()
            // A file naming another container than its directory is not believed.
            if let container = cached.read(base + "/" + id + "/config.v2.json", rootOwned: true, Self.container(configV2:)) ?? nil, container.id == id,
               let nsid = look.files.nsid(ofFile: container.sandbox), look.isSought(nsid) {
                look.namespaces[nsid] = .found(FoundOwner(.docker, name: container.name, id: id))
            }
            configs[id] = cached
        }
    }

    public func confirm(_ claim: CgroupClaim, nsid: Int32, files: inout NamespaceFiles) -> FoundOwner? {
        guard claim.kind == .docker, let container = configs[claim.id]?.value ?? nil, container.id == claim.id,
              files.nsid(ofFile: container.sandbox) == nsid else { return nil }
        return FoundOwner(.docker, name: container.name, id: claim.id)
    }

    /// A container's `config.v2.json`: its id, its name (Docker writes `/web`) and its network
    /// namespace (`NetworkSettings.SandboxKey`, `/var/run/docker/netns/…`).
    public static func container(configV2 bytes: [UInt8]) -> (id: String, name: String, sandbox: String)? {
        var reader = JSONReader(bytes)
        var id: String?
        var name: String?
        var sandbox: String?
        do {
            try reader.readObject { top, key in
                switch key {
                case "ID": id = try top.readString()
                case "Name": name = try top.readString()
                case "NetworkSettings":
                    try top.readObject { settings, key in
                        if key != "SandboxKey" {
                            try settings.skipValue()
                        } else if !(try settings.readNull()) {
                            sandbox = try settings.readString()
                        }
                    }
                default: try top.skipValue()
                }
            }
        } catch {
            return nil
        }
        guard let id, ContainerID.isValid(id), let name, let sandbox, !sandbox.isEmpty else { return nil }
        let trimmed = name.hasPrefix("/") ? String(name.dropFirst()) : name
        guard OwnerName.isAcceptable(trimmed) else { return nil }
        return (id, trimmed, sandbox)
    }

    public static func fuzz(_ bytes: [UInt8]) {
        if let container = container(configV2: bytes),
           !OwnerName.isAcceptable(container.name) || !ContainerID.isValid(container.id) || container.sandbox.isEmpty {
            fatalError("docker state gave \(container)")
        }
    }

    public static func names(seed bytes: [UInt8]) -> Bool { container(configV2: bytes) != nil }
}
