import CAppCounters
import IfMeterCore
#if canImport(Glibc)
import Glibc
#endif

/// The application counter's BPF program (docs/APPS.md, "The BPF program"): attached to a
/// cgroup, it counts every socket's packets by the socket's cgroup and the interface, in maps
/// pinned on a bpf filesystem, where a reader with no capability opens them (`AppCounterMaps`).
/// Attaching and detaching need CAP_BPF and CAP_NET_ADMIN (root); once attached, the pins keep
/// it counting with no process behind it.
public enum AppCounterProgram {
    /// app_counts' size unless told otherwise: a cgroup and interface an entry.
    public static let defaultMaxEntries: UInt32 = UInt32(IFMETER_APPS_DEFAULT_ENTRIES)
    /// app_overflow's size unless told otherwise: an interface an entry.
    public static let defaultOverflowEntries: UInt32 = UInt32(IFMETER_APPS_OVERFLOW_ENTRIES)

    /// The BPF object (ELF, BPF target), compiled from Sources/CAppCounters/bpf at build time
    /// and embedded by the AppCountersObject plugin.
    public static let object: [UInt8] = appCountersObjectHex.withUTF8Buffer { hex in
        func nibble(_ digit: UInt8) -> UInt8 { digit <= 0x39 ? digit - 0x30 : digit - 0x61 + 10 }
        return stride(from: 0, to: hex.count - 1, by: 2).map { nibble(hex[$0]) << 4 | nibble(hex[$0 + 1]) }
    }

    /// Loads the program with app_counts sized to `maxEntries` (app_overflow to
    /// `overflowEntries`), attaches it for ingress and
    /// egress to the cgroup2 directory `cgroupRoot` (counting the sockets of every cgroup below
    /// it), and pins its links and maps in `pinDirectory` (created 0755; on a bpf filesystem).
    /// The map pins become `owner`'s, 0600: that user reads and takes entries, no one else does.
    /// With `netnsCookie` (``ownNetworkNamespaceCookie()``) it counts only that network
    /// namespace's packets: another namespace's ifindex names another link. Nil counts all.
    /// Throws EEXIST when it is attached there already: a second program would count every
    /// packet twice, so `detach(pinDirectory:)` first.
    public static func attach(
        cgroupRoot: String, pinDirectory: String, maxEntries: UInt32 = defaultMaxEntries,
        overflowEntries: UInt32 = defaultOverflowEntries, netnsCookie: UInt64? = nil, owner: (uid: UInt32, gid: UInt32)
    ) throws(KernelError) {
        var message = [CChar](repeating: 0, count: 512)
        let result = object.withUnsafeBytes { bytes in
            ifmeter_apps_attach(bytes.baseAddress, bytes.count, cgroupRoot, pinDirectory, maxEntries,
                                overflowEntries, netnsCookie ?? 0, owner.uid, owner.gid, &message, message.count)
        }
        guard result < 0 else { return }
        let said = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        throw KernelError(
            call: "attach the application counter to \(cgroupRoot), pinned in \(pinDirectory)",
            errno: -result,
            detail: attachHint(-result, pinDirectory: pinDirectory, libbpf: said))
    }

    /// Removes the pins `attach` made, which detaches the program, and the pin directory if
    /// nothing else is in it. Nothing there is no error.
    public static func detach(pinDirectory: String) throws(KernelError) {
        let result = ifmeter_apps_detach(pinDirectory)
        guard result < 0 else { return }
        throw KernelError(
            call: "detach the application counter pinned in \(pinDirectory)", errno: -result,
            detail: -result == EPERM || -result == EACCES ? "run as root" : nil)
    }

    /// The calling thread's network namespace's cookie (SO_NETNS_COOKIE): what the program
    /// compares each packet's with.
    public static func ownNetworkNamespaceCookie() throws(KernelError) -> UInt64 {
        var cookie: UInt64 = 0
        let result = ifmeter_apps_netns_cookie(&cookie)
        guard result == 0 else { throw KernelError(call: "getsockopt SO_NETNS_COOKIE", errno: -result) }
        return cookie
    }

    /// Whether `path` is on a bpf filesystem, where pins can be made.
    public static func isBPFFilesystem(_ path: String) throws(KernelError) -> Bool {
        let result = ifmeter_apps_is_bpffs(path)
        guard result >= 0 else { throw KernelError(call: "statfs \(path)", errno: -result) }
        return result == 1
    }

    static func attachHint(_ errno: Int32, pinDirectory: String, libbpf: String) -> String? {
        let hint: String? = switch errno {
        case EPERM, EACCES: "run as root, or with CAP_BPF and CAP_NET_ADMIN"
        case EEXIST: "it is attached already; detach it first (remove the pins in \(pinDirectory))"
        case ENOENT, ENOTDIR: "is the cgroup a directory of the cgroup2 (unified) hierarchy?"
        default: nil
        }
        let said = libbpf.isEmpty ? nil : "libbpf: \(libbpf)"
        let mount = libbpf.contains("not on BPF FS") ? "mount one: mount -t bpf bpf /sys/fs/bpf" : nil
        let parts = [hint, said, mount].compactMap { $0 }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }
}
