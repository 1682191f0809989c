import Foundation
import IfMeterCore
@testable import IfMeterHistory
@testable import IfMeterStore
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A small tmpfs the test mounts, fills, and always unmounts.
final class SmallFilesystem {
    let directory: TemporaryDirectory
    var path: String { directory.path }

    init(size: String) throws {
        directory = try TemporaryDirectory()
        try Command.check(["mount", "-t", "tmpfs", "-o", "size=\(size),mode=0700", "ifmeter-test", directory.path])
    }

    deinit { _ = try? Command.run(["umount", "-l", directory.path]) }

    /// Writes zeros until the filesystem is full.
    func fill() throws {
        let fd = open(path + "/filler", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer { close(fd) }
        let block = [UInt8](repeating: 0, count: 4096)
        while block.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
    }

    func free() throws {
        try FileManager.default.removeItem(atPath: path + "/filler")
    }
}

@Suite("Store when the disk fails", .enabled(if: getuid() == 0, "needs root to mount a small tmpfs"), .ownThread, .timeLimit(.minutes(3)))
struct StoreDiskTests {
    /// Meter output for `count` interfaces with plenty of events, to make a save big.
    func busyOutput(_ meter: inout Meter, count: Int, at seconds: Double) -> MeterOutput {
        meter.apply(sample: (0..<count).map { reading(Int32($0 + 2), traffic(UInt64(seconds) * 100, 5)) }, at: at(seconds))
    }

    @Test("disk full: a clear error, nothing damaged, the same writes saved once space returns")
    func diskFull() throws {
        let filesystem = try SmallFilesystem(size: "1m")
        var life = try Lifetime(path: filesystem.path + "/ifmeter.db")
        let count = 300
        life.take(life.meter.start(links: (0..<count).map { link("if\($0)", Int32($0 + 2), traffic(0, 0)) }, at: at(0)))
        life.take(busyOutput(&life.meter, count: count, at: 60))
        try life.save()

        try filesystem.fill()
        var failures = 0
        for minute in 2...40 {
            life.take(busyOutput(&life.meter, count: count, at: Double(minute) * 60))
            do {
                try life.save()
            } catch {
                failures += 1
                #expect(error.kind == .full)
                #expect(error.description.hasPrefix("cannot save to database \(life.store.path): database or disk is full"))
            }
        }
        #expect(failures > 0, "the filled disk must make saves fail")
        #expect(!life.pending.isEmpty, "what could not be saved is kept")
        #expect(try life.store.connection.scalarText("PRAGMA integrity_check", "check") == "ok")

        try filesystem.free()
        try life.save()
        #expect(life.pending.isEmpty)
        #expect(try life.store.queries.total("if7")?.tally.traffic == traffic(40 * 60 * 100, 5))
        #expect(try life.store.queries.usage(.interface("if7"), resolution: .hour).map(\.tally.traffic.rxBytes).reduce(0, +) == 40 * 60 * 100)
    }
}
