import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Where a harness's containerd keeps its state, and the pause image every pod runs.
extension ContainerdCRI {
    /// Tests/tools, where the CRI client and the pause image's maker are.
    static var tools: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().path + "/tools"
    }

    // MARK: The default state directory

    /// The lock that gives this harness ``defaultStatePath``, or nil when another containerd may
    /// use it: one runs with that state, or bundles lie there (a host containerd stopped while
    /// its pods run: a containerd started on them would delete them). The lock is an abstract
    /// socket's name, bound while held: it leaves no file, and goes with the process.
    static func claimDefaultState() -> Int32? {
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let name = Array("ifmeter-test-containerd-default-state".utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: [0] + name) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sa_family_t>.size + 1 + name.count))
            }
        }
        guard bound == 0, !defaultStateInUse() else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Whether a containerd runs with ``defaultStatePath`` as its state, or bundles are there.
    static func defaultStateInUse() -> Bool {
        let tasks = defaultStatePath + "/io.containerd.runtime.v2.task"
        for space in (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? [] {
            if !((try? FileManager.default.contentsOfDirectory(atPath: tasks + "/" + space)) ?? []).isEmpty { return true }
        }
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard Int32(entry) != nil,
                  let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(entry)/exe"),
                  (exe as NSString).lastPathComponent == "containerd",
                  let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
            let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            if stateDirectory(of: arguments) == defaultStatePath { return true }
        }
        return false
    }

    /// The state directory a containerd command line gives it: `--state`, else its config's
    /// top-level `state` (`--config`, default /etc/containerd/config.toml), else the default.
    static func stateDirectory(of arguments: [String]) -> String {
        func value(_ names: [String]) -> String? {
            for (index, argument) in arguments.enumerated() {
                for name in names {
                    if argument == name, index + 1 < arguments.count { return arguments[index + 1] }
                    if argument.hasPrefix(name + "=") { return String(argument.dropFirst(name.count + 1)) }
                }
            }
            return nil
        }
        if let state = value(["--state"]) { return state }
        let config = (try? String(contentsOfFile: value(["--config", "-c"]) ?? "/etc/containerd/config.toml", encoding: .utf8)) ?? ""
        for line in config.split(separator: "\n") {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("[") { break }
            let parts = text.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count == 2, parts[0] == "state" { return parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"'")) }
        }
        return defaultStatePath
    }

    // MARK: The pause image

    /// The pause image's archive, built once per test process (`Tests/tools/pause-image`) beside
    /// the build's products.
    static let pauseArchive: Result<String, Error> = Result {
        let archive = Command.buildProductsDirectory + "/ifmt-pause-image.tar"
        let partial = archive + ".\(getpid())"
        try Command.check([python, tools + "/pause-image", partial, pauseImage], timeout: 120)
        guard rename(partial, archive) == 0 else {
            throw CommandFailed(command: ["rename", partial], result: CommandResult(status: 1, stdout: "", stderr: String(cString: strerror(errno))))
        }
        return archive
    }
}
