import IfMeterCore
#if canImport(Glibc)
import Glibc
#endif

/// The machine facts the meter is keyed by: which boot this is, and what time it is.
public enum SystemClock {
    /// `/proc/sys/kernel/random/boot_id`: a new random UUID at every boot.
    public static func bootID(path: String = "/proc/sys/kernel/random/boot_id") throws(KernelError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw KernelError(call: "open \(path)", errno: errno) }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { throw KernelError(call: "read \(path)", errno: count < 0 ? errno : EIO) }
        return String(decoding: buffer[..<count], as: UTF8.self).filter { !$0.isWhitespace }
    }

    /// Wall time and `CLOCK_BOOTTIME`, read together.
    public static func now() -> MeterInstant {
        var wall = timespec()
        var boot = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        clock_gettime(CLOCK_BOOTTIME, &boot)
        return MeterInstant(
            wall: Double(wall.tv_sec) + Double(wall.tv_nsec) / 1e9,
            sinceBootNanoseconds: UInt64(boot.tv_sec) * 1_000_000_000 + UInt64(boot.tv_nsec))
    }
}
