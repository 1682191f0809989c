import IfMeterCore
import IfMeterKernel
#if canImport(Glibc)
import Glibc
#endif

/// Finds who owns the namespaces behind host-side links, from what the kernel and each runtime
/// expose (docs/NAMESPACES.md): the nsid of every candidate namespace file (`RTM_GETNSID` on it),
/// Podman's and Docker's state, `ve-NAME` for systemd-nspawn, bound names, and the namespaces of
/// running processes. Reads files and asks the kernel; keeps a runtime's files from one look to
/// the next only while their inode, size and modification time stay the same.
///
/// Used by one thread at a time: the kernel's, beside a sample's counters dump, and the loop's
/// when no dump is out (the start, the last sample) — hence `@unchecked Sendable`.
public final class OwnerDirectory: @unchecked Sendable {
    public let paths: OwnerPaths
    private let socket: NetlinkSocket
    /// Podman: each container's spec, by id (its network namespace path), read again when the
    /// file changes; and the paths as the last look read them.
    private var podmanSpecs: [String: CachedFile<String?>] = [:]
    private var podmanNamespaces: [String: String] = [:]
    private var podmanNames = CachedFile<[(id: String, name: String)]>()
    private var dockerConfigs: [String: CachedFile<(id: String, name: String, sandbox: String)?>] = [:]
    /// libvirt: each running domain's live status, by file name.
    private var libvirtStatus: [String: CachedFile<LibvirtDomain?>] = [:]

    public init(paths: OwnerPaths = OwnerPaths()) throws(KernelError) {
        self.paths = paths
        socket = try NetlinkSocket()
    }

    /// Who owns what `unsettled` waits on: the namespaces behind host-side veths and the taps.
    public func lookUp(_ unsettled: Attribution.Unsettled) -> OwnerLookups {
        OwnerLookups(namespaces: lookUp(unsettled.nsids, hostNames: unsettled.hostNames), taps: lookUp(taps: unsettled.taps))
    }

    /// Whose virtual machine's NIC each of `taps` (by ifindex) is, from libvirt's live status
    /// files: the domain that names the tap and whose NIC's MAC the tap's address carries. A tap
    /// no running domain claims is one libvirt is still starting (it writes the status after
    /// the taps) while its state directory exists, and nobody's otherwise.
    public func lookUp(taps: [Int32: TapSight]) -> [Int32: OwnerLookup] {
        guard !taps.isEmpty else { return [:] }
        let domains = libvirtDomains()
        var found: [Int32: OwnerLookup] = [:]
        let libvirtRuns = Self.ownedByRoot(paths.libvirtQemu, type: S_IFDIR)
        for (ifindex, tap) in taps {
            let owner = domains.lazy.compactMap { domain in
                domain.nic(tap: tap.name, address: tap.address).map { FoundOwner(.libvirt, name: domain.name, id: domain.uuid, nic: Int32($0)) }
            }.first
            found[ifindex] = owner.map(OwnerLookup.found) ?? (libvirtRuns ? .starting(fallback: nil) : .unknown)
        }
        return found
    }

    /// The running domains, in the order of their files' names. A file counts only when root
    /// wrote it, in a directory only root can write to: libvirtd runs as root.
    private func libvirtDomains() -> [LibvirtDomain] {
        let directory = paths.libvirtQemu
        guard Self.ownedByRoot(directory, type: S_IFDIR) else {
            libvirtStatus = [:]
            return []
        }
        let files = SysfsReader.listDirectory(directory).filter { $0.hasSuffix(".xml") }.sorted()
        libvirtStatus = libvirtStatus.filter { files.contains($0.key) }
        var domains: [LibvirtDomain] = []
        for file in files {
            let path = directory + "/" + file
            guard Self.ownedByRoot(path, type: S_IFREG) else { continue }
            var cached = libvirtStatus[file] ?? CachedFile()
            if let domain = cached.read(path, RuntimeState.libvirtDomain(statusXML:)) ?? nil { domains.append(domain) }
            libvirtStatus[file] = cached
        }
        return domains
    }

    /// Who owns each of `nsids` (as the daemon's namespace numbers them); `hostNames` are the
    /// host-side link names leading there (`ve-NAME` names an nspawn machine).
    public func lookUp(_ nsids: Set<Int32>, hostNames: [Int32: String]) -> [Int32: OwnerLookup] {
        var found: [Int32: OwnerLookup] = [:]
        // Only veths with both ends here wait: no runtime's state is read for them.
        guard !nsids.isEmpty else { return found }
        var look = Look(socket: socket)
        for (nsid, name) in hostNames where nsids.contains(nsid) {
            if let machine = Self.nspawnMachine(hostSide: name) { found[nsid] = .found(FoundOwner(.nspawn, name: machine, id: machine)) }
        }
        let podman = podmanContainers()
        // In creation order: of containers sharing a namespace (a pod, `--network container:X`),
        // the first created names it, whatever order the files are listed in.
        let podmanNames = Dictionary(podman.listed.map { ($0.id, $0.name) }) { first, _ in first }
        for (id, name) in podman.listed {
            guard let path = podman.namespaces[id], let nsid = look.nsid(ofFile: path), nsids.contains(nsid), found[nsid] == nil else { continue }
            found[nsid] = .found(FoundOwner(.podman, name: name, id: id))
        }
        for container in dockerContainers() {
            guard let nsid = look.nsid(ofFile: container.sandbox), nsids.contains(nsid), found[nsid] == nil else { continue }
            found[nsid] = .found(FoundOwner(.docker, name: container.name, id: container.id))
        }
        for directory in paths.namedNamespaces {
            let runtimeOwned = directory == paths.dockerNamespaces
            for name in SysfsReader.listDirectory(directory).sorted() where OwnerName.isAcceptable(name) {
                guard let (nsid, inode) = look.nsidAndInode(ofFile: directory + "/" + name), nsids.contains(nsid),
                      found[nsid] == nil else { continue }
                let named = FoundOwner(.netns, name: name, id: String(inode))
                // Podman binds `netns-UUID` (CNI `cni-UUID`), Docker its sandboxes: a container's
                // until its runtime says whose.
                let starting = runtimeOwned || name.hasPrefix("netns-") || name.hasPrefix("cni-")
                found[nsid] = starting ? .starting(fallback: named) : .found(named)
            }
        }
        // LXC binds no namespace file: only a namespace no file named is looked for there (the
        // scan reads every process's stat).
        if nsids.contains(where: { found[$0] == nil }) {
            for (nsid, owner) in lxcContainers(of: nsids) where found[nsid] == nil { found[nsid] = .found(owner) }
        }
        let unsettled = nsids.filter { nsid in
            switch found[nsid] {
            case .found?: false
            default: true
            }
        }
        if !unsettled.isEmpty {
            for (nsid, lookup) in processOwners(of: Set(unsettled), look: &look, podmanNames: podmanNames) {
                // A namespace a runtime bound is its container's, being started: the process in
                // it says nothing more unless the runtime's state names it (Docker writes the
                // container's SandboxKey after its veth is in place).
                if case .starting? = found[nsid], case .found(let owner) = lookup, !owner.kind.isRuntime { continue }
                found[nsid] = lookup
            }
        }
        for nsid in nsids where found[nsid] == nil { found[nsid] = .unknown }
        return found
    }

    /// systemd-nspawn names a machine's host side `ve-NAME` (`--network-veth`) or `vb-NAME`
    /// (`--network-bridge`), NAME cut to fit 15 bytes.
    static func nspawnMachine(hostSide name: String) -> String? {
        guard name.hasPrefix("ve-") || name.hasPrefix("vb-") else { return nil }
        let machine = String(name.dropFirst(3))
        return OwnerName.isAcceptable(machine) ? machine : nil
    }

    /// Podman's containers' namespace paths by id, and its containers in the order they were
    /// created.
    private func podmanContainers() -> (namespaces: [String: String], listed: [(id: String, name: String)]) {
        let base = paths.podmanStorage + "/overlay-containers"
        let ids = Set(SysfsReader.listDirectory(base).filter(RuntimeState.isContainerID))
        podmanSpecs = podmanSpecs.filter { ids.contains($0.key) }
        var namespaces: [String: String] = [:]
        for id in ids {
            // Absent until the container's first start, and rewritten with a new namespace at
            // every restart: read again whenever the file changed.
            var cached = podmanSpecs[id] ?? CachedFile()
            if let path = cached.read(base + "/" + id + "/userdata/config.json", RuntimeState.networkNamespacePath(ociConfig:)) ?? nil {
                namespaces[id] = path
            }
            podmanSpecs[id] = cached
        }
        podmanNamespaces = namespaces
        let listed = podmanNames.read(base + "/containers.json", RuntimeState.podmanContainers(containersJSON:)) ?? []
        return (namespaces, listed)
    }

    /// LXC's containers, whose namespaces the kernel numbers by a process's pid (`RTM_GETNSID`
    /// with `NETNSA_PID`, which takes no right to trace it). The processes are found where the
    /// shipped unit can see them: in the container's cgroup, `lxc.payload.NAME` at the top of
    /// the tree, which only root can make (under the unit /proc shows only its own processes,
    /// `ProtectProc=invisible`); else, where /proc shows them all, as the children of their
    /// monitors.
    private func lxcContainers(of nsids: Set<Int32>) -> [Int32: FoundOwner] {
        var found: [Int32: FoundOwner] = [:]
        for entry in SysfsReader.listDirectory(paths.cgroups).sorted() where entry.hasPrefix("lxc.payload.") {
            let name = String(entry.dropFirst("lxc.payload.".count))
            let directory = paths.cgroups + "/" + entry
            guard OwnerName.isAcceptable(name), Self.ownedByRoot(directory, type: S_IFDIR),
                  let pid = Self.firstProcess(in: directory),
                  let nsid = (try? socket.namespaceID(ofProcess: pid)) ?? nil, nsids.contains(nsid), found[nsid] == nil else { continue }
            found[nsid] = FoundOwner(.lxc, name: name, id: name)
        }
        for (nsid, owner) in lxcMonitors(of: nsids) where found[nsid] == nil { found[nsid] = owner }
        return found
    }

    /// The lowest pid in a cgroup, or in its children when it has none itself (cgroup v2 keeps
    /// processes only in leaves: a container running systemd has them in `init.scope` and below).
    private static func firstProcess(in directory: String) -> Int32? {
        func pids(_ path: String) -> [Int32] {
            guard let text = StateFile.read(path + "/cgroup.procs") else { return [] }
            return text.split(separator: UInt8(ascii: "\n")).compactMap { Int32(String(decoding: $0, as: UTF8.self)) }
        }
        if let own = pids(directory).min() { return own }
        return SysfsReader.listDirectory(directory).flatMap { pids(directory + "/" + $0) }.min()
    }

    /// Each LXC monitor (`[lxc monitor] LXCPATH NAME`, the command `lxc-start`, run by root,
    /// with a root-owned `LXCPATH/NAME/config`) and its child, the container's init. Every file
    /// read is world-readable.
    private func lxcMonitors(of nsids: Set<Int32>) -> [Int32: FoundOwner] {
        var parents: [(pid: Int32, parent: Int32)] = []
        var monitors: [Int32: String] = [:]
        for entry in SysfsReader.listDirectory(paths.proc) {
            guard let pid = Int32(entry), pid > 0,
                  let process = StateFile.read("\(paths.proc)/\(pid)/stat").flatMap(RuntimeState.processStat) else { continue }
            parents.append((pid, process.parent))
            guard process.command == "lxc-start", Self.ownedByRoot("\(paths.proc)/\(pid)", type: S_IFDIR),
                  let monitor = StateFile.read("\(paths.proc)/\(pid)/cmdline").flatMap(RuntimeState.lxcMonitor),
                  Self.ownedByRoot(monitor.path + "/" + monitor.name + "/config", type: S_IFREG) else { continue }
            monitors[pid] = monitor.name
        }
        guard !monitors.isEmpty else { return [:] }
        var found: [Int32: FoundOwner] = [:]
        for (pid, parent) in parents.sorted(by: { $0.pid < $1.pid }) {
            guard let name = monitors[parent], let nsid = (try? socket.namespaceID(ofProcess: pid)) ?? nil,
                  nsids.contains(nsid), found[nsid] == nil else { continue }
            found[nsid] = FoundOwner(.lxc, name: name, id: name)
        }
        return found
    }

    /// True when `path` is a file of `type` (`S_IFREG`, `S_IFDIR`) owned by root: what only
    /// root could have made, so no user can pass for a runtime there.
    private static func ownedByRoot(_ path: String, type: mode_t) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && status.st_uid == 0 && status.st_mode & S_IFMT == type
    }

    private func dockerContainers() -> [(id: String, name: String, sandbox: String)] {
        let base = paths.dockerRoot + "/containers"
        let ids = Set(SysfsReader.listDirectory(base).filter(RuntimeState.isContainerID))
        dockerConfigs = dockerConfigs.filter { ids.contains($0.key) }
        var containers: [(id: String, name: String, sandbox: String)] = []
        for id in ids.sorted() {
            var cached = dockerConfigs[id] ?? CachedFile()
            if let container = cached.read(base + "/" + id + "/config.v2.json", RuntimeState.dockerContainer(configV2:)) ?? nil,
               container.id == id {
                containers.append(container)
            }
            dockerConfigs[id] = cached
        }
        return containers
    }

    /// The namespaces of running processes (`/proc/PID/ns/net`, which needs the right to trace
    /// the process: root, or `CAP_SYS_PTRACE`): each nsid's first process, and what its cgroup
    /// says about it.
    private func processOwners(of nsids: Set<Int32>, look: inout Look, podmanNames: [String: String]) -> [Int32: OwnerLookup] {
        var first: [Int32: (pid: Int, inode: UInt64)] = [:]
        for entry in SysfsReader.listDirectory(paths.proc) {
            guard let pid = Int(entry), pid > 0 else { continue }
            guard let (nsid, inode) = look.nsidAndInode(ofFile: "\(paths.proc)/\(pid)/ns/net"), nsids.contains(nsid) else { continue }
            if let known = first[nsid], known.pid < pid { continue }
            first[nsid] = (pid, inode)
        }
        var owners: [Int32: OwnerLookup] = [:]
        for (nsid, process) in first {
            let cgroup = StateFile.read("\(paths.proc)/\(process.pid)/cgroup").map { String(decoding: $0, as: UTF8.self) } ?? ""
            // A cgroup's container id is believed only when the runtime's own state puts that
            // container in this very namespace: a tenant can name its cgroup after anyone.
            switch RuntimeState.cgroupOwner(cgroup) {
            case .podman(let id)?:
                if let name = podmanNames[id], let path = podmanNamespaces[id], look.nsid(ofFile: path) == nsid {
                    owners[nsid] = .found(FoundOwner(.podman, name: name, id: id))
                    continue
                }
            case .docker(let id)?:
                if let container = dockerConfigs[id]?.value ?? nil, look.nsid(ofFile: container.sandbox) == nsid {
                    owners[nsid] = .found(FoundOwner(.docker, name: container.name, id: id))
                    continue
                }
            case .unit(let unit)?:
                if OwnerName.isAcceptable(unit) { owners[nsid] = .found(FoundOwner(.process, name: unit, id: String(process.inode))); continue }
            case nil:
                break
            }
            let command = StateFile.read("\(paths.proc)/\(process.pid)/comm")
                .map { String(decoding: $0, as: UTF8.self).trimmingWhitespace() }
            let name = command.flatMap { OwnerName.isAcceptable($0) ? "\($0)-\(process.pid)" : nil } ?? "pid-\(process.pid)"
            owners[nsid] = .found(FoundOwner(.process, name: name, id: String(process.inode)))
        }
        return owners
    }

    /// One look's namespace files: each distinct namespace asked for its nsid once.
    private struct Look {
        let socket: NetlinkSocket
        var nsids: [UInt64: Int32?] = [:]

        mutating func nsid(ofFile path: String) -> Int32? { nsidAndInode(ofFile: path)?.nsid }

        mutating func nsidAndInode(ofFile path: String) -> (nsid: Int32, inode: UInt64)? {
            // The path comes from a runtime's state or a directory listing: only a regular file
            // is opened (a namespace file is one), and without blocking. Opening a FIFO planted
            // there would wait for a writer forever, the start's look with it, and a device
            // could act on the open itself. Links are followed: /proc's ns/net is one.
            var status = stat()
            guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
            let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
            guard fd >= 0 else { return nil }
            defer { close(fd) }
            guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
            let inode = UInt64(status.st_ino)
            if let known = nsids[inode] { return known.map { ($0, inode) } }
            // Not a namespace file (EINVAL), or one with no nsid here: either way no owner.
            let nsid = (try? socket.namespaceID(of: fd)) ?? nil
            nsids[inode] = nsid
            return nsid.map { ($0, inode) }
        }
    }
}
