import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What a harness, or a crashed test process, leaves to remove: processes, pods' namespaces, results
/// files, cgroups, bundles and homes.
extension ContainerdCRI {
    /// Whose leftovers ``removeLeftovers(_:knownNetns:)`` removes: one harness's, or every
    /// harness's of a test process that is gone.
    struct Leftovers {
        /// A process is theirs when one of its arguments contains this: containerd's
        /// `--config HOME/config.toml`, a shim's `-address HOME/containerd.sock`.
        var processMarker: String
        /// Their results files' names start with this (their CNI network's name).
        var resultsPrefix: String
        /// Their cgroup parents' top-level names.
        var cgroupRoot: (String) -> Bool
        /// The containerd state directory their bundles may lie in.
        var state: String
        /// Their containerd home, if it is still there.
        var home: String?
        /// Whether a loopback network's results file is theirs, by its pod's name and sandbox id
        /// (a crash between the loopback's attachment and eth0's leaves one alone).
        var loopback: (_ pod: String, _ sandbox: String) -> Bool
    }

    /// Ends their containerd, shims and pause processes (those in their cgroups); deletes their
    /// pods' network namespaces (those their results files name, and `knownNetns`) and results
    /// files; removes their cgroups, unmounts what is mounted under their home, and removes
    /// their sandboxes' directories under their state (known by the bundle's cgroup) with what
    /// is mounted there.
    static func removeLeftovers(_ whose: Leftovers, knownNetns: [String]) {
        var victims: [pid_t] = []
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry), pid != getpid(),
                  let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
            let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            if arguments.contains(where: { $0.contains(whose.processMarker) }) { victims.append(pid) }
        }
        let groups = cgroupDirectories(whose.cgroupRoot)
        for group in groups {
            let procs = (try? String(contentsOfFile: group + "/cgroup.procs", encoding: .utf8)) ?? ""
            victims += procs.split(separator: "\n").compactMap { pid_t($0) }
        }
        for pid in Set(victims) { kill(pid, SIGKILL) }
        let deadline = Date().addingTimeInterval(10)
        while Set(victims).contains(where: { kill($0, 0) == 0 && !isZombie($0) }) && Date() < deadline { usleep(10_000) }

        var namespaces = Set(knownNetns.filter { !$0.isEmpty })
        let results = (try? FileManager.default.contentsOfDirectory(atPath: cniCachePath)) ?? []
        for file in results where file.hasPrefix(whose.resultsPrefix) {
            let path = cniCachePath + "/" + file
            if let data = regularFile(path),
               let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
               let interfaces = (json["result"] as? [String: Any])?["interfaces"] as? [[String: Any]] {
                namespaces.formUnion(interfaces.compactMap { $0["sandbox"] as? String })
            }
            unlink(path)
            if let id = file.components(separatedBy: "-").first(where: { $0.count == 64 && $0.allSatisfy(\.isHexDigit) }) {
                unlink("\(cniCachePath)/cni-loopback-\(id)-lo")
            }
        }
        for file in results where file.hasPrefix("cni-loopback-") {
            let path = cniCachePath + "/" + file
            guard let data = regularFile(path),
                  let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { continue }
            let arguments = (json["cniArgs"] as? [[String]] ?? []).filter { $0.count == 2 }
            let pod = arguments.first { $0[0] == "K8S_POD_NAME" }?[1] ?? ""
            guard whose.loopback(pod, json["containerId"] as? String ?? "") else { continue }
            let interfaces = (json["result"] as? [String: Any])?["interfaces"] as? [[String: Any]] ?? []
            namespaces.formUnion(interfaces.compactMap { $0["sandbox"] as? String })
            unlink(path)
        }
        for path in namespaces where path.hasPrefix("/var/run/netns/cni-") || path.hasPrefix("/run/netns/cni-") {
            let name = (path as NSString).lastPathComponent
            if FileManager.default.fileExists(atPath: "/run/netns/" + name) {
                _ = try? Command.run(["ip", "netns", "delete", name], timeout: 30)
            }
        }
        for group in groups { rmdir(group) }
        // Mounts under the home (a snapshot's rootfs, should one still be there).
        if let home = whose.home { unmountAll(under: home) }
        for id in bundles(in: whose.state, cgroupRoot: whose.cgroupRoot) {
            // The shim's socket, which a killed shim leaves (`unix:///run/containerd/s/<hash>`).
            let bundle = "\(whose.state)/io.containerd.runtime.v2.task/k8s.io/\(id)"
            if let address = try? String(contentsOfFile: bundle + "/address", encoding: .utf8) {
                let path = address.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "unix://", with: "")
                if path.hasPrefix(defaultStatePath + "/s/") { unlink(path) }
            }
            for directory in [bundle, "\(whose.state)/io.containerd.grpc.v1.cri/sandboxes/\(id)"] {
                unmountAll(under: directory)
                try? FileManager.default.removeItem(atPath: directory)
            }
        }
    }

    /// The sandboxes whose bundles lie under `state`, with their cgroup below a cgroup root
    /// `cgroupRoot` accepts.
    static func bundles(in state: String, cgroupRoot: (String) -> Bool) -> [String] {
        let tasks = state + "/io.containerd.runtime.v2.task/k8s.io"
        return ((try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []).filter { id in
            guard let data = regularFile("\(tasks)/\(id)/config.json"),
                  let spec = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                  let path = (spec["linux"] as? [String: Any])?["cgroupsPath"] as? String,
                  let top = path.split(separator: "/").first else { return false }
            return path.hasPrefix("/") && cgroupRoot(String(top))
        }
    }

    /// A regular file's first `limit` bytes, read without following a link or waiting on a FIFO
    /// (tests plant such files among libcni's results); nil for anything else.
    static func regularFile(_ path: String, limit: Int = 1 << 20) -> Data? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while data.count < limit {
            let count = read(fd, &chunk, min(chunk.count, limit - data.count))
            guard count > 0 else { break }
            data.append(contentsOf: chunk[..<count])
        }
        return data
    }

    /// Unmounts (lazily) whatever is mounted at or below `directory`, deepest first.
    static func unmountAll(under directory: String) {
        let points = ((try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? "").split(separator: "\n")
            .compactMap { line -> String? in
                let fields = line.split(separator: " ")
                guard fields.count > 4, fields[4] == directory || fields[4].hasPrefix(directory + "/") else { return nil }
                return String(fields[4])
            }
        for point in points.sorted(by: { $0.count > $1.count }) { _ = try? Command.run(["umount", "-l", point], timeout: 30) }
    }

    private static func isZombie(_ pid: pid_t) -> Bool {
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        guard let close = stat.lastIndex(of: ")") else { return true }
        return stat[stat.index(after: close)...].split(separator: " ").first == "Z"
    }

    /// The directories of the top-level cgroups `root` accepts, in every hierarchy, deepest first.
    static func cgroupDirectories(_ root: (String) -> Bool) -> [String] {
        let hierarchies = ((try? FileManager.default.contentsOfDirectory(atPath: "/sys/fs/cgroup")) ?? []).map { "/sys/fs/cgroup/" + $0 } + ["/sys/fs/cgroup"]
        var found: [String] = []
        func walk(_ directory: String) {
            found.append(directory)
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
                let path = directory + "/" + entry
                if FileManager.default.fileExists(atPath: path + "/cgroup.procs") { walk(path) }
            }
        }
        for hierarchy in hierarchies {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: hierarchy)) ?? [] where root(name) {
                if FileManager.default.fileExists(atPath: hierarchy + "/" + name + "/cgroup.procs") { walk(hierarchy + "/" + name) }
            }
        }
        return found.sorted { $0.split(separator: "/").count > $1.split(separator: "/").count }
    }

    /// Removes the directories containerd made in ``defaultStatePath`` (`io.containerd.*`) where
    /// they hold no file; only while holding the lock on it, when no containerd uses it.
    static func removeEmptyStateDirectories() {
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: defaultStatePath)) ?? [] where entry.hasPrefix("io.containerd.") {
            removeEmptyDirectories(defaultStatePath + "/" + entry)
        }
    }

    /// Removes `path` and the directories under it, deepest first, where they hold no file.
    static func removeEmptyDirectories(_ path: String) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return }
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
            removeEmptyDirectories(path + "/" + entry)
        }
        rmdir(path)
    }


    // MARK: Crashed runs

    static let reaped: Void = reapStale()

    /// Removes what test processes that are gone left: their containerd and shims, their pods'
    /// pause processes, network namespaces, results files, cgroups and bundles, and their
    /// containerd homes. Found by the pid in their names: results files `ifmt-<pid>-pods…`,
    /// cgroups and bundles' cgroups `/ifmt-<pid>-kubepods…`, homes `…/ifmt-<pid>-cri…`.
    public static func reapStale() {
        var pids: Set<Int32> = []
        for file in (try? FileManager.default.contentsOfDirectory(atPath: cniCachePath)) ?? [] {
            if let pid = ownerPid(file, suffix: "-pods") { pids.insert(pid) }
            // A loopback attachment's file names the pod in its cniArgs.
            guard file.hasPrefix("cni-loopback-"), let data = regularFile(cniCachePath + "/" + file),
                  let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { continue }
            for pair in json["cniArgs"] as? [[String]] ?? [] where pair.count == 2 && pair[0] == "K8S_POD_NAME" {
                if let pid = ownerPid(pair[1], suffix: "-") { pids.insert(pid) }
            }
        }
        for name in cgroupDirectories({ ownerPid($0, suffix: "-kubepods") != nil }) {
            if let pid = ownerPid((name as NSString).lastPathComponent, suffix: "-kubepods") { pids.insert(pid) }
        }
        for id in bundles(in: defaultStatePath, cgroupRoot: { ownerPid($0, suffix: "-kubepods") != nil }) {
            let spec = regularFile("\(defaultStatePath)/io.containerd.runtime.v2.task/k8s.io/\(id)/config.json")
            let path = ((spec.flatMap { try? JSONSerialization.jsonObject(with: $0) } as? [String: Any])?["linux"] as? [String: Any])?["cgroupsPath"] as? String
            if let top = path?.split(separator: "/").first, let pid = ownerPid(String(top), suffix: "-kubepods") { pids.insert(pid) }
        }
        var homes: [Int32: [String]] = [:]
        let temporary = FileManager.default.temporaryDirectory.path
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? [] where entry.hasPrefix("ifmeter-test-") {
            for sub in (try? FileManager.default.contentsOfDirectory(atPath: temporary + "/" + entry)) ?? [] {
                if let pid = ownerPid(sub, suffix: "-cri") {
                    pids.insert(pid)
                    homes[pid, default: []].append(temporary + "/" + entry + "/" + sub)
                }
            }
        }
        var reapedAny = false
        for pid in pids where pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH {
            let cgroupRoot = { (name: String) in ownerPid(name, suffix: "-kubepods") == pid }
            let loopback = { (pod: String, _: String) in pod.hasPrefix("ifmt-\(pid)-") }
            removeLeftovers(Leftovers(processMarker: "/ifmt-\(pid)-cri", resultsPrefix: "ifmt-\(pid)-pods", cgroupRoot: cgroupRoot,
                                      state: defaultStatePath, home: nil, loopback: loopback), knownNetns: [])
            reapedAny = true
            for home in homes[pid] ?? [] {
                removeLeftovers(Leftovers(processMarker: home + "/", resultsPrefix: "ifmt-\(pid)-pods", cgroupRoot: cgroupRoot,
                                          state: home + "/state", home: home, loopback: loopback), knownNetns: [])
                try? FileManager.default.removeItem(atPath: (home as NSString).deletingLastPathComponent)
            }
        }
        guard reapedAny else { return }
        // What they made and left empty: libcni's cache directories (no package makes them), and
        // containerd's directories in its default state while none uses it.
        rmdir(cniCachePath)
        rmdir("/var/lib/cni")
        if let lock = claimDefaultState() {
            removeEmptyStateDirectories()
            close(lock)
        }
    }

    /// The pid in `ifmt-<pid><suffix>…`, if the name has that shape.
    private static func ownerPid(_ name: String, suffix: String) -> Int32? {
        let parts = name.split(separator: "-", maxSplits: 2)
        guard parts.count == 3, parts[0] == "ifmt", let pid = Int32(parts[1]), ("-" + parts[2]).hasPrefix(suffix) else { return nil }
        return pid
    }
}
