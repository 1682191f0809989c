import IfMeterCore
import IfMeterNetworkManager

extension FuzzTargets {
    // MARK: network-manager

    /// What a NetworkManager (or whoever owns its name on a bus that lets anyone) may answer:
    /// a snapshot of devices, active connections, access points, profiles and modems, its
    /// object paths crossing each other and every property of any type, made from the bytes.
    /// Invariants: no trap; at most `maxDevices` devices, one per interface, each an interface
    /// name; every network's UUID in NetworkManager's form, its texts at most `maxText` bytes,
    /// its SSID at most `maxSSID`.
    public static func networkManager(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        var snapshot = NetworkManagerSnapshot()
        func properties(_ keys: [String]) -> BusProperties {
            var properties: BusProperties = [:]
            for key in keys where input.byte() & 3 != 0 { properties[key] = value() }
            return properties
        }
        func path() -> String {
            switch input.byte() % 6 {
            case 0: "/"
            case 1: "/a\(input.byte() % 4)"
            case 2: "/p\(input.byte() % 4)"
            case 3: "/s\(input.byte() % 4)"
            case 4: NetworkManagerReading.modemPathPrefix + "\(input.byte() % 4)"
            default: input.text()
            }
        }
        func value() -> BusValue {
            switch input.byte() % 7 {
            case 0: .string(input.text())
            case 1: .objectPath(path())
            case 2: .uint32(input.uint32())
            case 3: .uint32Pair(input.uint32(), input.uint32())
            case 4: .bytes(input.bytes())
            case 5: .string(["802-11-wireless", "802-3-ethernet", "gsm", "cdma", "vpn", "wlan0", "0b5ab2a0-0000-4000-8000-000000000001"][Int(input.byte() % 7)])
            default: .other(input.text())
            }
        }
        let deviceKeys = ["Interface", "IpInterface", "ActiveConnection", "Metered", "DeviceType", "Udi", "State", "StateReason"]
        let activeKeys = ["Uuid", "Id", "Type", "Connection", "SpecificObject", "State", "StateFlags", "Master"]
        for index in 0..<(Int(input.byte()) << 1 | Int(input.byte() & 1)) {
            let device = input.byte() & 1 == 0 ? "/d\(index)" : "/d\(input.byte() % 8)"
            snapshot.devicePaths.append(device)
            snapshot.devices[device] = properties(deviceKeys)
            if input.isEmpty { break }
        }
        for index in 0..<4 {
            snapshot.activeConnections["/a\(index)"] = properties(activeKeys)
            snapshot.accessPointSSIDs["/p\(index)"] = value()
            snapshot.settings["/s\(index)"] = ["connection": properties(["id", "uuid", "type"]), "gsm": properties(["apn"]),
                                                "802-11-wireless": properties(["ssid"])]
            snapshot.operatorNames[NetworkManagerReading.modemPathPrefix + "\(index)"] = value()
        }
        let (devices, _) = NetworkManagerReading.devices(from: snapshot)
        _ = NetworkManagerReading.isInTransition(snapshot)
        guard devices.count <= NetworkManagerReading.maxDevices, Set(devices.map(\.interface)).count == devices.count else {
            fatalError("\(devices.count) devices, interfaces \(devices.map(\.interface))")
        }
        for device in devices {
            guard NetworkManagerReading.isInterfaceName(device.interface) else { fatalError("interface \(device.interface)") }
            guard let network = device.network else { continue }
            guard Network.isUUID(network.uuid), network.id.utf8.count <= NetworkManagerReading.maxText,
                  (network.apn?.utf8.count ?? 0) <= NetworkManagerReading.maxText,
                  (network.operatorName?.utf8.count ?? 0) <= NetworkManagerReading.maxText,
                  (network.ssid?.count ?? 0) <= NetworkManagerReading.maxSSID, network.type.utf8.count <= 32 else {
                fatalError("a network read as \(network)")
            }
        }
    }
}

/// Bytes taken from the front, zeros once they run out: a fuzz input read as a stream of choices.
struct FuzzInput {
    private var rest: ArraySlice<UInt8>

    init(_ bytes: [UInt8]) { rest = bytes[...] }

    var isEmpty: Bool { rest.isEmpty }

    mutating func byte() -> UInt8 { rest.popFirst() ?? 0 }

    mutating func uint32() -> UInt32 { (0..<4).reduce(UInt32(0)) { value, _ in value << 8 | UInt32(byte()) } }

    /// Up to 511 bytes, the length first.
    mutating func bytes() -> [UInt8] {
        let count = Int(byte()) << 1 | Int(byte() & 1)
        let taken = Array(rest.prefix(count))
        rest = rest.dropFirst(count)
        return taken
    }

    /// Text as sd-bus hands it over: valid UTF-8 (invalid bytes replaced), no NUL.
    mutating func text() -> String { String(decoding: bytes().filter { $0 != 0 }, as: UTF8.self) }
}
