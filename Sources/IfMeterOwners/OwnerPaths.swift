import IfMeterCore

/// Where the directory looks; every path can be moved under another root for tests.
public struct OwnerPaths: Hashable, Sendable {
    /// Directories of bound namespaces: `ip netns` and Podman's (`/run/netns`), Docker's.
    public var namedNamespaces: [String]
    /// Docker's among them (`EXEC-ROOT/netns`): a namespace there is a container's being started.
    public var dockerNamespaces: String
    /// Podman's graph root (`podman info --format {{.Store.GraphRoot}}`).
    public var podmanStorage: String
    public var dockerRoot: String
    public var proc: String
    /// The cgroup tree's root (`/sys/fs/cgroup`, cgroup v2), where LXC puts a container in
    /// `lxc.payload.NAME`.
    public var cgroups: String
    /// libcni's cache of attachments (`CACHE-DIR/results`), where containerd's CRI and CRI-O
    /// keep each pod network's result and the pod it is for.
    public var cniResults: String
    /// libvirt's QEMU driver's state directory, where a running domain's live status is
    /// `NAME.xml`.
    public var libvirtQemu: String

    public init(namedNamespaces: [String] = ["/run/netns", "/run/docker/netns"],
                podmanStorage: String = "/var/lib/containers/storage", dockerRoot: String = "/var/lib/docker",
                proc: String = "/proc", cgroups: String = "/sys/fs/cgroup", dockerNamespaces: String = "/run/docker/netns",
                libvirtQemu: String = "/run/libvirt/qemu", cniResults: String = "/var/lib/cni/results") {
        self.namedNamespaces = namedNamespaces
        self.dockerNamespaces = dockerNamespaces
        self.podmanStorage = podmanStorage
        self.dockerRoot = dockerRoot
        self.proc = proc
        self.cgroups = cgroups
        self.libvirtQemu = libvirtQemu
        self.cniResults = cniResults
    }
}
