import IfMeterCore

extension LinkOwner.Kind {
    /// None of the runtimes: the namespace's first process, named by its systemd unit or
    /// command.
    public static let process = LinkOwner.Kind("process", prefix: .netns)
}

/// The namespaces of running processes (`/proc/PID/ns/net`, which needs the right to trace the
/// process: root, or `CAP_SYS_PTRACE`), for what no other source named for certain: each
/// namespace's first process, and what its cgroup says about it. A cgroup that names a container
/// is believed only when that container's runtime vouches for it (``OwnerSource/confirm(_:nsid:files:)``).
public final class ProcessSource: OwnerSource {
    public static let kind = LinkOwner.Kind.process
    public static let fuzzSeeds = ["cgroup-docker", "cgroup-podman"]

    private let proc: String

    public init(paths: OwnerPaths) { proc = paths.proc }

    public func find(_ look: inout OwnerLook) {
        let unsettled = look.unsettled
        guard !unsettled.isEmpty else { return }
        var first: [Int32: (pid: Int, inode: UInt64)] = [:]
        for entry in SysfsReader.listDirectory(proc) {
            guard let pid = Int(entry), pid > 0 else { continue }
            guard let (nsid, inode) = look.files.nsidAndInode(ofFile: "\(proc)/\(pid)/ns/net"), unsettled.contains(nsid) else { continue }
            if let known = first[nsid], known.pid < pid { continue }
            first[nsid] = (pid, inode)
        }
        for (nsid, process) in first {
            let owner = owner(of: process.pid, inode: process.inode, nsid: nsid, look: &look)
            // A namespace a runtime bound is its container's, being started: the process in it
            // says nothing more unless the runtime's state names it (Docker writes the
            // container's SandboxKey after its veth is in place).
            if case .starting? = look.namespaces[nsid], !owner.kind.isRuntime { continue }
            look.namespaces[nsid] = .found(owner)
        }
    }

    private func owner(of pid: Int, inode: UInt64, nsid: Int32, look: inout OwnerLook) -> FoundOwner {
        let cgroup = StateFile.read("\(proc)/\(pid)/cgroup").map { String(decoding: $0, as: UTF8.self) } ?? ""
        switch Self.cgroupOwner(cgroup) {
        case .container(let claim)?:
            for source in look.sources {
                if let owner = source.confirm(claim, nsid: nsid, files: &look.files) { return owner }
            }
        case .unit(let unit)?:
            if OwnerName.isAcceptable(unit) { return FoundOwner(.process, name: unit, id: String(inode)) }
        case nil:
            break
        }
        let command = StateFile.read("\(proc)/\(pid)/comm").map { String(decoding: $0, as: UTF8.self).trimmingWhitespace() }
        let name = command.flatMap { OwnerName.isAcceptable($0) ? "\($0)-\(pid)" : nil } ?? "pid-\(pid)"
        return FoundOwner(.process, name: name, id: String(inode))
    }

    /// What a process's cgroup says about who started it.
    public enum CgroupOwner: Hashable, Sendable {
        /// A container of a runtime, as the runtime names its cgroups.
        case container(CgroupClaim)
        /// The systemd unit it runs in (`….service`, `….scope`).
        case unit(String)
    }

    /// What a process's `/proc/PID/cgroup` says: the container id of a Podman (`libpod-ID`) or
    /// Docker (`docker-ID.scope`, `/docker/ID`) container, or else the systemd unit of the
    /// unified or `name=systemd` hierarchy.
    ///
    /// Anyone can name a cgroup (`systemd-run --user --scope --unit libpod-ID`), so a container
    /// id counts only where its runtime puts it: `libpod-ID` right under `machine.slice`,
    /// `libpod_parent` or (rootless) a `user.slice`; `docker-ID.scope` right under
    /// `system.slice`; `/docker/ID` at the top. Even then it is a claim, for the runtime to
    /// vouch for.
    public static func cgroupOwner(_ text: String) -> CgroupOwner? {
        var unit: String?
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, fields[1].isEmpty || fields[1] == "name=systemd" else { continue }
            let components = fields[2].split(separator: "/")
            for index in components.indices.reversed() {
                let component = components[index]
                let parent = index > components.startIndex ? components[index - 1] : ""
                if let id = containerID(in: component, prefix: "libpod-"),
                   parent == "machine.slice" || parent == "libpod_parent" || parent == "user.slice" {
                    return .container(CgroupClaim(.podman, id: id))
                }
                if let id = containerID(in: component, prefix: "docker-"), parent == "system.slice" {
                    return .container(CgroupClaim(.docker, id: id))
                }
                if ContainerID.isValid(String(component)), parent == "docker", index == components.startIndex + 1 {
                    return .container(CgroupClaim(.docker, id: String(component)))
                }
                if unit == nil, component.hasSuffix(".service") || component.hasSuffix(".scope") { unit = String(component) }
            }
        }
        return unit.map { .unit($0) }
    }

    private static func containerID(in component: Substring, prefix: String) -> String? {
        guard component.hasPrefix(prefix) else { return nil }
        var id = component.dropFirst(prefix.count)
        if id.hasSuffix(".scope") { id = id.dropLast(".scope".count) }
        return ContainerID.isValid(String(id)) ? String(id) : nil
    }

    public static func fuzz(_ bytes: [UInt8]) {
        if case .container(let claim)? = cgroupOwner(String(decoding: bytes, as: UTF8.self)), !ContainerID.isValid(claim.id) {
            fatalError("a cgroup gave id \(claim.id)")
        }
    }

    public static func names(seed bytes: [UInt8]) -> Bool {
        if case .container? = cgroupOwner(String(decoding: bytes, as: UTF8.self)) { true } else { false }
    }
}
