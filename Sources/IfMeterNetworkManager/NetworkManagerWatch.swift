import IfMeterCore
import IfMeterPlatform
#if canImport(Glibc)
import Glibc
#endif

/// Which connection (network) each NetworkManager device is on, now and whenever that changes,
/// from NetworkManager's D-Bus signals on the system bus, over sd-bus on the daemon's loop:
/// never polled.
///
/// ``start()`` connects, asks the bus who owns `org.freedesktop.NetworkManager` and believes
/// the owner only if its uid is the one allowed (root unless told); then it reads everything
/// and calls `onChange` with the full list. After that, the signals NetworkManager sends when
/// what a device is on may have changed (a connection activated or deactivated, a device's
/// `Metered`, a device added or removed) mark the state dirty, and one read follows once the
/// bus has nothing more to deliver: NetworkManager sends dozens of signals per switch, and they
/// lead to one read, and to one `onChange` with the final list, called only when the list
/// differs from the last one delivered. A read in flight is never doubled: signals during it
/// make one more read after it, so a flood costs at most a read at a time. A read that caught
/// a device in the middle of a move (``NetworkManagerReading/isInTransition(_:)``: NetworkManager
/// switching profiles is off both for 2 ms) is not delivered; the next state's signal makes
/// the next read, and after 1 s without one the list goes out as it is.
///
/// When NetworkManager leaves the bus, `onUnavailable` says so and why: the networks of its
/// devices are unknown until it returns, when everything is read again and `onChange` called.
/// The same goes for a name owned by a process of another uid (an impostor, reported once with
/// its uid), for NetworkManager not running at start, and for a read that failed (it did not
/// answer within 5 s; the loop went on meanwhile): the next signal from it reads again. Signals
/// are taken only from the unique name whose uid was checked, and calls go only to it.
///
/// Everything runs on the loop's thread, callbacks included; nothing waits for the bus.
public final class NetworkManagerWatch {
    /// NetworkManager's well-known name on the system bus.
    public static let busName = "org.freedesktop.NetworkManager"
    static let modemManagerName = NetworkManagerRead.modemManagerName
    /// Distinct warnings logged at most, so a hostile or broken NetworkManager cannot grow the
    /// set that keeps each to once.
    static let maxWarnings = 256
    /// How long lists read while a device is in the middle of a move are held back, waiting
    /// for the signal of its next state: NetworkManager sends it within milliseconds, and this
    /// only bounds how long a NetworkManager that never does is waited for.
    static let transitionLimit: Duration = .seconds(1)

    /// The properties whose change may change what a device is on, by interface; a
    /// `PropertiesChanged` naming none of them (IP configuration, statistics, …) is dropped.
    static let relevantProperties: [String: Set<String>] = [
        NetworkManagerRead.interface: ["Devices", "ActiveConnections"],
        NetworkManagerRead.deviceInterface: ["ActiveConnection", "Metered", "Interface", "IpInterface", "DeviceType", "Udi"],
        NetworkManagerRead.activeInterface: ["State", "StateFlags", "Master", "Uuid", "Id", "Type", "Connection", "SpecificObject"],
    ]

    /// The bus daemon's filters, so that only signals that may matter wake the loop. A rule
    /// naming a well-known sender matches whoever owns it now, so each handler also checks the
    /// sender against the owner whose uid was checked (and unicast signals reach every
    /// connection, whatever its rules).
    static var networkManagerRules: [String] {
        let signal = "type='signal',sender='\(busName)'"
        let properties = "\(signal),interface='\(NetworkManagerRead.propertiesInterface)',member='PropertiesChanged'"
        return relevantProperties.keys.sorted().map { "\(properties),arg0='\($0)'" } + [
            "\(signal),interface='\(NetworkManagerRead.deviceInterface)',member='StateChanged'",
            "\(signal),path='\(NetworkManagerRead.path)',interface='\(NetworkManagerRead.interface)',member='DeviceAdded'",
            "\(signal),path='\(NetworkManagerRead.path)',interface='\(NetworkManagerRead.interface)',member='DeviceRemoved'",
        ]
    }

    static func nameOwnerRule(_ name: String) -> String {
        "type='signal',sender='\(BusOwnerCheck.busName)',path='\(BusOwnerCheck.busPath)',"
            + "interface='\(BusOwnerCheck.busName)',member='NameOwnerChanged',arg0='\(name)'"
    }

    static var operatorRule: String {
        "type='signal',sender='\(modemManagerName)',interface='\(NetworkManagerRead.propertiesInterface)',"
            + "member='PropertiesChanged',arg0='\(NetworkManagerRead.modem3gppInterface)'"
    }

    private let loop: EventLoop
    private let busAddress: String?
    private let allowedUID: UInt32
    private let onChange: ([DeviceNetwork]) -> Void
    private let onUnavailable: (String) -> Void

    private var bus: BusConnection?
    /// Runs a read after everything the bus has ready: its priority is below the bus's.
    private var coalescing: EventSource?
    private var ownerCheck: BusOwnerCheck?
    /// NetworkManager's unique name, once its uid was checked.
    private var owner: String?
    /// ModemManager's unique name, as the last read checked it.
    private var modemManager: String?
    private var read: NetworkManagerRead?
    /// A signal came since the last read began.
    private var dirty = false
    /// The list last given to `onChange`; nil after `onUnavailable`, so the next read delivers.
    private var delivered: [DeviceNetwork]?
    /// The reason last given to `onUnavailable`, while it holds.
    private var unavailable: String?
    /// Armed while lists are held back because a device is in the middle of a move.
    private var transition: EventSource?
    /// The hold lasted ``transitionLimit``: the next list is delivered whatever it says.
    private var transitionTimedOut = false
    private var warned: Set<String> = []
    /// The timer that connects again after the bus was lost.
    private var reconnecting: EventSource?
    /// The timer that reads again after a read failed.
    private var retryingRead: EventSource?

    /// A watch on the system bus (`DBUS_SYSTEM_BUS_ADDRESS` honoured), or on the bus at
    /// `busAddress`, believing only a NetworkManager (and ModemManager) running as
    /// `allowedUID`. Nothing happens before ``start()``.
    public init(loop: EventLoop, busAddress: String? = nil, allowedUID: uid_t = 0,
                onChange: @escaping ([DeviceNetwork]) -> Void, onUnavailable: @escaping (String) -> Void) {
        self.loop = loop
        self.busAddress = busAddress
        self.allowedUID = allowedUID
        self.onChange = onChange
        self.onUnavailable = onUnavailable
    }

    deinit {
        // Calls and checks first: their slots hold the connection.
        read = nil
        ownerCheck = nil
        bus = nil
    }

    /// Connects, subscribes and asks who owns NetworkManager's name; the first `onChange` (or
    /// `onUnavailable`) comes from the loop once the bus answers. Throws, naming the bus address
    /// and errno, when there is no bus to connect to: one error for the daemon to log, which
    /// goes on without networks. A second call does nothing.
    public func start() throws(PlatformError) {
        guard bus == nil else { return }
        let bus = try BusConnection(address: busAddress, loop: loop)
        let coalescing = try loop.deferred { [weak self] in self?.readIfDirty() }
        coalescing.setUnimportant()
        for rule in Self.networkManagerRules {
            try bus.addMatch(rule) { [weak self] in self?.networkManagerSignal($0) }
        }
        for name in [Self.busName, Self.modemManagerName] {
            try bus.addMatch(Self.nameOwnerRule(name)) { [weak self] in self?.nameOwnerChanged($0) }
        }
        try bus.addMatch(Self.operatorRule) { [weak self] in self?.modemManagerSignal($0) }
        try bus.onDisconnect { [weak self] in self?.disconnected() }
        self.bus = bus
        self.coalescing = coalescing
        // Sent after the matches, which the bus daemon installs first: no owner change between
        // its answer and the subscription goes unseen.
        checkOwner(announced: nil)
    }

    private func checkOwner(announced: String?) {
        guard let bus else { return }
        ownerCheck = BusOwnerCheck(Self.busName, owner: announced, bus: bus, allowedUID: allowedUID,
                                   timeout: EventLoop.microseconds(NetworkManagerRead.budget)) { [weak self] outcome in
            self?.ownerChecked(outcome)
        }
    }

    private func ownerChecked(_ outcome: BusOwnerCheck.Outcome) {
        ownerCheck = nil
        switch outcome {
        case .believed(let owner):
            self.owner = owner
            markDirty()
        case .notRunning:
            becomeUnavailable("NetworkManager is not running: which network each interface is on is unknown until it starts")
        case .impostor(_, let uid):
            becomeUnavailable("\(Self.busName) is owned by a process of uid \(uid), not \(allowedUID): not believed; "
                              + "which network each interface is on is unknown until NetworkManager itself owns it")
        case .failed(let reason):
            becomeUnavailable("cannot tell who owns \(Self.busName) (\(reason)): "
                              + "which network each interface is on is unknown until it changes hands")
        }
    }

    private func nameOwnerChanged(_ signal: BusMessageReader) {
        guard signal.sender == BusOwnerCheck.busName,
              let name = try? signal.string(), (try? signal.string()) != nil, let newOwner = try? signal.string() else { return }
        switch name {
        case Self.busName:
            owner = nil
            read = nil
            ownerCheck = nil
            dirty = false
            if newOwner.isEmpty {
                becomeUnavailable("NetworkManager left the system bus (stopped or restarting): "
                                  + "which network each interface is on is unknown until it returns")
            } else {
                checkOwner(announced: newOwner)
            }
        case Self.modemManagerName:
            // Its operators are read again, from the new owner if it is believed.
            modemManager = nil
            if owner != nil { markDirty() }
        default:
            break
        }
    }

    private func networkManagerSignal(_ signal: BusMessageReader) {
        guard let owner, signal.sender == owner else { return }
        if signal.isSignal(NetworkManagerRead.propertiesInterface, "PropertiesChanged") {
            guard let (interface, names) = try? signal.changedProperties(),
                  let relevant = Self.relevantProperties[interface], !relevant.isDisjoint(with: names) else { return }
        }
        markDirty()
    }

    private func modemManagerSignal(_ signal: BusMessageReader) {
        guard let modemManager, owner != nil, signal.sender == modemManager,
              let (_, names) = try? signal.changedProperties(), names.contains("OperatorName") else { return }
        markDirty()
    }

    /// The bus went away (dbus-daemon restarted or ended): unknown until a new connection,
    /// tried after ``reconnectDelay`` and then every ``reconnectInterval`` while it fails.
    private func disconnected() {
        owner = nil
        read = nil
        ownerCheck = nil
        becomeUnavailable("the connection to the system bus was lost; connecting again")
        // Not here: this runs inside sd-bus's dispatch of the old connection, which must not be
        // freed under it.
        reconnect(after: Self.reconnectDelay)
    }

    /// How soon a lost bus is connected to again, and how often after that while it fails.
    static let reconnectDelay: Duration = .seconds(1)
    static let reconnectInterval: Duration = .seconds(30)

    private func reconnect(after delay: Duration) {
        reconnecting = try? loop.after(delay) { [weak self] in
            guard let self else { return }
            reconnecting = nil
            bus = nil
            coalescing = nil
            do {
                try start()
            } catch {
                becomeUnavailable("the system bus cannot be reached (\(error)); connecting again every "
                                  + "\(Self.reconnectInterval.components.seconds) s")
                reconnect(after: Self.reconnectInterval)
            }
        }
    }

    private func markDirty() {
        dirty = true
        if read == nil { coalescing?.trigger() }
    }

    private func readIfDirty() {
        guard dirty, read == nil, let owner, let bus else { return }
        dirty = false
        let read = NetworkManagerRead(bus: bus, loop: loop, owner: owner, allowedUID: allowedUID) { [weak self] outcome in
            self?.readFinished(outcome)
        }
        self.read = read
        read.start()
    }

    private func readFinished(_ outcome: NetworkManagerRead.Outcome) {
        read = nil
        switch outcome {
        case .read(let snapshot, let modemManager):
            self.modemManager = modemManager
            let (devices, problems) = NetworkManagerReading.devices(from: snapshot)
            for problem in problems { warnOnce(problem) }
            if NetworkManagerReading.isInTransition(snapshot) && !transitionTimedOut && holdForTransition() { break }
            transition = nil
            transitionTimedOut = false
            unavailable = nil
            if devices != delivered {
                delivered = devices
                onChange(devices)
            }
        case .failed(let reason):
            becomeUnavailable("\(reason): which network each interface is on is unknown until NetworkManager answers")
            readAgainLater()
        case .notReady:
            readAgainLater()
        }
        if dirty { coalescing?.trigger() }
    }

    /// How soon a read that failed (or found NetworkManager not ready) is tried again: a quiet
    /// NetworkManager sends no signal that would.
    static let readRetry: Duration = .seconds(5)

    private func readAgainLater() {
        guard retryingRead == nil else { return }
        retryingRead = try? loop.after(Self.readRetry) { [weak self] in
            self?.retryingRead = nil
            self?.markDirty()
        }
    }

    /// Holds lists back until the signal of the device's next state (which makes another read),
    /// for at most ``transitionLimit``; false if no timer could be had, so the list goes out.
    private func holdForTransition() -> Bool {
        if transition == nil {
            transition = try? loop.after(Self.transitionLimit) { [weak self] in
                guard let self else { return }
                transition = nil
                transitionTimedOut = true
                markDirty()
            }
        }
        return transition != nil
    }

    private func becomeUnavailable(_ reason: String) {
        delivered = nil
        transition = nil
        transitionTimedOut = false
        guard reason != unavailable else { return }
        unavailable = reason
        onUnavailable(reason)
    }

    private func warnOnce(_ problem: String) {
        guard warned.count < Self.maxWarnings, warned.insert(problem).inserted else { return }
        Diagnostics.warning("NetworkManager: \(problem)")
    }
}
