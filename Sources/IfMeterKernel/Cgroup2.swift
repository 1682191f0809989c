import IfMeterCore
#if canImport(Glibc)
import Glibc
#endif

/// Where the cgroup2 (unified) hierarchy is, and the ids the kernel gives its cgroups.
public enum Cgroup2 {
    /// The cgroup2 mount point from `/proc/self/mountinfo`: `/sys/fs/cgroup` on a pure-v2
    /// machine, `/sys/fs/cgroup/unified` in the hybrid layout. ENOENT when none is mounted.
    public static func mountPoint(mountinfo path: String = "/proc/self/mountinfo") throws(KernelError) -> String {
        let bytes: [UInt8]
        do {
            bytes = try WholeFile.read(path, limit: 16 << 20)
        } catch {
            switch error.reason {
            case .open(let failure): throw KernelError(call: "open \(path)", errno: failure.code)
            case .read(let failure): throw KernelError(call: "read \(path)", errno: failure.code)
            case .tooLarge, .notRegularFile: throw KernelError(call: "read \(path)", errno: EINVAL)
            }
        }
        guard let point = mountPoint(inMountinfo: String(decoding: bytes, as: UTF8.self)) else {
            throw KernelError(call: "find the cgroup2 mount in \(path)", errno: ENOENT,
                              detail: "mount it: mount -t cgroup2 none /sys/fs/cgroup/unified")
        }
        return point
    }

    /// The first cgroup2 mount of the whole hierarchy (its root "/") in mountinfo's text, or the
    /// first of any root; nil when there is none. Mountinfo escapes spaces and the like in
    /// octal (`\040`).
    public static func mountPoint(inMountinfo text: String) -> String? {
        var anyRoot: String?
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            // ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL…] - TYPE SOURCE SUPER
            guard fields.count >= 7, let dash = fields[6...].firstIndex(of: "-"),
                  dash + 1 < fields.count, fields[dash + 1] == "cgroup2" else { continue }
            let point = unescape(fields[4])
            if fields[3] == "/" { return point }
            anyRoot = anyRoot ?? point
        }
        return anyRoot
    }

    /// The id of the cgroup at `path` (a directory of the cgroup2 hierarchy): its inode number,
    /// which is what `bpf_skb_cgroup_id` gives for a socket of that cgroup.
    public static func id(ofDirectory path: String) throws(KernelError) -> UInt64 {
        var info = stat()
        guard stat(path, &info) == 0 else { throw KernelError(call: "stat \(path)", errno: errno) }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw KernelError(call: "read the cgroup id of \(path)", errno: ENOTDIR)
        }
        return UInt64(info.st_ino)
    }

    static func unescape(_ field: Substring) -> String {
        var bytes: [UInt8] = []
        let utf8 = Array(field.utf8)
        var index = 0
        while index < utf8.count {
            if utf8[index] == UInt8(ascii: "\\"), index + 3 < utf8.count,
               let value = UInt8(String(decoding: utf8[(index + 1)...(index + 3)], as: UTF8.self), radix: 8) {
                bytes.append(value)
                index += 4
            } else {
                bytes.append(utf8[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
