import IfMeterCore
#if canImport(Glibc)
import Glibc
#endif

/// The machine facts the meter is keyed by: which boot this is, and what time it is.
public enum SystemClock {
    /// `/proc/sys/kernel/random/boot_id`: a new random UUID at every boot.
    public static func bootID(path: String = "/proc/sys/kernel/random/boot_id") throws(KernelError) -> String {
        let bytes: [UInt8]
        do {
            bytes = try WholeFile.read(path, limit: 64)
        } catch {
            switch error.reason {
            case .open(let failure): throw KernelError(call: "open \(path)", errno: failure.code)
            case .read(let failure): throw KernelError(call: "read \(path)", errno: failure.code)
            case .tooLarge, .notRegularFile: throw KernelError(call: "read \(path)", errno: EINVAL)
            }
        }
        guard !bytes.isEmpty else { throw KernelError(call: "read \(path)", errno: EIO) }
        return String(decoding: bytes, as: UTF8.self).filter { !$0.isWhitespace }
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
