import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A NetworkManager for the tests: a private system bus (a dbus-daemon of its own, whose policy
/// lets anyone own and call anything), and python-dbusmock's `networkmanager` template on it,
/// driven over `gdbus` through the template's `org.freedesktop.DBus.Mock` methods.
///
/// What the template does not do as NetworkManager does is made up here: its devices have no
/// `Metered` (added with `AddProperty`, changed with the template's `SetProperty`, which emits
/// `PropertiesChanged`), no `Udi` and no `Ifindex`; its `AddAccessPoint` takes the SSID as a
/// string (so any bytes are set afterwards with `UpdateProperties`); `AddWiFiConnection`
/// makes a random UUID (profiles are added with `Settings.AddConnection` instead, UUID given).
/// What it does do as NetworkManager does: `PropertiesChanged` (`org.freedesktop.DBus.Properties`)
/// for every property it sets, the device's `StateChanged`, `DeviceAdded`.
///
/// Its template has no modem: ``addModemDevice(_:ipInterface:controlPort:modem:metered:)`` makes
/// one with `AddObject`, and ``startModemManager(operatorName:modem:asUID:)`` runs a second mock,
/// owning `org.freedesktop.ModemManager1` on the same bus, whose modem object has the operator.
///
/// Everything set up is replayed when the mock is started again, as NetworkManager restores
/// its state after a restart (the ModemManager mock is not: it starts with what it is given).
/// The bus, the mock, the ModemManager mock and an impostor end with the value, whatever
/// happened to the test.
public final class NetworkManagerMock: @unchecked Sendable {
    /// Debian's Python, where python3-dbusmock is: `python3` on PATH may be another.
    public static let python = "/usr/bin/python3"
    public static let busName = "org.freedesktop.NetworkManager"
    public static let root = "/org/freedesktop/NetworkManager"
    /// The mock's main object, where the template's `org.freedesktop.DBus.Mock` methods work
    /// (on `root` some fail: their `self` is another object).
    static let main = "/org/freedesktop"
    public static let mockInterface = "org.freedesktop.DBus.Mock"
    public static let deviceInterface = "org.freedesktop.NetworkManager.Device"
    /// `NM_DEVICE_STATE_DISCONNECTED`: a device's state before a connection is added to it.
    static let disconnected = 30
    /// `NM_ACTIVE_CONNECTION_STATE_ACTIVATED`.
    static let activated = 2
    /// The uid an impostor runs as: `nobody`.
    public static let impostorUID: UInt32 = 65534

    /// Why the mock cannot run here; nil when it can.
    public static let missing: String? = {
        for tool in ["/usr/bin/dbus-daemon", "/usr/bin/gdbus", "/usr/bin/busctl", python]
        where !FileManager.default.isExecutableFile(atPath: tool) {
            return "\(tool) is not installed"
        }
        guard (try? Command.run([python, "-c", "import dbusmock"]))?.status == 0 else {
            return "python3-dbusmock is not installed for \(python)"
        }
        return nil
    }()
    public static var available: Bool { missing == nil }
    public static var skipReason: Comment {
        Comment(rawValue: "needs dbus-daemon, gdbus, busctl and python3-dbusmock: \(missing ?? "")")
    }

    /// Why an impostor cannot be started here (it takes root, and setpriv, to run as nobody).
    public static var impostorMissing: String? {
        if let missing { return missing }
        if getuid() != 0 { return "starting a process as uid \(impostorUID) needs root" }
        return (try? Command.resolve("setpriv")) == nil ? "setpriv (util-linux) is not installed" : nil
    }
    public static var impostorSkipReason: Comment { Comment(rawValue: impostorMissing ?? "") }

    public let directory: TemporaryDirectory
    /// The bus's address, for `NetworkManagerWatch(busAddress:)`.
    public let address: String
    private var daemon: SpawnedProcess
    private let config: String
    private var mock: SpawnedProcess?
    private var impostor: SpawnedProcess?
    private var flooder: SpawnedProcess?
    /// The ModemManager mock (``startModemManager(operatorName:modem:asUID:)``), whoever it runs as.
    private var modemManager: SpawnedProcess?
    /// The method that registers a device made with `AddObject` is on the mock (in the set-up).
    private var hasDeviceRegistrar = false
    /// The `gdbus call` arguments that set the mock up, in order, replayed by ``start()``.
    private var setup: [[String]] = []

    private static let reaped: Void = reapStale()

    /// Kills the buses of test processes that died without ending them (a crash, SIGKILL); their
    /// mocks end with their bus. A bus's configuration file names its test process.
    static func reapStale() {
        DaemonProcess.killProcesses { arguments in
            guard arguments.first == "/usr/bin/dbus-daemon",
                  let config = arguments.first(where: { $0.hasPrefix("--config-file=") && $0.hasSuffix(".conf") }),
                  let name = config.split(separator: "/").last, name.hasPrefix("nm-mock-bus-"),
                  let owner = Int32(name.dropFirst("nm-mock-bus-".count).dropLast(".conf".count)) else { return false }
            return owner != getpid() && kill(owner, 0) != 0 && errno == ESRCH
        }
    }

    /// Starts the bus, without NetworkManager on it (``start()``).
    public init() throws {
        _ = Self.reaped
        directory = try TemporaryDirectory()
        // Searchable by everyone, so that an impostor running as nobody reaches the socket,
        // which dbus-daemon makes 0777.
        chmod(directory.path, 0o755)
        address = "unix:path=\(directory.path)/bus"
        config = directory.path + "/nm-mock-bus-\(getpid()).conf"
        try Self.configuration(address: address).write(toFile: config, atomically: true, encoding: .utf8)
        daemon = try Self.startBus(config: config, in: directory.path)
    }

    /// A dbus-daemon on `config`, once it listens (it prints its address then).
    private static func startBus(config: String, in directory: String) throws -> SpawnedProcess {
        let ready = directory + "/address"
        unlink(ready)
        let daemon = try SpawnedProcess(["/usr/bin/dbus-daemon", "--config-file=\(config)", "--nofork", "--print-address=1"],
                                        output: ready, errors: directory + "/dbus-daemon.log")
        let deadline = Date().addingTimeInterval(30)
        while ((try? String(contentsOfFile: ready, encoding: .utf8)) ?? "").isEmpty {
            guard daemon.isRunning, Date() < deadline else {
                daemon.end(SIGKILL)
                throw CommandFailed(command: ["dbus-daemon"], result: CommandResult(
                    status: daemon.terminationStatus, stdout: "",
                    stderr: (try? String(contentsOfFile: directory + "/dbus-daemon.log", encoding: .utf8)) ?? ""))
            }
            usleep(10_000)
        }
        return daemon
    }

    /// The bus itself restarted (dbus-daemon upgraded, say): the mock and the bus end, a new bus
    /// listens at the same address, and the mock starts on it again as it was set up.
    public func restartBus() throws {
        try stop()
        daemon.send(SIGTERM)
        try daemon.awaitExit("the mock's dbus-daemon")
        unlink(directory.path + "/bus")
        daemon = try Self.startBus(config: config, in: directory.path)
        try start()
    }

    deinit {
        flooder?.end(SIGKILL)
        modemManager?.end(SIGKILL)
        impostor?.end(SIGKILL)
        mock?.end(SIGKILL)
        daemon.end(SIGKILL)
    }

    /// A system bus's configuration, but with every policy open: anyone may connect, own any
    /// name, and send anything to anyone.
    static func configuration(address: String) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>system</type>
          <listen>\(address)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow user="*"/>
            <allow own="*"/>
            <allow send_type="method_call"/>
            <allow send_type="signal"/>
            <allow send_type="method_return"/>
            <allow send_type="error"/>
            <allow receive_type="method_call"/>
            <allow receive_type="signal"/>
            <allow receive_type="method_return"/>
            <allow receive_type="error"/>
          </policy>
        </busconfig>
        """
    }

    /// Starts the mock NetworkManager (as root) and sets it up as it was (NetworkManager
    /// starting again); returns once it owns its name and is set up.
    public func start() throws {
        precondition(mock == nil, "the mock already runs")
        mock = try SpawnedProcess([Self.python, "-I", "-m", "dbusmock", "--template", "networkmanager", "--system",
                                   "-l", directory.path + "/mock.log"],
                                  environment: ["DBUS_SYSTEM_BUS_ADDRESS": address], errors: directory.path + "/mock.stderr")
        try Command.check(["gdbus", "wait", "--address", address, "--timeout", "30", Self.busName], timeout: 60)
        for arguments in setup { try gdbus(arguments) }
    }

    /// Stops the mock (NetworkManager stopping): returns once it has exited, so its name is
    /// released.
    public func stop() throws {
        guard let mock else { return }
        self.mock = nil
        mock.send(SIGTERM)
        try mock.awaitExit("the NetworkManager mock")
    }

    /// Stops the mock in its tracks (SIGSTOP): it holds its name but answers nothing, as a
    /// hung NetworkManager.
    public func pause() {
        mock?.send(SIGSTOP)
    }

    /// Lets a paused mock go on (SIGCONT).
    public func resume() {
        mock?.send(SIGCONT)
    }

    /// Starts a NetworkManager mock as uid 65534 on the same bus, which takes the name over.
    public func startImpostor() throws {
        precondition(impostor == nil, "an impostor already runs")
        if let closed = OtherUserCopy.firstClosedDirectory(above: directory.path + "/bus") {
            throw CommandFailed(command: ["setpriv", "--reuid=\(Self.impostorUID)"], result: CommandResult(
                status: 1, stdout: "", stderr: "\(closed) is not searchable by other users: the impostor cannot reach the bus"))
        }
        impostor = try SpawnedProcess(["setpriv", "--reuid=\(Self.impostorUID)", "--regid=\(Self.impostorUID)", "--clear-groups",
                                       Self.python, "-I", "-m", "dbusmock", "--template", "networkmanager", "--system"],
                                      environment: ["DBUS_SYSTEM_BUS_ADDRESS": address], errors: directory.path + "/impostor.stderr")
    }

    /// Stops the impostor: returns once it has exited, so the name is released.
    public func stopImpostor() throws {
        guard let impostor else { return }
        self.impostor = nil
        impostor.send(SIGTERM)
        try impostor.awaitExit("the impostor")
    }

    /// Has whoever owns NetworkManager's name now (the impostor, once it took it over) add a
    /// Wi-Fi device; not part of the set-up replayed.
    public func ownerAddsWiFiDevice(_ name: String, interface: String) throws {
        try gdbus([Self.main, "\(Self.mockInterface).AddWiFiDevice", name, interface, "\(Self.disconnected)"])
    }

    /// What the impostor wrote to stderr: why it did not start, when it did not.
    public var impostorErrors: String {
        (try? String(contentsOfFile: directory.path + "/impostor.stderr", encoding: .utf8)) ?? ""
    }

    /// Adds a Wi-Fi device (disconnected) named `interface`, with `Metered` as NetworkManager's
    /// number (4 is guess-no); its object path.
    @discardableResult
    public func addWiFiDevice(_ name: String, interface: String, metered: UInt32 = 4) throws -> String {
        let path = "\(Self.root)/Devices/\(name)"
        try set(Self.main, "\(Self.mockInterface).AddWiFiDevice", [name, interface, "\(Self.disconnected)"])
        try set(path, "\(Self.mockInterface).AddProperty", [Self.deviceInterface, "Metered", "<uint32 \(metered)>"])
        return path
    }

    /// Changes a device's `Metered`, with the `PropertiesChanged` NetworkManager sends.
    public func setMetered(_ device: String, _ metered: UInt32) throws {
        try setDeviceProperty(device, "Metered", "<uint32 \(metered)>")
    }

    /// Changes a device's property to `value`, GVariant text of any type (`<'yes'>`), with a
    /// `PropertiesChanged`: through the template's `SetProperty`, since `UpdateProperties`
    /// cannot take a structure (`StateReason`).
    public func setDeviceProperty(_ device: String, _ name: String, _ value: String) throws {
        try set(Self.main, "\(Self.mockInterface).SetProperty", [device, Self.deviceInterface, name, value])
    }

    /// Adds an access point broadcasting `ssid`, any bytes; its object path.
    @discardableResult
    public func addAccessPoint(_ name: String, device: String, ssid: [UInt8]) throws -> String {
        let path = "\(Self.root)/AccessPoint/\(name)"
        try set(Self.main, "\(Self.mockInterface).AddAccessPoint",
                [device, name, name, "11:22:33:44:55:66", "2", "2437", "5400", "80", "0"])
        try set(path, "\(Self.mockInterface).UpdateProperties",
                ["org.freedesktop.NetworkManager.AccessPoint", "{'Ssid': <\(Self.bytes(ssid))>}"])
        return path
    }

    /// Adds a Wi-Fi profile; its object path.
    @discardableResult
    public func addWiFiConnection(id: String, uuid: String, ssid: [UInt8]) throws -> String {
        let settings = "{'connection': {'id': <\(Self.quoted(id))>, 'uuid': <\(Self.quoted(uuid))>, "
            + "'type': <'802-11-wireless'>}, '802-11-wireless': {'ssid': <\(Self.bytes(ssid))>}}"
        return try addConnection(settings)
    }

    /// A profile from its settings, GVariant text of `a{sa{sv}}`, through `Settings.AddConnection`
    /// (part of the set-up); its object path.
    private func addConnection(_ settings: String) throws -> String {
        let output = try set("\(Self.root)/Settings", "org.freedesktop.NetworkManager.Settings.AddConnection", [settings])
        guard let path = output.split(separator: "'").first(where: { $0.hasPrefix("/") }) else {
            throw CommandFailed(command: ["AddConnection"], result: CommandResult(status: 0, stdout: output, stderr: "no path"))
        }
        return String(path)
    }

    /// Activates `connection` on `device` through `accessPoint` as the active connection
    /// `name`; its object path.
    @discardableResult
    public func activate(_ connection: String, on device: String, accessPoint: String, as name: String) throws -> String {
        try set(Self.main, "\(Self.mockInterface).AddActiveConnection",
                ["['\(device)']", connection, accessPoint, name, "\(Self.activated)"])
        return "\(Self.root)/ActiveConnection/\(name)"
    }

    /// Deactivates `active` on `device`.
    public func deactivate(_ active: String, on device: String) throws {
        try set(Self.main, "\(Self.mockInterface).RemoveActiveConnection", [device, active])
    }

    /// Has the mock itself send `count` `PropertiesChanged` signals for `device`'s `Metered`
    /// (its value unchanged), as fast as it can, from a call that runs in the background
    /// (``isFlooding``) so the watch can run meanwhile.
    public func startFlood(_ device: String, count: Int) throws {
        precondition(flooder == nil, "a flood already runs")
        let code = "for i in range(args[0]): self.EmitSignal('org.freedesktop.DBus.Properties', 'PropertiesChanged', "
            + "'sa{sv}as', ['\(Self.deviceInterface)', {'Metered': dbus.UInt32(i % 5, variant_level=1)}, []])"
        try gdbus([device, "\(Self.mockInterface).AddMethod", "com.example.Flood", "Flood", "u", "", code])
        flooder = try SpawnedProcess(["gdbus", "call", "--address", address, "--dest", Self.busName, "--object-path", device,
                                      "--method", "com.example.Flood.Flood", "\(count)"],
                                     errors: directory.path + "/flood.stderr")
    }

    /// Whether the flood's call has not returned yet: until then, the mock is still sending.
    public var isFlooding: Bool { flooder?.isRunning == true }

    /// Whether the flood's call returned successfully, every signal sent.
    public var floodSent: Bool { flooder.map { !$0.isRunning && $0.terminationStatus == 0 } ?? false }

    /// How many times `method` of the NetworkManager object was called, as the mock logged it.
    public func calls(of method: String) throws -> Int {
        // busctl prints an array's length after its signature ("a(tav) 3 …"); gdbus's text
        // would have to be parsed.
        let output = try Command.check(["busctl", "--address=\(address)", "call", Self.busName, Self.root,
                                        Self.mockInterface, "GetMethodCalls", "s", method], timeout: 30)
        let fields = output.split(separator: " ")
        guard fields.count >= 2, fields[0] == "a(tav)", let count = Int(fields[1]) else {
            throw CommandFailed(command: ["GetMethodCalls", method],
                                result: CommandResult(status: 0, stdout: output, stderr: "unexpected"))
        }
        return count
    }

    // MARK: A modem, and ModemManager

    public static let modemManagerName = "org.freedesktop.ModemManager1"
    public static let modemManagerRoot = "/org/freedesktop/ModemManager1"
    public static let modem3gppInterface = "org.freedesktop.ModemManager1.Modem.Modem3gpp"
    /// The first modem ModemManager makes: what a modem device's `Udi` names.
    public static let firstModem = "/org/freedesktop/ModemManager1/Modem/0"
    /// `NM_DEVICE_TYPE_MODEM`.
    static let modemDeviceType = 8
    /// `NM_DEVICE_MODEM_CAPABILITY_GSM_UMTS | NM_DEVICE_MODEM_CAPABILITY_LTE`.
    static let gsmAndLTE = 12
    /// Where the helper that registers devices made with `AddObject` lives, on the main object.
    static let registrarInterface = "com.example.IfMeterTest"

    /// Adds a modem device (disconnected), as NetworkManager shows one that ModemManager found:
    /// `DeviceType` 8, `Interface` its control port (`cdc-wdm0`), `IpInterface` the interface
    /// its traffic crosses (`wwan0`), `Udi` the ModemManager object of the modem (whose
    /// `Modem3gpp.OperatorName` is the operator), `Metered` as NetworkManager's number (4 is
    /// guess-no). The template has no `AddModemDevice`: the object is made with `AddObject` and
    /// `AddProperties`, then put in the manager's `Devices` (with `PropertiesChanged`) and
    /// announced with `DeviceAdded`, as the template does for its own devices. Part of the set-up.
    /// Its object path.
    @discardableResult
    public func addModemDevice(_ name: String, ipInterface: String, controlPort: String = "cdc-wdm0",
                               modem: String = firstModem, metered: UInt32 = 4) throws -> String {
        let path = "\(Self.root)/Devices/\(name)"
        try set(Self.main, "\(Self.mockInterface).AddObject", [
            path, "org.freedesktop.NetworkManager.Device.Modem",
            "{'ModemCapabilities': <uint32 \(Self.gsmAndLTE)>, 'CurrentCapabilities': <uint32 \(Self.gsmAndLTE)>, "
                + "'DeviceId': <\(Self.quoted(name))>, 'OperatorCode': <''>, 'Apn': <''>}",
            "@a(ssss) []",
        ])
        try set(path, "\(Self.mockInterface).AddProperties", [Self.deviceInterface,
            "{'DeviceType': <uint32 \(Self.modemDeviceType)>, 'State': <uint32 \(Self.disconnected)>, "
                + "'StateReason': <(uint32 \(Self.disconnected), uint32 0)>, 'Interface': <\(Self.quoted(controlPort))>, "
                + "'IpInterface': <\(Self.quoted(ipInterface))>, 'Udi': <\(Self.quoted(modem))>, "
                + "'ActiveConnection': <objectpath '/'>, 'AvailableConnections': <@ao []>, 'AutoConnect': <false>, "
                + "'Managed': <true>, 'Driver': <'dbusmock'>, 'Metered': <uint32 \(metered)>}"])
        try registerDevice(path)
        return path
    }

    /// Puts a device made with `AddObject` in the manager's `Devices` and says `DeviceAdded`, as
    /// the template's `AddWiFiDevice` does, through a method added to the mock once (its code
    /// runs in the mock, where `get_object` and `dbus` are).
    private func registerDevice(_ path: String) throws {
        if !hasDeviceRegistrar {
            let code = "path = dbus.ObjectPath(args[0]); manager = get_object('\(Self.root)'); "
                + "devices = manager.Get('\(Self.busName)', 'Devices'); devices.append(path); "
                + "manager.Set('\(Self.busName)', 'Devices', devices); self.object_manager_emit_added(args[0]); "
                + "manager.EmitSignal('\(Self.busName)', 'DeviceAdded', 'o', [path])"
            try set(Self.main, "\(Self.mockInterface).AddMethod", [Self.registrarInterface, "RegisterDevice", "s", "", code])
            hasDeviceRegistrar = true
        }
        try set(Self.main, "\(Self.registrarInterface).RegisterDevice", [path])
    }

    /// Adds a mobile broadband (`gsm`) profile with `uuid`, `id` and `apn`; its object path.
    /// Activate it on a modem device with ``activate(_:on:accessPoint:as:)``, through `/`.
    @discardableResult
    public func addGSMConnection(id: String, uuid: String, apn: String) throws -> String {
        try addConnection("{'connection': {'id': <\(Self.quoted(id))>, 'uuid': <\(Self.quoted(uuid))>, 'type': <'gsm'>}, "
                          + "'gsm': {'apn': <\(Self.quoted(apn))>}}")
    }

    /// Starts a second mock on the bus, owning `org.freedesktop.ModemManager1` (taking it over
    /// from whoever owns it), with the object `modem` whose
    /// `org.freedesktop.ModemManager1.Modem.Modem3gpp.OperatorName` is `operatorName` (any
    /// text), as uid `asUID` (nil: root; ``impostorUID`` for a ModemManager not to be believed,
    /// which needs what ``impostorMissing`` checks). The modem object is made by the mock's
    /// template before the mock answers any call, so no one who asks finds it without its modem.
    /// Returns once the name is owned. It ends with the value if not stopped.
    public func startModemManager(operatorName: String, modem: String = firstModem, asUID uid: UInt32? = nil) throws {
        precondition(modemManager == nil, "a ModemManager mock already runs")
        let template = directory.path + "/modemmanager.py"
        try Self.modemManagerTemplate.write(toFile: template, atomically: true, encoding: .utf8)
        chmod(template, 0o644)
        let parameters = try JSONSerialization.data(withJSONObject: ["modems": [modem: operatorName]])
        var arguments = [Self.python, "-I", "-m", "dbusmock", "--system", "--template", template,
                         "-p", String(decoding: parameters, as: UTF8.self)]
        if let uid {
            if let closed = OtherUserCopy.firstClosedDirectory(above: template) {
                throw CommandFailed(command: ["setpriv", "--reuid=\(uid)"], result: CommandResult(
                    status: 1, stdout: "", stderr: "\(closed) is not searchable by other users: uid \(uid) cannot reach the bus"))
            }
            arguments = ["setpriv", "--reuid=\(uid)", "--regid=\(uid)", "--clear-groups"] + arguments
        } else {
            arguments += ["-l", directory.path + "/modemmanager.log"]
        }
        let errors = directory.path + "/modemmanager.stderr"
        unlink(errors)
        let process = try SpawnedProcess(arguments, environment: ["DBUS_SYSTEM_BUS_ADDRESS": address], errors: errors)
        modemManager = process
        do {
            try Command.check(["gdbus", "wait", "--address", address, "--timeout", "30", Self.modemManagerName], timeout: 60)
        } catch {
            throw CommandFailed(command: arguments, result: CommandResult(
                status: process.isRunning ? 0 : process.terminationStatus, stdout: "\(error)", stderr: modemManagerErrors))
        }
    }

    /// Changes the operator of the ModemManager mock's `modem` (roaming, another SIM), with the
    /// `PropertiesChanged` (`org.freedesktop.DBus.Properties`) ModemManager sends.
    public func setOperatorName(_ operatorName: String, modem: String = firstModem) throws {
        try Command.check(["gdbus", "call", "--address", address, "--dest", Self.modemManagerName, "--object-path", modem,
                           "--method", "\(Self.mockInterface).UpdateProperties", Self.modem3gppInterface,
                           "{'OperatorName': <\(Self.quoted(operatorName))>}"], timeout: 30)
    }

    /// What whoever owns ModemManager's name now answers for `modem`'s operator: GVariant text
    /// as gdbus prints it (`(<'Example Mobile'>,)`).
    public func operatorNameOnTheBus(modem: String = firstModem) throws -> String {
        try Command.check(["gdbus", "call", "--address", address, "--dest", Self.modemManagerName, "--object-path", modem,
                           "--method", "org.freedesktop.DBus.Properties.Get", Self.modem3gppInterface, "OperatorName"], timeout: 30)
    }

    /// Stops the ModemManager mock (ModemManager stopping): returns once it has exited, so its
    /// name is released.
    public func stopModemManager() throws {
        guard let modemManager else { return }
        self.modemManager = nil
        modemManager.send(SIGTERM)
        try modemManager.awaitExit("the ModemManager mock")
    }

    /// What the ModemManager mock last started wrote to stderr.
    public var modemManagerErrors: String {
        (try? String(contentsOfFile: directory.path + "/modemmanager.stderr", encoding: .utf8)) ?? ""
    }

    /// python-dbusmock has no ModemManager template: this one makes the root object (an object
    /// manager, as ModemManager's is) and each modem of the parameters (`{"modems": {PATH:
    /// OPERATOR}}`) with some of the `Modem` and `Modem3gpp` properties ModemManager has.
    static let modemManagerTemplate = """
        # ModemManager for ifmeter's tests, written by NetworkManagerMock.
        import dbus
        import dbusmock

        BUS_NAME = 'org.freedesktop.ModemManager1'
        MAIN_OBJ = '/org/freedesktop/ModemManager1'
        MAIN_IFACE = 'org.freedesktop.ModemManager1'
        SYSTEM_BUS = True
        IS_OBJECT_MANAGER = True


        def load(mock, parameters):
            mock.AddProperties(MAIN_IFACE, {'Version': dbus.String('1.20.4')})
            for path, operator in (parameters or {}).get('modems', {}).items():
                mock.AddObject(path, 'org.freedesktop.ModemManager1.Modem.Modem3gpp', {
                    'OperatorName': dbus.String(operator),
                    'OperatorCode': dbus.String('00101'),
                    'RegistrationState': dbus.UInt32(1),
                    'Imei': dbus.String('490154203237518'),
                }, [])
                modem = dbusmock.get_object(path)
                modem.AddProperties('org.freedesktop.ModemManager1.Modem', {
                    'State': dbus.Int32(11),
                    'PrimaryPort': dbus.String('cdc-wdm0'),
                    'Manufacturer': dbus.String('dbusmock'),
                    'Model': dbus.String('ifmeter test modem'),
                })
                mock.object_manager_emit_added(path)

        """

    /// A mock call that is part of the set-up: replayed on every start.
    @discardableResult
    private func set(_ path: String, _ method: String, _ arguments: [String]) throws -> String {
        let call = [path, method] + arguments
        setup.append(call)
        return try gdbus(call)
    }

    @discardableResult
    private func gdbus(_ call: [String], timeout: Double = 30) throws -> String {
        try Command.check(["gdbus", "call", "--address", address, "--dest", Self.busName,
                           "--object-path", call[0], "--method", call[1]] + call.dropFirst(2), timeout: timeout)
    }

    /// GVariant text for a byte array.
    static func bytes(_ bytes: [UInt8]) -> String {
        bytes.isEmpty ? "@ay []" : "[" + bytes.map { "byte 0x" + String($0, radix: 16) }.joined(separator: ", ") + "]"
    }

    /// GVariant text for a string, whatever it holds.
    static func quoted(_ text: String) -> String {
        let escaped = text.unicodeScalars.map { scalar in
            if scalar.isASCII && scalar.value >= 0x20 && scalar != "'" && scalar != "\\" { return String(scalar) }
            return scalar.value > 0xFFFF ? String(format: "\\U%08x", scalar.value) : String(format: "\\u%04x", scalar.value)
        }
        return "'" + escaped.joined() + "'"
    }
}
