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
    var modemManager: SpawnedProcess?
    /// The method that registers a device made with `AddObject` is on the mock (in the set-up).
    var hasDeviceRegistrar = false
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
    func addConnection(_ settings: String) throws -> String {
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

    /// A mock call that is part of the set-up: replayed on every start.
    @discardableResult
    func set(_ path: String, _ method: String, _ arguments: [String]) throws -> String {
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
