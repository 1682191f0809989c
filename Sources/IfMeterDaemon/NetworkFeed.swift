import IfMeterCore
import IfMeterKernel
import IfMeterMetrics
import IfMeterNetworkManager
import IfMeterPlatform

/// What NetworkManager says each device is on, into the service at sample boundaries
/// (docs/NETWORKS.md): each change is preceded by a sample, taken at once, that closes what the
/// devices were on before, so none of one network's traffic is counted to the next.
final class NetworkFeed {
    /// The metering that holds this feed.
    private unowned let metering: Metering
    private var watch: NetworkManagerWatch?
    /// What was last said of NetworkManager's absence, so that it is said once.
    private var lastReason: String?
    /// More networks were seen than /metrics exposes, and the journal was told.
    private var saidPastExposed = false

    /// While the system bus cannot be reached: the next try.
    private var retry: EventSource?

    /// How often the system bus is tried while it cannot be reached (at boot it may come later).
    static let retryInterval: Duration = .seconds(30)

    init(metering: Metering) {
        self.metering = metering
    }

    /// Watches NetworkManager on the system bus (`DBUS_SYSTEM_BUS_ADDRESS` honoured). No bus is
    /// one line, and interfaces are counted as ever; the bus is tried again every 30 s.
    func start(loop: EventLoop) {
        let watch = NetworkManagerWatch(
            loop: loop,
            onChange: { [unowned self] devices in changed(devices) },
            onUnavailable: { [unowned self] reason in unavailable(reason) })
        do {
            try watch.start()
        } catch {
            unavailable("\(error); tried again every \(Self.retryInterval.components.seconds) s")
            retry = try? loop.after(Self.retryInterval) { [unowned self] in
                retry = nil
                start(loop: loop)
            }
            return
        }
        self.watch = watch
    }

    private func changed(_ devices: [DeviceNetwork]) {
        if lastReason != nil {
            Diagnostics.notice("networks: NetworkManager is on the bus; \(devices.filter { $0.network != nil }.count) device(s) on a network")
            lastReason = nil
        }
        metering.sampler.sample { [unowned self] in
            metering.service.reportNetworks(devices, at: SystemClock.now().wall)
            metering.watchPlans()
            let count = metering.service.networkCount
            if !saidPastExposed, count > MetricsExposition.maximumNetworks {
                saidPastExposed = true
                Diagnostics.notice("networks: \(count) networks seen; /metrics exposes the \(MetricsExposition.maximumNetworks) "
                    + "active or most recently seen and counts the rest in ifmeter_networks_not_exposed; ifmeter networks lists all")
            }
        }
    }

    private func unavailable(_ reason: String) {
        if lastReason != reason {
            Diagnostics.notice("networks: \(reason); what NetworkManager's devices carry meanwhile is counted to network:unknown "
                + "(docs/NETWORKS.md)")
            lastReason = reason
        }
        // No interface on a network (no NetworkManager since the start, the bus tried again):
        // nothing to close, and no sample is taken for it.
        guard metering.service.hasInterfacesOnNetworks else { return metering.service.networkManagerGone() }
        metering.sampler.sample { [unowned self] in metering.service.networkManagerGone() }
    }
}
