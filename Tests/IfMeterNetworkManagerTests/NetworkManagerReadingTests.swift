import IfMeterCore
import IfMeterNetworkManager
import IfMeterTestSupport
import Testing

/// What NetworkManager's replies are turned into, with values: nothing believed unchecked.
@Suite("NetworkManagerReading", .ownThread, .timeLimit(.minutes(1)))
struct NetworkManagerReadingTests {
    static let uuid = "0b2c1f3e-5a6d-4e7f-8a9b-0c1d2e3f4a5b"
    static let active = "/org/freedesktop/NetworkManager/ActiveConnection/1"
    static let accessPoint = "/org/freedesktop/NetworkManager/AccessPoint/3"
    static let profile = "/org/freedesktop/NetworkManager/Settings/2"

    static func device(_ index: Int) -> String { "/org/freedesktop/NetworkManager/Devices/\(index)" }

    static func wifiDevice(_ interface: String = "wlan0", active: String = active, metered: UInt32 = 3) -> BusProperties {
        ["Interface": .string(interface), "IpInterface": .string(interface), "ActiveConnection": .objectPath(active),
         "Metered": .uint32(metered), "DeviceType": .uint32(2), "Udi": .string("/sys/devices/x"), "State": .uint32(100)]
    }

    static func wifiConnection(uuid: String = uuid, id: String = "Home", state: UInt32 = 2) -> BusProperties {
        ["Uuid": .string(uuid), "Id": .string(id), "Type": .string("802-11-wireless"), "State": .uint32(state),
         "Connection": .objectPath(profile), "SpecificObject": .objectPath(accessPoint)]
    }

    /// One Wi-Fi device on one connection, its access point broadcasting `ssid`.
    static func wifi(device: BusProperties = wifiDevice(), connection: BusProperties = wifiConnection(),
                     ssid: BusValue? = .bytes([0xFF, 0x3C, 0x62, 0x3E]), profileSSID: BusValue = .bytes(Array("profile".utf8)))
        -> NetworkManagerSnapshot {
        NetworkManagerSnapshot(
            devicePaths: [Self.device(0)], devices: [Self.device(0): device], activeConnections: [active: connection],
            accessPointSSIDs: ssid.map { [accessPoint: $0] } ?? [:],
            settings: [profile: ["802-11-wireless": ["ssid": profileSSID]]])
    }

    @Test("a Wi-Fi device on a connection: its UUID, id, kind, the access point's SSID as raw bytes, Metered")
    func wifi() {
        let (devices, problems) = NetworkManagerReading.devices(from: Self.wifi())
        #expect(devices == [DeviceNetwork(interface: "wlan0", network: Network(
            uuid: Self.uuid, id: "Home", type: "wifi", ssid: [0xFF, 0x3C, 0x62, 0x3E], metered: .guessYes))])
        #expect(problems.isEmpty)
    }

    @Test("not networks: a connection NetworkManager made up for a device it found (external), a bridge's port, loopback")
    func notNetworks() {
        var external = Self.wifiConnection()
        external["StateFlags"] = .uint32(0x80 | 0x4)
        var port = Self.wifiConnection()
        port["Master"] = .objectPath("/org/freedesktop/NetworkManager/ActiveConnection/9")
        var flaggedPort = Self.wifiConnection()
        flaggedPort["StateFlags"] = .uint32(0x2)
        var loopback = Self.wifiConnection()
        loopback["Type"] = .string("loopback")
        for connection in [external, port, flaggedPort, loopback] {
            let (devices, _) = NetworkManagerReading.devices(from: Self.wifi(connection: connection))
            #expect(devices == [DeviceNetwork(interface: "wlan0", network: nil)], "\(connection)")
        }
        var controller = Self.wifiConnection()
        controller["StateFlags"] = .uint32(0x1 | 0x4)
        controller["Master"] = .objectPath("/")
        #expect(NetworkManagerReading.devices(from: Self.wifi(connection: controller)).devices.first?.network?.uuid == Self.uuid)
    }

    @Test("the profile's SSID stands in for an access point that went or shows none")
    func ssidFallback() {
        for ssid: BusValue? in [nil, .bytes([])] {
            let (devices, _) = NetworkManagerReading.devices(from: Self.wifi(ssid: ssid))
            #expect(devices.first?.network?.ssid == Array("profile".utf8))
        }
    }

    @Test("an SSID over 32 bytes, or of another type, is no SSID, and is said")
    func badSSID() {
        var (devices, problems) = NetworkManagerReading.devices(
            from: Self.wifi(ssid: .bytes(Array(repeating: 0x41, count: 33)), profileSSID: .string("x")))
        #expect(devices.first?.network?.ssid == nil)
        #expect(devices.first?.network?.uuid == Self.uuid)
        #expect(problems.count == 2, "\(problems)")
        (devices, problems) = NetworkManagerReading.devices(from: Self.wifi(ssid: .string("Home")))
        #expect(devices.first?.network?.ssid == Array("profile".utf8))
        #expect(problems.count == 1 && problems[0].contains("not ay"), "\(problems)")
    }

    @Test("a connection counts from activating until deactivated; deactivated or unknown: on none")
    func states() {
        for (state, counted) in [(UInt32(0), false), (1, true), (2, true), (3, true), (4, false), (99, false)] {
            let (devices, problems) = NetworkManagerReading.devices(from: Self.wifi(connection: Self.wifiConnection(state: state)))
            #expect((devices.first?.network != nil) == counted, "state \(state)")
            #expect(devices.count == 1 && problems.isEmpty)
        }
    }

    @Test("a modem: its IP interface, not its control port; the APN from the profile; the operator from ModemManager")
    func modem() {
        let modem = "/org/freedesktop/ModemManager1/Modem/0"
        let snapshot = NetworkManagerSnapshot(
            devicePaths: [Self.device(5)],
            devices: [Self.device(5): ["Interface": .string("cdc-wdm0"), "IpInterface": .string("wwan0"),
                                       "ActiveConnection": .objectPath(Self.active), "Metered": .uint32(1),
                                       "DeviceType": .uint32(8), "Udi": .string(modem)]],
            activeConnections: [Self.active: ["Uuid": .string(Self.uuid), "Id": .string("Mobile"), "Type": .string("gsm"),
                                              "State": .uint32(2), "Connection": .objectPath(Self.profile),
                                              "SpecificObject": .objectPath("/")]],
            settings: [Self.profile: ["gsm": ["apn": .string("internet.example")], "connection": ["id": .string("Mobile")]]],
            operatorNames: [modem: .string("Example Mobile")])
        let (devices, problems) = NetworkManagerReading.devices(from: snapshot)
        #expect(devices == [DeviceNetwork(interface: "wwan0", network: Network(
            uuid: Self.uuid, id: "Mobile", type: "gsm", metered: .yes, apn: "internet.example", operatorName: "Example Mobile"))])
        #expect(problems.isEmpty)
        #expect(NetworkManagerReading.modemPath(of: snapshot.devices[Self.device(5)]!) == modem)
        #expect(NetworkManagerReading.settingsPath(of: snapshot.activeConnections[Self.active]!) == Self.profile)
        #expect(NetworkManagerReading.accessPointPath(of: snapshot.activeConnections[Self.active]!) == nil)
    }

    @Test("a device in the middle of a move: off one connection with the next queued, or on one deactivated or gone")
    func transitions() {
        var between = Self.wifiDevice(active: "/")
        between["StateReason"] = .uint32Pair(30, 60)
        var off = between
        off["StateReason"] = .uint32Pair(30, 39)
        var gone = Self.wifi()
        gone.activeConnections = [:]
        for (snapshot, moving) in [
            (Self.wifi(), false), (Self.wifi(connection: Self.wifiConnection(state: 4)), true),
            (Self.wifi(connection: Self.wifiConnection(state: 3)), false), (gone, true),
            (Self.wifi(device: between), true), (Self.wifi(device: off), false),
        ] {
            #expect(NetworkManagerReading.isInTransition(snapshot) == moving, "\(snapshot)")
        }
    }

    @Test("a modem's Udi is read from ModemManager only if it is one of its modems' object paths",
          arguments: ["/org/freedesktop/ModemManager1/Modem/0", "/org/freedesktop/ModemManager1/Modem/0\nforged",
                      "/org/freedesktop/ModemManager1/Modem/", "/org/freedesktop/ModemManager1/Modem//1", "/sys/devices/usb1"])
    func modemUdi(udi: String) {
        let device: BusProperties = ["DeviceType": .uint32(8), "Udi": .string(udi)]
        #expect((NetworkManagerReading.modemPath(of: device) != nil) == (udi == "/org/freedesktop/ModemManager1/Modem/0"))
    }

    @Test("an empty IpInterface: the Interface; no active connection: on none")
    func noConnection() {
        var device = Self.wifiDevice()
        device["IpInterface"] = .string("")
        device["ActiveConnection"] = .objectPath("/")
        let snapshot = NetworkManagerSnapshot(devicePaths: [Self.device(0)], devices: [Self.device(0): device])
        #expect(NetworkManagerReading.devices(from: snapshot).devices == [DeviceNetwork(interface: "wlan0", network: nil)])
        #expect(NetworkManagerReading.activeConnectionPath(of: device) == nil)
    }

    @Test("a device property of the wrong type leaves the device out, and says so; a missing one is its default",
          arguments: [("Interface", BusValue.uint32(7)), ("IpInterface", .bytes([0x77])), ("ActiveConnection", .string("/x")),
                      ("Metered", .string("yes")), ("DeviceType", .other("b"))])
    func wrongDeviceType(property: String, value: BusValue) {
        var device = Self.wifiDevice()
        device[property] = value
        let (devices, problems) = NetworkManagerReading.devices(from: Self.wifi(device: device))
        #expect(devices.isEmpty)
        #expect(problems.count == 1 && problems[0].contains("its \(property) is of type \(value.signature)"), "\(problems)")

        device[property] = nil
        #expect(NetworkManagerReading.devices(from: Self.wifi(device: device)).devices.count == 1)
    }

    @Test("a connection property of the wrong type, or no State: the device is on no network, and it is said",
          arguments: [("Uuid", BusValue.objectPath("/x")), ("Id", .uint32(1)), ("Type", .bytes([])), ("State", .string("2")),
                      ("State", nil)])
    func wrongConnectionType(property: String, value: BusValue?) {
        var connection = Self.wifiConnection()
        connection[property] = value
        let (devices, problems) = NetworkManagerReading.devices(from: Self.wifi(connection: connection))
        #expect(devices == [DeviceNetwork(interface: "wlan0", network: nil)])
        #expect(problems.count == 1 && problems[0].contains(property), "\(problems)")
    }

    @Test("a UUID that is not one: the connection is not counted, and it is said",
          arguments: ["", "0B2C1F3E-5A6D-4E7F-8A9B-0C1D2E3F4A5B", "{0b2c1f3e-5a6d-4e7f-8a9b-0c1d2e3f4a5b}",
                      "0b2c1f3e5a6d4e7f8a9b0c1d2e3f4a5b", "../../etc/passwd", "0b2c1f3e-5a6d-4e7f-8a9b-0c1d2e3f4a5b\n"])
    func badUUID(uuid: String) {
        let (devices, problems) = NetworkManagerReading.devices(from: Self.wifi(connection: Self.wifiConnection(uuid: uuid)))
        #expect(devices == [DeviceNetwork(interface: "wlan0", network: nil)])
        #expect(problems.count == 1 && problems[0].contains("UUID"), "\(problems)")
        #expect(!problems[0].contains(uuid) || uuid.isEmpty, "the UUID itself is not repeated to the journal")
    }

    @Test("ids, APNs and operators are cut to 256 bytes between characters")
    func longText() {
        let long = String(repeating: "é", count: 1000)
        let (devices, _) = NetworkManagerReading.devices(from: Self.wifi(connection: Self.wifiConnection(id: long)))
        let id = devices.first?.network?.id ?? ""
        #expect(id.utf8.count == 256)
        #expect(id == String(repeating: "é", count: 128))
        #expect(NetworkManagerReading.capped("a" + String(repeating: "é", count: 200)).utf8.count == 255)
        #expect(NetworkManagerReading.capped("short") == "short")
    }

    @Test("interface names the kernel would refuse leave their device out",
          arguments: ["", ".", "..", "a/b", "wl an0", "eth:0", "sixteen-bytes-xx", "tab\there", "nul\u{7F}"])
    func badInterface(name: String) {
        let (devices, problems) = NetworkManagerReading.devices(from: Self.wifi(device: Self.wifiDevice(name)))
        #expect(devices.isEmpty)
        #expect(problems.count == 1, "\(problems)")
    }

    @Test("257 devices: the first 256 are read, and that is said")
    func tooManyDevices() {
        var snapshot = NetworkManagerSnapshot()
        for index in 0..<257 {
            snapshot.devicePaths.append(Self.device(index))
            snapshot.devices[Self.device(index)] = Self.wifiDevice("eth\(index)", active: "/")
        }
        let (devices, problems) = NetworkManagerReading.devices(from: snapshot)
        #expect(devices.count == 256)
        #expect(!devices.contains { $0.interface == "eth256" })
        #expect(problems == ["NetworkManager lists 257 devices; only the first 256 are read"])
    }

    @Test("devices sorted by interface; where two name one interface, the one with a connection is kept")
    func duplicates() {
        var snapshot = Self.wifi()
        snapshot.devicePaths = [Self.device(2), Self.device(0), Self.device(1)]
        snapshot.devices[Self.device(2)] = Self.wifiDevice("wlan0", active: "/")
        snapshot.devices[Self.device(1)] = Self.wifiDevice("br0", active: "/")
        let (devices, _) = NetworkManagerReading.devices(from: snapshot)
        #expect(devices.map(\.interface) == ["br0", "wlan0"])
        #expect(devices.last?.network?.uuid == Self.uuid)
    }

    @Test("a device listed but not read (gone meanwhile), or a connection not read: left out, or on none, without noise")
    func missingObjects() {
        var snapshot = Self.wifi()
        snapshot.devicePaths.append(Self.device(9))
        snapshot.activeConnections = [:]
        let (devices, problems) = NetworkManagerReading.devices(from: snapshot)
        #expect(devices == [DeviceNetwork(interface: "wlan0", network: nil)])
        #expect(problems.isEmpty)
    }
}
