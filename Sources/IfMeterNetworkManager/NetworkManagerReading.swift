import IfMeterCore

/// What each device is on, from what NetworkManager said (a ``NetworkManagerSnapshot``),
/// believing nothing unchecked. Whatever came off the bus is hostile until checked here: a
/// property of the wrong type makes its object an error (a device is left out, a connection is
/// not counted as a network), never a crash; a UUID must be one (`Network.isUUID`); names are cut
/// to ``maxText`` bytes; an SSID is kept as raw bytes, at most ``maxSSID``; at most
/// ``maxDevices`` devices are read. Pure: no bus, no clock.
public enum NetworkManagerReading {
    /// Devices read at most: a real machine has a few dozen at the very most.
    public static let maxDevices = 256
    /// Bytes kept of an id, APN or operator name.
    public static let maxText = 256
    /// An SSID's bytes at most (IEEE 802.11).
    public static let maxSSID = 32
    /// Where ModemManager keeps its modems: a modem device's `Udi` under it names the object
    /// whose operator is read.
    public static let modemPathPrefix = "/org/freedesktop/ModemManager1/Modem/"

    /// NetworkManager's "no object" path (`ActiveConnection`, `SpecificObject`, `Connection`).
    static let noObject = "/"
    /// `NM_DEVICE_STATE_DISCONNECTED` and `NM_DEVICE_STATE_REASON_NEW_ACTIVATION`.
    static let disconnectedState: UInt32 = 30
    static let newActivationReason: UInt32 = 60
    /// `NM_ACTIVE_CONNECTION_STATE_DEACTIVATED`.
    static let deactivatedState: UInt32 = 4
    /// `NM_DEVICE_TYPE_MODEM`.
    static let modemDeviceType: UInt32 = 8
    static let wifiType = "802-11-wireless"
    static let mobileTypes: Set<String> = ["gsm", "cdma"]
    /// `NM_ACTIVE_CONNECTION_STATE_ACTIVATING`, `…_ACTIVATED` and `…_DEACTIVATING`: traffic on
    /// the device is the connection's from the moment it is on it until it is off. Deactivating
    /// counts too: its addresses and routes are still up, and NetworkManager 1.42 switching a
    /// device between profiles spends about 10 ms there before the device has none, a state a
    /// read would otherwise catch and report as "on no network" in the middle of a switch.
    static let onDeviceStates: Set<UInt32> = [1, 2, 3]
    /// `NM_ACTIVATION_STATE_FLAG_EXTERNAL` and `…_IS_PORT` (`…_IS_SLAVE` before 1.44).
    static let externalFlag: UInt32 = 0x80
    static let portFlag: UInt32 = 0x2

    /// The devices, sorted by interface, and what the journal should hear: objects left out
    /// and why (the snapshot's own problems first). Where two devices name one interface (Open
    /// vSwitch's bridge, port and interface do), the one with a connection is kept.
    public static func devices(from snapshot: NetworkManagerSnapshot) -> (devices: [DeviceNetwork], problems: [String]) {
        var problems = snapshot.problems
        var paths = snapshot.devicePaths
        if paths.count > maxDevices {
            problems.append("NetworkManager lists \(paths.count) devices; only the first \(maxDevices) are read")
            paths = Array(paths.prefix(maxDevices))
        }
        var byInterface: [String: DeviceNetwork] = [:]
        for path in paths {
            // Absent: it went between GetDevices and its read (a signal follows), or its read
            // failed, which the snapshot's problems already say.
            guard let properties = snapshot.devices[path],
                  let device = device(at: path, properties, in: snapshot, problems: &problems) else { continue }
            if let kept = byInterface[device.interface], kept.network != nil || device.network == nil { continue }
            byInterface[device.interface] = device
        }
        return (byInterface.values.sorted { $0.interface < $1.interface }, problems)
    }

    /// Whether the read caught a device in the middle of a move, a state NetworkManager leaves
    /// within milliseconds and signals leaving: off one connection with the next already queued
    /// (`StateReason` disconnected for `NM_DEVICE_STATE_REASON_NEW_ACTIVATION`, about 2 ms in
    /// NetworkManager 1.42 switching profiles), or still pointing at a connection that is
    /// already deactivated or gone (a read is not atomic: the device was asked before the
    /// connection). A list read then would say the device is on no network for that moment.
    public static func isInTransition(_ snapshot: NetworkManagerSnapshot) -> Bool {
        snapshot.devicePaths.prefix(maxDevices).contains { path in
            guard let device = snapshot.devices[path] else { return false }
            guard let active = activeConnectionPath(of: device) else {
                guard case .uint32Pair(disconnectedState, newActivationReason)? = device["StateReason"] else { return false }
                return true
            }
            guard let connection = snapshot.activeConnections[active] else { return true }
            guard case .uint32(let state)? = connection["State"] else { return false }
            return state == deactivatedState
        }
    }

    /// The active connection a device's properties point at, if any: what a read fetches next.
    public static func activeConnectionPath(of device: BusProperties) -> String? {
        guard case .objectPath(let path)? = device["ActiveConnection"], path != noObject else { return nil }
        return path
    }

    /// The ModemManager object of a modem device, whose operator a read fetches. `Udi` is any
    /// string, so it must also be a valid object path.
    public static func modemPath(of device: BusProperties) -> String? {
        guard case .uint32(modemDeviceType)? = device["DeviceType"], case .string(let udi)? = device["Udi"],
              udi.hasPrefix(modemPathPrefix), isObjectPath(udi) else { return nil }
        return udi
    }

    /// D-Bus's object path syntax: `/`, or `/`-separated non-empty elements of `[A-Za-z0-9_]`.
    static func isObjectPath(_ text: String) -> Bool {
        guard text.utf8.first == UInt8(ascii: "/") else { return false }
        guard text != "/" else { return true }
        return text.utf8.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).allSatisfy { element in
            !element.isEmpty && element.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A)
                || ($0 >= 0x61 && $0 <= 0x7A) || $0 == UInt8(ascii: "_") }
        }
    }

    /// The access point a Wi-Fi connection is on, whose SSID a read fetches.
    public static func accessPointPath(of active: BusProperties) -> String? {
        guard case .string(wifiType)? = active["Type"], case .objectPath(let path)? = active["SpecificObject"],
              path != noObject else { return nil }
        return path
    }

    /// The profile of a Wi-Fi or mobile connection, whose settings (SSID, APN) a read fetches.
    public static func settingsPath(of active: BusProperties) -> String? {
        guard case .string(let type)? = active["Type"], type == wifiType || mobileTypes.contains(type),
              case .objectPath(let path)? = active["Connection"], path != noObject else { return nil }
        return path
    }

    /// `text` cut to at most `limit` UTF-8 bytes, between characters.
    public static func capped(_ text: String, to limit: Int = maxText) -> String {
        guard text.utf8.count > limit else { return text }
        var kept = "", count = 0
        for character in text {
            count += character.utf8.count
            guard count <= limit else { break }
            kept.append(character)
        }
        return kept
    }

    /// Whether the kernel would take `name` for an interface (`dev_valid_name`): 1 to 15 bytes,
    /// not `.` or `..`, no `/`, `:` or white space; control characters are refused too.
    public static func isInterfaceName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...15).contains(bytes.count), name != ".", name != ".." else { return false }
        return !bytes.contains { $0 <= 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: ":") }
    }

    private static func device(at path: String, _ properties: BusProperties, in snapshot: NetworkManagerSnapshot,
                               problems: inout [String]) -> DeviceNetwork? {
        do {
            let controlInterface = try text(properties, "Interface")
            let ipInterface = try text(properties, "IpInterface") ?? ""
            guard let interface = ipInterface.isEmpty ? controlInterface : ipInterface, isInterfaceName(interface) else {
                problems.append("device \(path) names no usable interface: left out")
                return nil
            }
            let metered = Metered(networkManager: try number(properties, "Metered") ?? 0)
            let isModem = try number(properties, "DeviceType") == modemDeviceType
            guard let active = try objectPath(properties, "ActiveConnection"), active != noObject else {
                return DeviceNetwork(interface: interface, network: nil)
            }
            let network = self.network(at: active, on: interface, metered: metered,
                                       modem: isModem ? modemPath(of: properties) : nil, in: snapshot, problems: &problems)
            return DeviceNetwork(interface: interface, network: network)
        } catch {
            problems.append("device \(path): \(error): left out")
            return nil
        }
    }

    private static func network(at path: String, on interface: String, metered: Metered, modem: String?,
                                in snapshot: NetworkManagerSnapshot, problems: inout [String]) -> Network? {
        // Absent: it went between the device's read and its own (a signal follows), or its
        // read failed, which the snapshot's problems already say.
        guard let properties = snapshot.activeConnections[path] else { return nil }
        do {
            guard let state = try number(properties, "State") else { throw MissingProperty(name: "State") }
            guard onDeviceStates.contains(state) else { return nil }
            // Not a network someone joined: a connection NetworkManager made up for a device it
            // found configured (docker0, virbr0, a VPN's tun, lo: a new UUID at each re-creation),
            // a port of a bridge or bond (its bytes are its controller's too), or loopback.
            let flags = try number(properties, "StateFlags") ?? 0
            let controller = try objectPath(properties, "Master") ?? noObject
            guard flags & (externalFlag | portFlag) == 0, controller == noObject, try text(properties, "Type") != "loopback" else {
                return nil
            }
            guard let uuid = try text(properties, "Uuid"), Network.isUUID(uuid) else {
                problems.append("the connection on \(interface) (\(path)) has no well-formed UUID: not counted as a network")
                return nil
            }
            let type = try text(properties, "Type") ?? ""
            var network = Network(uuid: uuid, id: capped(try text(properties, "Id") ?? ""),
                                  type: Network.kind(ofConnectionType: type), metered: metered)
            let settings = settingsPath(of: properties).flatMap { snapshot.settings[$0] } ?? [:]
            if type == wifiType {
                network.ssid = ssid(accessPoint: accessPointPath(of: properties).flatMap { snapshot.accessPointSSIDs[$0] },
                                    settings: settings[wifiType]?["ssid"], on: interface, problems: &problems)
            }
            if mobileTypes.contains(type) {
                network.apn = optionalText(settings["gsm"]?["apn"], "the APN of the connection on \(interface)",
                                           problems: &problems)
            }
            if let modem {
                network.operatorName = optionalText(snapshot.operatorNames[modem], "the operator of the modem \(modem)",
                                                    problems: &problems)
            }
            return network
        } catch {
            problems.append("the connection on \(interface) (\(path)): \(error): not counted as a network")
            return nil
        }
    }

    /// The access point's SSID, else the profile's (a hidden network's access point may show
    /// none); an SSID longer than 802.11 allows is no SSID.
    private static func ssid(accessPoint: BusValue?, settings: BusValue?, on interface: String,
                             problems: inout [String]) -> [UInt8]? {
        for (value, source) in [(accessPoint, "access point"), (settings, "profile")] {
            switch value {
            case nil: continue
            case .bytes(let bytes)? where bytes.isEmpty: continue
            case .bytes(let bytes)? where bytes.count <= maxSSID: return bytes
            case .bytes(let bytes)?:
                problems.append("the SSID of the \(source) of the connection on \(interface) is \(bytes.count) bytes long: "
                                + "ignored")
            case let value?:
                problems.append("the SSID of the \(source) of the connection on \(interface) is of type \(value.signature), "
                                + "not ay: ignored")
            }
        }
        return nil
    }

    private static func optionalText(_ value: BusValue?, _ what: String, problems: inout [String]) -> String? {
        switch value {
        case nil: return nil
        case .string(let text)?: return text.isEmpty ? nil : capped(text)
        case let value?:
            problems.append("\(what) is of type \(value.signature), not s: ignored")
            return nil
        }
    }

    private static func text(_ properties: BusProperties, _ name: String) throws(WrongType) -> String? {
        switch properties[name] {
        case nil: return nil
        case .string(let text)?: return text
        case let value?: throw WrongType(name: name, expected: "s", found: value.signature)
        }
    }

    private static func objectPath(_ properties: BusProperties, _ name: String) throws(WrongType) -> String? {
        switch properties[name] {
        case nil: return nil
        case .objectPath(let path)?: return path
        case let value?: throw WrongType(name: name, expected: "o", found: value.signature)
        }
    }

    private static func number(_ properties: BusProperties, _ name: String) throws(WrongType) -> UInt32? {
        switch properties[name] {
        case nil: return nil
        case .uint32(let number)?: return number
        case let value?: throw WrongType(name: name, expected: "u", found: value.signature)
        }
    }
}

/// A property of another type than NetworkManager's API gives it.
struct WrongType: Error, CustomStringConvertible {
    var name: String
    var expected: String
    var found: String
    var description: String { "its \(name) is of type \(found), not \(expected)" }
}

/// A property NetworkManager always sends, missing.
struct MissingProperty: Error, CustomStringConvertible {
    var name: String
    var description: String { "it has no \(name)" }
}

extension BusValue {
    /// The D-Bus signature of the value's type.
    public var signature: String {
        switch self {
        case .string: "s"
        case .objectPath: "o"
        case .uint32: "u"
        case .uint32Pair: "(uu)"
        case .bytes: "ay"
        case .other(let signature): signature
        }
    }
}
