import CSystemd
import IfMeterCore
import IfMeterNetworkManager
import IfMeterPlatform

/// A ``NetworkManagerWatch`` on an event loop that the test's own thread runs, turn by turn,
/// only inside ``run(until:within:)``: while the test drives the mock, the watch does nothing,
/// and what it reported is read without locks.
final class WatchRun {
    let loop: EventLoop
    private(set) var watch: NetworkManagerWatch!
    /// Every list `onChange` was called with, in order.
    private(set) var changes: [[DeviceNetwork]] = []
    /// Every reason `onUnavailable` was called with, in order.
    private(set) var unavailable: [String] = []

    init(address: String, allowedUID: UInt32 = 0) throws {
        loop = try EventLoop()
        watch = NetworkManagerWatch(loop: loop, busAddress: address, allowedUID: allowedUID,
                                    onChange: { [unowned self] in changes.append($0) },
                                    onUnavailable: { [unowned self] in unavailable.append($0) })
        try watch.start()
    }

    /// Runs the loop until `condition` holds, for at most `seconds`; whether it held. The
    /// condition is looked at after every loop turn, so nothing waits longer than it must.
    func run(until condition: () -> Bool, within seconds: Double = 30) -> Bool {
        let deadline = loop.now + UInt64(seconds * 1_000_000)
        while !condition() {
            guard loop.now < deadline else { return false }
            _ = sd_event_run(loop.handle, 50_000)
        }
        return true
    }
}
