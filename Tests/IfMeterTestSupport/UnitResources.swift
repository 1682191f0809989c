import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The shipped unit's `MemoryMax=` and `TasksMax=` without systemd: a memory cgroup and a pids
/// cgroup of the test's own (`ifmt-<pid>-<name>`, in cgroup v1's hierarchies or in v2's), with
/// the limits read from systemd/ifmeterd.service, which the daemon joins before it runs
/// (``prefix``). Past the memory limit the kernel ends it, as it would under the unit.
/// Whatever is left in the cgroups is killed and they are removed when this is released.
public final class UnitResources {
    public let memoryLimit: UInt64
    public let tasksLimit: Int
    private let memory: String
    private let pids: String
    private let unified: Bool

    public static var available: Bool {
        getuid() == 0 && (FileManager.default.fileExists(atPath: "/sys/fs/cgroup/memory/cgroup.procs")
            || FileManager.default.fileExists(atPath: "/sys/fs/cgroup/cgroup.controllers"))
    }

    /// A value of the shipped unit's `[Service]` section, as written.
    public static func unitValue(_ key: String) -> String? {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let unit = (try? String(contentsOfFile: root.path + "/systemd/ifmeterd.service", encoding: .utf8)) ?? ""
        return unit.split(separator: "\n").first { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) }
    }

    public init(name: String) throws {
        guard let memoryValue = Self.unitValue("MemoryMax"), let memoryLimit = Self.bytes(memoryValue),
              let tasksValue = Self.unitValue("TasksMax"), let tasksLimit = Int(tasksValue) else {
            throw CommandFailed(command: ["systemd/ifmeterd.service"], result: CommandResult(
                status: 1, stdout: "", stderr: "no MemoryMax= in bytes or K/M/G, or no TasksMax= number, in the shipped unit"))
        }
        (self.memoryLimit, self.tasksLimit) = (memoryLimit, tasksLimit)
        let group = "ifmt-\(getpid())-\(name)"
        unified = !FileManager.default.fileExists(atPath: "/sys/fs/cgroup/memory/cgroup.procs")
        if unified {
            memory = "/sys/fs/cgroup/" + group
            pids = memory
            try? "+memory +pids".write(toFile: "/sys/fs/cgroup/cgroup.subtree_control", atomically: false, encoding: .utf8)
        } else {
            memory = "/sys/fs/cgroup/memory/" + group
            pids = "/sys/fs/cgroup/pids/" + group
        }
        for directory in Set([memory, pids]) { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false) }
        try write(String(memoryLimit), to: memory + (unified ? "/memory.max" : "/memory.limit_in_bytes"))
        if unified { try write("0", to: memory + "/memory.swap.max") }
        try write(String(tasksLimit), to: pids + "/pids.max")
    }

    deinit {
        for directory in Set([memory, pids]) {
            let procs = (try? String(contentsOfFile: directory + "/cgroup.procs", encoding: .utf8)) ?? ""
            for pid in procs.split(separator: "\n").compactMap({ Int32($0) }) { kill(pid, SIGKILL) }
        }
        for directory in Set([memory, pids]) {
            // Removable once the killed processes are reaped by whoever waits for them.
            for _ in 0..<100 where rmdir(directory) != 0 && errno == EBUSY { usleep(20_000) }
        }
    }

    /// Put before the command: joins the cgroups, then execs the rest (the pid stays the same).
    public var prefix: [String] {
        let join = Set([memory, pids]).sorted().map { "echo $$ > \($0)/cgroup.procs" }.joined(separator: " && ")
        return ["/bin/sh", "-c", join + #" && exec "$0" "$@""#]
    }

    /// The most memory the cgroup's processes have held at once (page cache included).
    public var peakBytes: UInt64 {
        let path = memory + (unified ? "/memory.peak" : "/memory.max_usage_in_bytes")
        return UInt64(((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    /// Processes the kernel ended for want of memory in the cgroup.
    public var oomKills: Int {
        let text = (try? String(contentsOfFile: memory + (unified ? "/memory.events" : "/memory.oom_control"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").first { $0.hasPrefix("oom_kill ") }.flatMap { Int($0.dropFirst("oom_kill ".count)) } ?? 0
    }

    /// "512M" as systemd reads it (K, M, G, T are powers of 1024).
    static func bytes(_ value: String) -> UInt64? {
        let units: [Character: UInt64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        if let last = value.last, let unit = units[last] { return UInt64(value.dropLast()).map { $0 * unit } }
        return UInt64(value)
    }

    private func write(_ value: String, to path: String) throws {
        do {
            try value.write(toFile: path, atomically: false, encoding: .utf8)
        } catch {
            throw CommandFailed(command: ["write \(value) to \(path)"], result: CommandResult(status: 1, stdout: "", stderr: "\(error)"))
        }
    }
}
