import IfMeterCore
import IfMeterKernel
#if canImport(Glibc)
import Glibc
#endif

/// One place owners are named from: a container runtime's state (Podman, Docker, LXC,
/// systemd-nspawn, libvirt), bound namespace names, or the processes in a namespace. Each is one
/// file in `Runtimes/`, with its kind, the paths it reads, its cache, its parsers and its fuzz
/// seed, and one line in ``OwnerDirectory/sources`` (docs/NAMESPACES.md says what each reads).
///
/// Everything a source reads is another program's, and some of it a tenant's: a source names an
/// owner only from files root wrote, and its parsers take any bytes (``fuzz(_:)``). A source is
/// one thread's at a time (``OwnerDirectory``'s); its type, in the shared list, is anyone's.
public protocol OwnerSource: AnyObject, SendableMetatype {
    /// The kind of owner it names; the kind's prefix makes the subject (`container:NAME`).
    static var kind: LinkOwner.Kind { get }
    /// What it reads, as the runtime writes it: file names in Fuzz/corpus/runtime-state, where
    /// the fuzz target starts from them and a test checks that each names an owner.
    static var fuzzSeeds: [String] { get }
    /// Runs every parser of the source on `bytes`, trapping on a result the source could never
    /// accept (a name that is not an ``OwnerName``, an id of the wrong shape).
    static func fuzz(_ bytes: [UInt8])
    /// Whether one of its parsers names an owner from `bytes` (true for each of ``fuzzSeeds``).
    static func names(seed bytes: [UInt8]) -> Bool

    init(paths: OwnerPaths)

    /// Names what `look` still seeks that this source knows: a namespace another source earlier
    /// in the list named is not this one's to name again (``OwnerLook/isSought(_:)``).
    func find(_ look: inout OwnerLook)

    /// The owner when this source's own state puts container `claim` in the namespace numbered
    /// `nsid`: a process's cgroup claims a container, and only its runtime can vouch for it.
    func confirm(_ claim: CgroupClaim, nsid: Int32, files: inout NamespaceFiles) -> FoundOwner?
}

extension OwnerSource {
    public func confirm(_ claim: CgroupClaim, nsid: Int32, files: inout NamespaceFiles) -> FoundOwner? { nil }
}

/// A container a process's cgroup names (``ProcessSource/cgroupClaim(_:)``): a claim anyone can
/// make (`systemd-run --scope --unit libpod-ID`), believed only when the runtime agrees.
public struct CgroupClaim: Hashable, Sendable {
    /// The runtime that names cgroups so: `podman`, `docker`.
    public var kind: LinkOwner.Kind
    public var id: String

    public init(_ kind: LinkOwner.Kind, id: String) {
        self.kind = kind
        self.id = id
    }
}

/// One look: what it seeks, what the sources found so far, in their order, and the namespace
/// files it opened.
public struct OwnerLook {
    /// The nsids of namespaces host-side veths lead into, and those links' names.
    public let nsids: Set<Int32>
    public let hostNames: [Int32: String]
    /// The taps waiting, by ifindex.
    public let tapsSought: [Int32: TapSight]
    /// What the sources found, by nsid.
    public var namespaces: [Int32: OwnerLookup] = [:]
    /// What the sources found, by a tap's ifindex.
    public var taps: [Int32: OwnerLookup] = [:]
    public var files: NamespaceFiles
    /// Every source of the directory, to vouch for a cgroup's claim.
    public let sources: [any OwnerSource]

    init(_ unsettled: Attribution.Unsettled, files: NamespaceFiles, sources: [any OwnerSource]) {
        nsids = unsettled.nsids
        hostNames = unsettled.hostNames
        tapsSought = unsettled.taps
        self.files = files
        self.sources = sources
    }

    /// True while nobody named the namespace `nsid` and it is sought.
    public func isSought(_ nsid: Int32) -> Bool { nsids.contains(nsid) && namespaces[nsid] == nil }

    /// True while some sought namespace has no owner yet.
    public var anySought: Bool { nsids.contains { namespaces[$0] == nil } }

    /// The sought namespaces not yet found for certain: none found, or only one being started.
    public var unsettled: Set<Int32> {
        nsids.filter { nsid in
            if case .found? = namespaces[nsid] { false } else { true }
        }
    }
}

/// Namespace files as one look opens them: each distinct namespace asked for its nsid once.
public struct NamespaceFiles {
    let socket: NetlinkSocket
    /// What each file this look opened was, by its device and inode.
    private var nsids: [FileIdentity: Int32?] = [:]

    private struct FileIdentity: Hashable {
        var device: UInt64
        var inode: UInt64

        init(_ status: stat) {
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
        }
    }

    init(socket: NetlinkSocket) { self.socket = socket }

    /// The nsid, as the daemon's namespace numbers it, of the namespace bound at `path`.
    public mutating func nsid(ofFile path: String) -> Int32? { nsidAndInode(ofFile: path)?.nsid }

    /// The nsid of the namespace bound at `path` and that namespace's inode.
    public mutating func nsidAndInode(ofFile path: String) -> (nsid: Int32, inode: UInt64)? {
        // The path comes from a runtime's state or a directory listing: only a regular file
        // is opened (a namespace file is one), and without blocking. Opening a FIFO planted
        // there would wait for a writer forever, the start's look with it, and a device
        // could act on the open itself. Links are followed: /proc's ns/net is one.
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        // A file met before in this look (a pod's namespace through its CNI result, then its
        // bound name) is not opened again.
        if let known = nsids[FileIdentity(status)] { return known.map { ($0, UInt64(status.st_ino)) } }
        guard let file = FileDescriptor(adopting: open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)),
              fstat(file.rawValue, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        let identity = FileIdentity(status)
        if let known = nsids[identity] { return known.map { ($0, identity.inode) } }
        // Not a namespace file (EINVAL), or one with no nsid here: either way no owner.
        let nsid = (try? socket.namespaceID(of: file.rawValue)) ?? nil
        nsids[identity] = nsid
        return nsid.map { ($0, identity.inode) }
    }

    /// The nsid of process `pid`'s namespace (`NETNSA_PID`, which takes no right to trace it).
    public func nsid(ofProcess pid: Int32) -> Int32? { (try? socket.namespaceID(ofProcess: pid)) ?? nil }
}

/// What only root could have made, so no user can pass for a runtime there.
enum RootOwned {
    /// True when `path` is a file of `type` (`S_IFREG`, `S_IFDIR`) owned by root, not followed
    /// if it is a symbolic link.
    static func check(_ path: String, type: mode_t) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && status.st_uid == 0 && status.st_mode & S_IFMT == type
    }
}
