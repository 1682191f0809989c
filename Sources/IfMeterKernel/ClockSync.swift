import CClock
import IfMeterCore
#if canImport(Glibc)
import Glibc
#endif

/// Whether a time source says the wall clock is right (``ClockTrust``'s way back from doubt):
/// - the kernel's NTP state, `adjtimex(2)` without `STA_UNSYNC` (setting the clock by hand sets
///   it; an NTP daemon clears it). The unit's `ProtectClock=` refuses the call (EPERM) even to
///   read: then only the next source is asked.
/// - systemd-timesyncd touching `/run/systemd/timesync/synchronized` after a sync: a touch seen
///   since the last look, stamped with the wall clock as it reads now (a stamp from before a
///   jump is left behind by it).
public struct ClockSync: Sendable {
    public let timesyncFile: String
    private var lastStamp: timespec?
    /// Whether adjtimex answered at all; after one refusal it is not asked again.
    private var kernelAnswers = true

    public init(timesyncFile: String = "/run/systemd/timesync/synchronized") {
        self.timesyncFile = timesyncFile
        lastStamp = Self.stamp(timesyncFile)
    }

    /// Asked at `now`, once per sample; `window` is how far back a touch may be stamped (the
    /// time since the last look, with room).
    public mutating func synchronised(at now: MeterInstant, window: Double) -> Bool {
        if kernelAnswers {
            switch ifm_clock_synchronised() {
            case 1: return true
            case 0: break
            default: kernelAnswers = false
            }
        }
        let stamp = Self.stamp(timesyncFile)
        defer { lastStamp = stamp }
        guard let stamp, stamp.tv_sec != lastStamp?.tv_sec || stamp.tv_nsec != lastStamp?.tv_nsec else { return false }
        let touched = Double(stamp.tv_sec) + Double(stamp.tv_nsec) / 1e9
        return touched <= now.wall + ClockTrust.toleranceSeconds && touched >= now.wall - window
    }

    private static func stamp(_ path: String) -> timespec? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return status.st_mtim
    }
}
