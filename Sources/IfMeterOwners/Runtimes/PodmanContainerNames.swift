import IfMeterCore
#if canImport(Glibc)
import Glibc
#endif

/// A Podman container's name by its id, for the application counter's cgroup names
/// (docs/APPS.md, `CgroupNaming(containerName:)`): a rootless container's from its user's own
/// storage, a rootful one's from Podman's (`podman_storage`).
///
/// A user's storage is `~USER/.local/share/containers/storage` (Podman's default graph root for a
/// rootless user; one moved by the user's `storage.conf` is not looked for), and in it the
/// storage driver's `DRIVER-containers/containers.json`: `overlay-containers`, or `vfs-containers`
/// where Podman found no overlay it could use (podman 4.3 on these machines). The file is the
/// user's, hostile: opened without following a link as its last component and without blocking,
/// taken only when the open file is a regular file that user owns (root for a rootful one), at
/// most ``userFileLimit`` bytes, and parsed by ``PodmanSource/containers(containersJSON:)``,
/// which keeps only valid ids and acceptable names. Read again only when it changed, and at most
/// once a round (``newRound()``, one a sample): the user can change the file between any two
/// lookups, and a sample that names thousands of their new cgroups would otherwise parse 4 MiB
/// for each (46 s for 1,000 in a check, the sampler stalled meanwhile). Podman writes a
/// container's entry before its cgroup exists, so the first lookup of a round finds it.
///
/// Not for two threads at once: the daemon asks on its sampler's thread only.
public final class PodmanContainerNames: @unchecked Sendable {
    /// The most a user's `containers.json` is read: about 500 bytes a container, so thousands.
    public static let userFileLimit = 4 << 20
    /// Users whose files are kept at once; past it the oldest are forgotten (and read again).
    public static let maximumUsers = 256
    /// The storage drivers whose container lists are looked at, in this order.
    static let drivers = ["overlay", "vfs"]

    private struct Listing {
        var stamp: (UInt64, UInt64, Int64, Int64, Int)
        var names: [String: String]
    }

    private let rootStorage: String
    private let home: (UInt32) -> String?
    /// Each storage's listing, by its file's path, and the order they were last read in.
    private var listings: [String: Listing] = [:]
    private var order: [String] = []
    /// The files read (or found unreadable) since the round began: not read again in it.
    private var readThisRound: Set<String> = []

    /// - Parameters:
    ///   - rootStorage: Podman's graph root for rootful containers.
    ///   - home: a user's home directory, by uid (the password database by default).
    public init(rootStorage: String = "/var/lib/containers/storage", home: @escaping (UInt32) -> String? = PodmanContainerNames.passwdHome) {
        self.rootStorage = rootStorage
        self.home = home
    }

    /// Begins a round: each file is read again, if it changed, at most once until the next.
    public func newRound() {
        readThisRound.removeAll(keepingCapacity: true)
    }

    /// The name of container `id` (64 hex digits), rootless under `uid`, rootful when nil;
    /// nil when no storage of theirs names it.
    public func name(id: String, uid: UInt32?) -> String? {
        guard ContainerID.isValid(id) else { return nil }
        let storage: String
        if let uid {
            guard uid != 0, let home = home(uid), home.hasPrefix("/"), home != "/" else { return nil }
            storage = home + "/.local/share/containers/storage"
        } else {
            storage = rootStorage
        }
        for driver in Self.drivers {
            if let name = names(storage + "/" + driver + "-containers/containers.json", owner: uid ?? 0)?[id] { return name }
        }
        return nil
    }

    /// Container names by id from the file at `path`, if it is a regular file `owner` owns.
    private func names(_ path: String, owner: UInt32) -> [String: String]? {
        // Read (or refused) once this round already: what that gave, whatever the file is now.
        guard !readThisRound.contains(path) else { return listings[path]?.names }
        readThisRound.insert(path)
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else {
            forget(path)
            return nil
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_uid == owner,
              status.st_size <= Self.userFileLimit else {
            forget(path)
            return nil
        }
        let stamp = (UInt64(status.st_dev), UInt64(status.st_ino), Int64(status.st_size), Int64(status.st_mtim.tv_sec), status.st_mtim.tv_nsec)
        if let listing = listings[path], listing.stamp == stamp { return listing.names }
        guard let bytes = Self.readAll(fd, limit: Self.userFileLimit) else {
            forget(path)
            return nil
        }
        // In the file's order: of two entries with one id, the first names it.
        let names = Dictionary(PodmanSource.containers(containersJSON: bytes).map { ($0.id, $0.name) }) { first, _ in first }
        forget(path)
        listings[path] = Listing(stamp: stamp, names: names)
        order.append(path)
        if order.count > Self.maximumUsers * Self.drivers.count {
            listings[order.removeFirst()] = nil
        }
        return names
    }

    private func forget(_ path: String) {
        guard listings.removeValue(forKey: path) != nil else { return }
        order.removeAll { $0 == path }
    }

    /// The rest of `fd`'s bytes, nil past `limit` or on an error.
    private static func readAll(_ fd: Int32, limit: Int) -> [UInt8]? {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = read(fd, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
            guard bytes.count <= limit else { return nil }
        }
    }

    /// A user's home directory from the password database (root's, so not the user's to make).
    public static func passwdHome(_ uid: UInt32) -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, result != nil, let directory = entry.pw_dir else { return nil }
        return String(cString: directory)
    }
}
