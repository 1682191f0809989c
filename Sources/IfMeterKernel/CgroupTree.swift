import IfMeterCore
#if canImport(Glibc)
import Glibc
#endif

/// A walk of the cgroup2 hierarchy: which cgroups exist now, by id, and the paths of those
/// asked for (docs/APPS.md, "Names"). A cgroup's id is its directory's inode number, which the
/// directory's entry in its parent gives without a `stat`.
///
/// Users with a delegated subtree make directories at will, so the walk is bounded: at most
/// ``maximumCgroups`` directories and ``maximumDepth`` levels; past either, ``Walk/complete``
/// is false and nothing is taken for gone. Directories are opened relative to their parent
/// (`openat`), so no path grows past `PATH_MAX`, and symbolic links are never followed.
public struct CgroupTree: Sendable {
    public let root: String
    public var maximumCgroups = 200_000
    public var maximumDepth = 64

    public init(root: String) {
        self.root = root
    }

    public struct Walk: Sendable {
        /// Every cgroup seen, the root's included.
        public var live: Set<UInt64> = []
        /// The path under the root (`/system.slice/nginx.service`, bytes as the kernel has
        /// them) of each wanted id that was seen.
        public var paths: [UInt64: [UInt8]] = [:]
        /// Whether every directory was read: only then is an id not in ``live`` gone.
        public var complete = true
    }

    /// Walks the hierarchy, keeping the paths of `wanted` ids.
    public func walk(wanting wanted: Set<UInt64>) throws(KernelError) -> Walk {
        let fd = retryingEINTR { open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard fd >= 0 else { throw KernelError(call: "open \(root)", errno: errno) }
        var walk = Walk()
        var info = stat()
        if fstat(fd, &info) == 0 {
            walk.live.insert(UInt64(info.st_ino))
            if wanted.contains(UInt64(info.st_ino)) { walk.paths[UInt64(info.st_ino)] = Array("/".utf8) }
        }
        var path: [UInt8] = []
        descend(fd, path: &path, depth: 1, wanted: wanted, into: &walk)
        return walk
    }

    /// Reads the directory `fd` (closed here) and each directory in it.
    private func descend(_ fd: Int32, path: inout [UInt8], depth: Int, wanted: Set<UInt64>, into walk: inout Walk) {
        guard let directory = fdopendir(fd) else {
            close(fd)
            walk.complete = false
            return
        }
        defer { closedir(directory) }
        var children: [(name: [UInt8], id: UInt64)] = []
        errno = 0
        while let entry = readdir(directory) {
            guard entry.pointee.d_type == UInt8(DT_DIR) else { continue }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                Array(raw.prefix(while: { $0 != 0 }))
            }
            if name == [UInt8(ascii: ".")] || name == [UInt8(ascii: "."), UInt8(ascii: ".")] { continue }
            children.append((name, UInt64(entry.pointee.d_ino)))
        }
        if errno != 0 { walk.complete = false }
        for child in children {
            guard walk.live.count < maximumCgroups else {
                walk.complete = false
                return
            }
            walk.live.insert(child.id)
            let mark = path.count
            path.append(UInt8(ascii: "/"))
            path += child.name
            if wanted.contains(child.id) { walk.paths[child.id] = path }
            if depth < maximumDepth {
                let childFD = child.name.withUnsafeBufferPointer { name in
                    var cName = Array(name) + [0]
                    return cName.withUnsafeMutableBufferPointer { buffer in
                        buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { pointer in
                            retryingEINTR { openat(dirfd(directory), pointer, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
                        }
                    }
                }
                // A cgroup removed between the read and the open is simply gone.
                if childFD >= 0 {
                    descend(childFD, path: &path, depth: depth + 1, wanted: wanted, into: &walk)
                } else if errno != ENOENT {
                    walk.complete = false
                }
            } else {
                walk.complete = false
            }
            path.removeSubrange(mark...)
        }
    }

    /// The command name (`comm`) of a process in the cgroup at `path` under the root: how a
    /// cgroup `systemd-run` named at random is named for people. Nil when it has no process or
    /// either file cannot be read. What comes back is the process's own choice: hostile.
    public func firstCommand(inCgroup path: [UInt8]) -> [UInt8]? {
        let procs = root + String(decoding: path, as: UTF8.self) + "/cgroup.procs"
        guard let listed = try? WholeFile.read(procs, limit: 1 << 16),
              let line = listed.split(separator: UInt8(ascii: "\n")).first,
              let pid = Int32(String(decoding: line, as: UTF8.self)), pid > 0,
              let comm = try? WholeFile.read("/proc/\(pid)/comm", limit: 64) else { return nil }
        return Array(comm.prefix { $0 != UInt8(ascii: "\n") })
    }
}
