import IfMeterKernel
import IfMeterPlatform
#if canImport(Glibc)
import Glibc
#endif

/// `ifmeterd --attach-apps` and `--detach-apps`: the short privileged step of counting
/// applications (docs/APPS.md, "Least privilege"). It loads the counting program, attaches it
/// to the root of the cgroup2 hierarchy, pins its links and maps for the daemon's user, and
/// exits; the daemon then reads the maps with no capability. Run as root before the daemon
/// (`ExecStartPre=-+` in ifmeterd.service): a failure says why in one line and leaves the
/// daemon counting everything else.
struct AppsAttachment {
    let pinDirectory: String
    let enabled: Bool
    /// `apps_map_entries`.
    let mapEntries: UInt32

    func run(detaching: Bool, user: String?) -> Int32 {
        do {
            if detaching {
                try AppCounterProgram.detach(pinDirectory: pinDirectory)
                print("ifmeterd: the application counter pinned in \(pinDirectory) is detached")
                return 0
            }
            guard enabled else {
                print("ifmeterd: apps = no: applications are not counted, nothing attached")
                return 0
            }
            return try attach(user: user)
        } catch let error as KernelError {
            Diagnostics.error("applications are not counted: \(error)")
            return error.errno == EPERM || error.errno == EACCES
                ? PlatformError.Kind.noPermission.rawValue : PlatformError.Kind.unavailable.rawValue
        } catch {
            Diagnostics.error("applications are not counted: \(error)")
            return PlatformError.Kind.unavailable.rawValue
        }
    }

    private func attach(user: String?) throws -> Int32 {
        let owner = try Self.owner(named: user)
        do {
            let maps = try AppCounterMaps(pinDirectory: pinDirectory)
            print("ifmeterd: the application counter is attached already (map \(maps.mapID), pinned in \(pinDirectory))")
            return 0
        } catch where error.errno == EPROTO {
            // Pinned by a release whose maps had another layout (an upgrade): replaced. What it
            // counted since the daemon last read it is lost, once.
            try AppCounterProgram.detach(pinDirectory: pinDirectory)
            print("ifmeterd: the application counter pinned in \(pinDirectory) had another layout; attaching this one")
        } catch {
            // Not attached: attached below.
        }
        try mountBPFFilesystemIfMissing()
        let root = try Cgroup2.mountPoint()
        try AppCounterProgram.attach(cgroupRoot: root, pinDirectory: pinDirectory, maxEntries: mapEntries,
                                     netnsCookie: try AppCounterProgram.ownNetworkNamespaceCookie(), owner: owner)
        print("ifmeterd: counting applications: attached to \(root), pinned in \(pinDirectory) for uid \(owner.uid)")
        return 0
    }

    /// The pins' owner: `name`'s, else the `ifmeter` user's when there is one (the unit's),
    /// else the caller's.
    static func owner(named name: String?) throws -> (uid: UInt32, gid: UInt32) {
        if let name {
            guard let entry = getpwnam(name) else {
                throw KernelError(call: "look up the user \(name)", errno: ENOENT, detail: "no such user")
            }
            return (entry.pointee.pw_uid, entry.pointee.pw_gid)
        }
        if getuid() == 0, let entry = getpwnam("ifmeter") { return (entry.pointee.pw_uid, entry.pointee.pw_gid) }
        return (getuid(), getgid())
    }

    /// systemd mounts bpffs on /sys/fs/bpf at boot; where nothing did (a container, an init
    /// that is not systemd), the pins' parent gets one.
    private func mountBPFFilesystemIfMissing() throws {
        let parent = String(pinDirectory[..<(pinDirectory.lastIndex(of: "/") ?? pinDirectory.startIndex)])
        guard !parent.isEmpty else { return }
        if (try? AppCounterProgram.isBPFFilesystem(parent)) == true { return }
        guard parent == "/sys/fs/bpf" else {
            throw KernelError(call: "pin in \(pinDirectory)", errno: EINVAL,
                              detail: "\(parent) is not a bpf filesystem: mount -t bpf bpf \(parent)")
        }
        guard mount("bpf", parent, "bpf", 0, "mode=0755") == 0 else {
            throw KernelError(call: "mount -t bpf bpf \(parent)", errno: errno)
        }
    }
}
