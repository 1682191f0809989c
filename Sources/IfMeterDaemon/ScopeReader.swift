import IfMeterCore
import IfMeterKernel
import IfMeterPlatform
#if canImport(Glibc)
import Glibc
#endif

/// Reads the interface scope programs' map (`link_scopes`, docs/SCOPES.md) for a sample, on the
/// kernel's thread, right after the applications' maps: what the daemon hands the service as
/// ``ScopeCounts``. Opened when first read, and again when the pin is another file (attached
/// anew) or a read failed; while it cannot be, ``problem`` says why, and it is said once.
/// Not for two threads at once.
final class ScopeReader: @unchecked Sendable {
    let pinDirectory: String
    private var maps: ScopeCounterMaps?
    private var openedPin: (dev: UInt64, ino: UInt64)?
    /// Why the last read found nothing; nil after a read.
    private(set) var problem: String? = "not read yet"

    init(pinDirectory: String) { self.pinDirectory = pinDirectory }

    /// One read; nil when the map cannot be read.
    func read() -> ScopeCounts? {
        do {
            let pin = pinDirectory + "/link_scopes"
            var info = stat()
            guard stat(pin, &info) == 0 else {
                throw KernelError(call: "stat \(pin)", errno: errno, detail: "ifmeterd --attach-apps pins it, as root")
            }
            let identity = (dev: UInt64(info.st_dev), ino: UInt64(info.st_ino))
            if maps == nil || openedPin.map({ $0 != identity }) ?? true {
                maps = try ScopeCounterMaps(pinDirectory: pinDirectory)
                openedPin = identity
            }
            let counts = try maps!.read()
            problem = nil
            return counts
        } catch {
            maps = nil
            let reason = "\(error)"
            if problem != reason { Diagnostics.warning("interfaces' scopes are not counted: \(reason)") }
            problem = reason
            return nil
        }
    }
}
