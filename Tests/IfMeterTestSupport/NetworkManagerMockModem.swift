import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A modem device on the mock NetworkManager, and a ModemManager mock beside it that says the
/// modem's operator (the template has neither).
extension NetworkManagerMock {
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
}
