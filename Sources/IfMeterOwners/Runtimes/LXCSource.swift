import IfMeterCore
#if canImport(Glibc)
import Glibc
#endif

extension LinkOwner.Kind {
    /// An LXC container: its name from its cgroup (`lxc.payload.NAME`) or its monitor process
    /// (`[lxc monitor] PATH NAME`).
    public static let lxc = LinkOwner.Kind("lxc", prefix: .container)
}

/// LXC's containers, whose namespaces LXC binds to no file: the kernel numbers them by a
/// process's pid (`RTM_GETNSID` with `NETNSA_PID`, which takes no right to trace it). The
/// processes are found where the shipped unit can see them: in the container's cgroup,
/// `lxc.payload.NAME` at the top of the tree, which only root can make (under the unit /proc
/// shows only its own processes, `ProtectProc=invisible`); else, where /proc shows them all, as
/// the children of their monitors. Looked for only when a namespace is still unnamed: the
/// monitors' scan reads every process's stat.
public final class LXCSource: OwnerSource {
    public static let kind = LinkOwner.Kind.lxc
    public static let fuzzSeeds = ["seed-lxc-monitor", "seed-proc-stat"]

    private let cgroups: String
    private let proc: String

    public init(paths: OwnerPaths) {
        cgroups = paths.cgroups
        proc = paths.proc
    }

    public func find(_ look: inout OwnerLook) {
        guard look.anySought else { return }
        for entry in SysfsReader.listDirectory(cgroups).sorted() where entry.hasPrefix("lxc.payload.") {
            let name = String(entry.dropFirst("lxc.payload.".count))
            let directory = cgroups + "/" + entry
            guard OwnerName.isAcceptable(name), RootOwned.check(directory, type: S_IFDIR),
                  let pid = Self.firstProcess(in: directory),
                  let nsid = look.files.nsid(ofProcess: pid), look.isSought(nsid) else { continue }
            look.namespaces[nsid] = .found(FoundOwner(.lxc, name: name, id: name))
        }
        guard look.anySought else { return }
        findMonitors(&look)
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
    private func findMonitors(_ look: inout OwnerLook) {
        var parents: [(pid: Int32, parent: Int32)] = []
        var monitors: [Int32: String] = [:]
        for entry in SysfsReader.listDirectory(proc) {
            guard let pid = Int32(entry), pid > 0,
                  let process = StateFile.read("\(proc)/\(pid)/stat").flatMap(Self.processStat) else { continue }
            parents.append((pid, process.parent))
            guard process.command == "lxc-start", RootOwned.check("\(proc)/\(pid)", type: S_IFDIR),
                  let monitor = StateFile.read("\(proc)/\(pid)/cmdline").flatMap(Self.monitor(cmdline:)),
                  RootOwned.check(monitor.path + "/" + monitor.name + "/config", type: S_IFREG) else { continue }
            monitors[pid] = monitor.name
        }
        guard !monitors.isEmpty else { return }
        for (pid, parent) in parents.sorted(by: { $0.pid < $1.pid }) {
            guard let name = monitors[parent], let nsid = look.files.nsid(ofProcess: pid), look.isSought(nsid) else { continue }
            look.namespaces[nsid] = .found(FoundOwner(.lxc, name: name, id: name))
        }
    }

    /// A monitor's `/proc/PID/cmdline`, `[lxc monitor] LXCPATH NAME`: the container's path and
    /// name; nil for any other process.
    public static func monitor(cmdline bytes: [UInt8]) -> (path: String, name: String)? {
        let prefix = Array("[lxc monitor] ".utf8)
        guard bytes.count <= 8192, bytes.starts(with: prefix) else { return nil }
        var rest = bytes.dropFirst(prefix.count)
        while rest.last == 0 || rest.last == UInt8(ascii: " ") { rest = rest.dropLast() }
        guard let space = rest.lastIndex(of: UInt8(ascii: " ")) else { return nil }
        let path = String(decoding: rest[..<space], as: UTF8.self)
        let name = String(decoding: rest[(space + 1)...], as: UTF8.self)
        guard path.hasPrefix("/"), !path.utf8.contains(0), OwnerName.isAcceptable(name) else { return nil }
        return (path, name)
    }

    /// A process's `/proc/PID/stat`: its command (`comm`, which may hold spaces and parentheses)
    /// and its parent's pid.
    public static func processStat(_ bytes: [UInt8]) -> (command: String, parent: Int32)? {
        guard let open = bytes.firstIndex(of: UInt8(ascii: "(")), let close = bytes.lastIndex(of: UInt8(ascii: ")")),
              open < close else { return nil }
        let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " "))
        guard fields.count >= 2, let parent = Int32(String(decoding: fields[1], as: UTF8.self)) else { return nil }
        return (String(decoding: bytes[(open + 1)..<close], as: UTF8.self), parent)
    }

    public static func fuzz(_ bytes: [UInt8]) {
        if let monitor = monitor(cmdline: bytes), !OwnerName.isAcceptable(monitor.name) || !monitor.path.hasPrefix("/") {
            fatalError("lxc monitor gave \(monitor)")
        }
        _ = processStat(bytes)
    }

    public static func names(seed bytes: [UInt8]) -> Bool { monitor(cmdline: bytes) != nil || processStat(bytes) != nil }
}
