import Foundation
import IfMeterTestSupport
import Testing

/// The real `ifmeter` binary next to the tests.
enum CLIBinary {
    static var path: String { Command.buildProductsDirectory + "/ifmeter" }
    static var seeder: String { Command.buildProductsDirectory + "/history-seeder" }
}

/// A real ifmeterd serving the seeded history (Tests/HistorySeeder) in a namespace of its own,
/// with the wall clock frozen at 2026-03-31 08:00 UTC by libfaketime and buckets cut in
/// Europe/Berlin. The monotonic clocks stay real, so the daemon's timers work.
final class SeededDaemon {
    /// libfaketime, preloaded (its `faketime` wrapper forks, so signals would reach the wrapper
    /// and not the daemon). The thread-safe variant: Swift is threaded.
    static let library = ["/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
                          "/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1"]
        .first { FileManager.default.fileExists(atPath: $0) }
    /// 2026-03-31 08:00 UTC; libfaketime reads an absolute time in the local zone.
    static let environment = [
        "TZ": "Europe/Berlin", "LC_ALL": "C", "FAKETIME": "2026-03-31 10:00:00", "DONT_FAKE_MONOTONIC": "1",
        "LD_PRELOAD": library ?? "",
    ]
    /// Started through a preloaded `sh` that execs the program: libfaketime's first process
    /// calls setenv(FAKETIME_SHARED), which moves `environ`, and the Swift runtime finds argv
    /// relative to `environ` — a Swift program preloaded first sees no arguments. Its child
    /// inherits the variable, nothing moves, and `exec` keeps the pid.
    static let launcher = ["/bin/sh", "-c", #"exec "$0" "$@""#]
    static var available: Bool { NetworkNamespace.available && library != nil }
    static let skipReason: Comment = "needs root (a network namespace) and libfaketime (make test installs it)"

    let namespace: NetworkNamespace
    let daemon: DaemonProcess

    init(config: String = "interval = 3600\n") throws {
        namespace = try NetworkNamespace()
        daemon = try DaemonProcess(namespace: namespace, config: config)
        try FileManager.default.createDirectory(atPath: daemon.stateDirectory, withIntermediateDirectories: true)
        let seeded = try Command.run([CLIBinary.seeder, daemon.stateDirectory + "/ifmeter.db"], environment: ["TZ": "Europe/Berlin"])
        guard seeded.status == 0 else { throw CommandFailed(command: [CLIBinary.seeder], result: seeded) }
        try daemon.start(environment: Self.environment, prefix: Self.launcher)
    }

    /// Runs `ifmeter` on this daemon's socket at the frozen time.
    func ifmeter(_ arguments: [String]) throws -> CommandResult {
        try Command.run(Self.launcher + [CLIBinary.path, "--socket", daemon.socket] + arguments, environment: Self.environment)
    }
}

/// Expected outputs in Tests/EndToEndTests/Golden. `IFMETER_UPDATE_GOLDEN=1 swift test` rewrites
/// them from what the binaries print now (then review the diff).
enum Golden {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden").path

    static func check(_ name: String, _ actual: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let path = directory + "/" + name
        if ProcessInfo.processInfo.environment["IFMETER_UPDATE_GOLDEN"] == "1" {
            try? actual.write(toFile: path, atomically: true, encoding: .utf8)
            return
        }
        let expected = (try? String(contentsOfFile: path, encoding: .utf8)) ?? "(missing golden file \(path))"
        if actual != expected {
            let actualPath = FileManager.default.temporaryDirectory.appendingPathComponent("ifmeter-golden-\(name)").path
            try? actual.write(toFile: actualPath, atomically: true, encoding: .utf8)
            Issue.record("\(name) differs from its golden file; see: diff \(path) \(actualPath)", sourceLocation: sourceLocation)
        }
    }
}
