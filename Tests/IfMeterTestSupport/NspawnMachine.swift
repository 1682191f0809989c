import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A systemd-nspawn container for tests (shared/notes/systemd-in-a-container.md): a busybox
/// tree, `--network-veth` (the host side `ve-NAME` in `namespace`), no registration, its own
/// cgroup in both hierarchies (else nspawn leaves `/payload` and `/supervisor` in the host's
/// root cgroup); killed, waited for and its cgroups removed when released.
public final class NspawnMachine: @unchecked Sendable {
    public let name: String
    private let process: Process
    private let cgroup: String
    private let root: TemporaryDirectory

    public static var available: Bool {
        getuid() == 0 && (try? Command.resolve("systemd-nspawn")) != nil && FileManager.default.isExecutableFile(atPath: "/bin/busybox")
            && FileManager.default.fileExists(atPath: "/sys/fs/cgroup/unified")
    }

    /// Starts `sleep` as the machine's payload and returns once its host side is in `namespace`.
    public init(name: String, in namespace: NetworkNamespace) throws {
        self.name = name
        root = try TemporaryDirectory()
        for directory in ["bin", "usr", "etc", "proc", "sys", "dev", "run", "tmp"] {
            try FileManager.default.createDirectory(atPath: root.path + "/" + directory, withIntermediateDirectories: true)
        }
        try FileManager.default.copyItem(atPath: "/bin/busybox", toPath: root.path + "/bin/busybox")
        for command in ["sh", "sleep", "ip", "cat"] {
            try FileManager.default.createSymbolicLink(atPath: root.path + "/bin/" + command, withDestinationPath: "busybox")
        }
        try "ID=busybox\n".write(toFile: root.path + "/etc/os-release", atomically: true, encoding: .utf8)
        cgroup = "ifmt-\(getpid())-\(name)"
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", """
            for h in systemd unified; do mkdir -p /sys/fs/cgroup/$h/\(cgroup) && echo $$ > /sys/fs/cgroup/$h/\(cgroup)/cgroup.procs || exit 1; done
            exec nsenter --net=/run/netns/\(namespace.name) systemd-nspawn -q -D \(root.path) --register=no --keep-unit \
              --network-veth -M \(name) /bin/sleep 3600
            """]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let hostSide = String(("ve-" + name).prefix(15))
        let deadline = Date().addingTimeInterval(60)
        // The host side appears before nspawn has moved its payload into the payload cgroup.
        while (try? namespace.ip("link", "show", hostSide)) == nil || payload == nil {
            guard Date() < deadline, process.isRunning else {
                stop()
                throw CommandFailed(command: ["systemd-nspawn", name], result: CommandResult(status: 1, stdout: "", stderr: "no \(hostSide) or no payload"))
            }
            usleep(20_000)
        }
    }

    deinit { stop() }

    /// The payload's pid, to enter its namespace (`nsenter -t PID -n`): the `sleep` in the
    /// payload cgroup. Not merely the first pid there: for a moment that is nspawn's own child,
    /// which goes once it has started the payload.
    public var payload: Int32? {
        let procs = (try? String(contentsOfFile: "/sys/fs/cgroup/unified/\(cgroup)/payload/cgroup.procs", encoding: .utf8)) ?? ""
        return procs.split(separator: "\n").compactMap { Int32($0) }.first { pid in
            (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) == "sleep\n"
        }
    }

    private func stop() {
        process.end(SIGKILL)
        // The payload outlives a killed nspawn: kill what is left in the cgroups, then remove them.
        for hierarchy in ["unified", "systemd"] {
            let base = "/sys/fs/cgroup/\(hierarchy)/\(cgroup)"
            for sub in ["payload", "supervisor", ""] {
                let path = sub.isEmpty ? base : base + "/" + sub
                let procs = (try? String(contentsOfFile: path + "/cgroup.procs", encoding: .utf8)) ?? ""
                for pid in procs.split(separator: "\n").compactMap({ Int32($0) }) { kill(pid, SIGKILL) }
            }
        }
        for hierarchy in ["unified", "systemd"] {
            let base = "/sys/fs/cgroup/\(hierarchy)/\(cgroup)"
            for sub in ["payload", "supervisor", ""] {
                let path = sub.isEmpty ? base : base + "/" + sub
                var tries = 0
                while rmdir(path) != 0 && errno == EBUSY && tries < 500 { tries += 1; usleep(10_000) }
            }
        }
    }
}
