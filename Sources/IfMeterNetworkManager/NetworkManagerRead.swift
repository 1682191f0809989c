import IfMeterPlatform

/// One read of everything NetworkManager says about what its devices are on: `GetDevices`, each
/// device's properties, each active connection's, and what those point at (the access point's
/// SSID, the profile's settings, ModemManager's operator), into a ``NetworkManagerSnapshot``.
///
/// Asynchronous (`sd_bus_call_async`), not `sd_bus_call`: a synchronous call blocks the whole
/// daemon's loop (sampling, the socket, the watchdog) for as long as NetworkManager takes, and
/// a read is up to four calls deep. Here the loop goes on while NetworkManager answers; the
/// read as a whole has a budget (``budget``) that every call's timeout is cut to, so a hung
/// NetworkManager ends the read as failed after that budget, and the loop never waited on it.
///
/// Calls go to the unique names whose owners were checked (``BusOwnerCheck``), never to the
/// well-known names, so no other process's answer is taken even if a name changes hands
/// meanwhile. At most ``NetworkManagerReading/maxDevices`` devices are asked about; each object
/// once. Releasing the read cancels its calls.
final class NetworkManagerRead {
    enum Outcome {
        /// What was read, and ModemManager's owner if it was checked and believed.
        case read(NetworkManagerSnapshot, modemManager: String?)
        /// NetworkManager's own list could not be had: nothing is known.
        case failed(String)
        /// NetworkManager owns its name but has no manager object yet: it is starting, and the
        /// devices it adds next will be signalled.
        case notReady
    }

    /// How long a read may take in all.
    static let budget: Duration = .seconds(5)

    static let path = "/org/freedesktop/NetworkManager"
    static let interface = "org.freedesktop.NetworkManager"
    static let deviceInterface = "org.freedesktop.NetworkManager.Device"
    static let activeInterface = "org.freedesktop.NetworkManager.Connection.Active"
    static let accessPointInterface = "org.freedesktop.NetworkManager.AccessPoint"
    static let settingsInterface = "org.freedesktop.NetworkManager.Settings.Connection"
    static let modemManagerName = "org.freedesktop.ModemManager1"
    static let modem3gppInterface = "org.freedesktop.ModemManager1.Modem.Modem3gpp"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"
    /// The errors an object that went between being listed and being asked about is answered
    /// with (GDBus, which NetworkManager uses, says UnknownMethod for a path with no object on
    /// it): a signal saying so follows, and the next read will not list it. NetworkManager 1.42
    /// also owns its name a moment before its manager object exists.
    static let gone: Set<String> = ["org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownMethod",
                                    "org.freedesktop.DBus.Error.UnknownInterface", "org.freedesktop.DBus.Error.InvalidArgs"]

    private let bus: BusConnection
    private let loop: EventLoop
    private let owner: String
    private let allowedUID: UInt32
    private let deadline: UInt64
    private var done: ((Outcome) -> Void)?
    private var snapshot = NetworkManagerSnapshot()
    private var calls: [BusSlot] = []
    /// Calls (and the ModemManager check) not answered yet.
    private var waiting = 0
    private var asked: Set<String> = []

    private enum ModemManager {
        case unchecked
        case checking(BusOwnerCheck, modems: [String])
        case believed(String)
        case absent
    }
    private var modemManager = ModemManager.unchecked

    /// A read of NetworkManager at `owner`, its unique name; `done` is called once, on the
    /// loop, after ``start()``, unless the read is released first.
    init(bus: BusConnection, loop: EventLoop, owner: String, allowedUID: UInt32, done: @escaping (Outcome) -> Void) {
        self.bus = bus
        self.loop = loop
        self.owner = owner
        self.allowedUID = allowedUID
        deadline = loop.now + EventLoop.microseconds(Self.budget)
        self.done = done
    }

    func start() {
        ask(owner, Self.path, Self.interface, "GetDevices") { read, reply in
            do throws(BusShapeError) {
                let paths = try reply.objectPaths()
                read.snapshot.devicePaths = paths
                for path in paths.prefix(NetworkManagerReading.maxDevices) { read.readDevice(path) }
            } catch {
                read.finish(.failed("NetworkManager's GetDevices answered \(error)"))
            }
        } failed: { read, failure in
            read.finish(Self.gone.contains(failure.name) ? .notReady
                        : .failed("NetworkManager did not answer GetDevices: \(failure)"))
        }
    }

    private func readDevice(_ path: String) {
        guard asked.insert(path).inserted else { return }
        ask(owner, path, Self.propertiesInterface, "GetAll", [Self.deviceInterface]) { read, reply in
            let properties = try reply.properties()
            read.snapshot.devices[path] = properties
            if let active = NetworkManagerReading.activeConnectionPath(of: properties) { read.readActiveConnection(active) }
            if let modem = NetworkManagerReading.modemPath(of: properties) { read.readOperator(modem) }
        } failed: { read, failure in read.objectFailed(path, failure) }
    }

    private func readActiveConnection(_ path: String) {
        guard asked.insert(path).inserted else { return }
        ask(owner, path, Self.propertiesInterface, "GetAll", [Self.activeInterface]) { read, reply in
            let properties = try reply.properties()
            read.snapshot.activeConnections[path] = properties
            if let accessPoint = NetworkManagerReading.accessPointPath(of: properties) { read.readSSID(accessPoint) }
            if let profile = NetworkManagerReading.settingsPath(of: properties) { read.readSettings(profile) }
        } failed: { read, failure in read.objectFailed(path, failure) }
    }

    /// An object that went meanwhile is left out (a signal saying so follows); any other
    /// failure (NetworkManager stopped answering, or refused) fails the whole read: a list
    /// missing devices NetworkManager has would say they are on no network.
    private func objectFailed(_ path: String, _ failure: BusFailure) {
        guard !Self.gone.contains(failure.name) else { return }
        finish(.failed("NetworkManager did not answer for \(path): \(failure)"))
    }

    /// Without it (the access point went), the profile's SSID stands in.
    private func readSSID(_ path: String) {
        guard asked.insert(path).inserted else { return }
        ask(owner, path, Self.propertiesInterface, "Get", [Self.accessPointInterface, "Ssid"]) { read, reply in
            read.snapshot.accessPointSSIDs[path] = try reply.variant()
        } failed: { _, _ in }
    }

    private func readSettings(_ path: String) {
        guard asked.insert(path).inserted else { return }
        ask(owner, path, Self.settingsInterface, "GetSettings") { read, reply in
            read.snapshot.settings[path] = try reply.settings()
        } failed: { read, failure in
            if !Self.gone.contains(failure.name) { read.snapshot.problems.append("connection profile \(path): \(failure)") }
        }
    }

    /// ModemManager is asked only once its owner is believed; not running, or not believed,
    /// the operator stays unknown.
    private func readOperator(_ modem: String) {
        switch modemManager {
        case .unchecked:
            waiting += 1
            let check = BusOwnerCheck(Self.modemManagerName, bus: bus, allowedUID: allowedUID,
                                      timeout: remaining) { [weak self] outcome in self?.modemManagerChecked(outcome) }
            // A check that could not even be sent has already finished.
            if case .unchecked = modemManager { modemManager = .checking(check, modems: [modem]) }
        case .checking(let check, let modems):
            modemManager = .checking(check, modems: modems + [modem])
        case .believed(let owner):
            guard asked.insert(modem).inserted else { return }
            ask(owner, modem, Self.propertiesInterface, "Get", [Self.modem3gppInterface, "OperatorName"]) { read, reply in
                read.snapshot.operatorNames[modem] = try reply.variant()
            } failed: { _, _ in }
        case .absent:
            break
        }
    }

    private func modemManagerChecked(_ outcome: BusOwnerCheck.Outcome) {
        let modems: [String]
        if case .checking(_, let waitingModems) = modemManager { modems = waitingModems } else { modems = [] }
        switch outcome {
        case .believed(let owner): modemManager = .believed(owner)
        case .impostor(_, let uid):
            modemManager = .absent
            snapshot.problems.append("org.freedesktop.ModemManager1 is owned by a process of uid \(uid), not \(allowedUID): "
                                     + "operator names not read")
        case .notRunning, .failed: modemManager = .absent
        }
        for modem in modems { readOperator(modem) }
        answered()
    }

    /// Sends a call counted in ``waiting``; `read` gets its answer and throws if it is of the
    /// wrong shape (a problem for that object only), `failed` gets a D-Bus error. Both are
    /// handed the read rather than capturing it, so that the calls, which the read holds, do
    /// not hold the read: releasing it cancels them.
    private func ask(_ destination: String, _ path: String, _ interface: String, _ member: String, _ arguments: [String] = [],
                     read: @escaping (NetworkManagerRead, BusMessageReader) throws -> Void,
                     failed: @escaping (NetworkManagerRead, BusFailure) -> Void) {
        waiting += 1
        let handle = { [weak self] (result: Result<BusMessageReader, BusFailure>) in
            guard let self, done != nil else { return }
            switch result {
            case .success(let reply):
                do { try read(self, reply) } catch {
                    snapshot.problems.append("\(path) \(interface).\(member) answered \(error)")
                }
            case .failure(let failure): failed(self, failure)
            }
            answered()
        }
        switch bus.call(destination, path, interface, member, arguments, timeout: remaining, reply: handle) {
        case .success(let slot): calls.append(slot)
        case .failure(let failure): handle(.failure(failure))
        }
    }

    /// What is left of the budget, in microseconds; at least one, since zero is sd-bus's default
    /// of 25 s.
    private var remaining: UInt64 {
        let now = loop.now
        return deadline > now ? deadline - now : 1
    }

    private func answered() {
        waiting -= 1
        if waiting == 0 { finish(.read(snapshot, modemManager: believedModemManager)) }
    }

    private var believedModemManager: String? {
        if case .believed(let owner) = modemManager { return owner }
        return nil
    }

    private func finish(_ outcome: Outcome) {
        guard let done else { return }
        self.done = nil
        calls.removeAll()
        modemManager = .absent
        done(outcome)
    }
}
