/// One value of a D-Bus property, as read off the bus and before anything believes it: only
/// the types that NetworkManager's properties read here have; any other is kept as its
/// signature, so a property of the wrong type is told from a missing one.
public enum BusValue: Hashable, Sendable {
    case string(String)
    case objectPath(String)
    case uint32(UInt32)
    /// A `(uu)`: a device's `StateReason`, its state and why.
    case uint32Pair(UInt32, UInt32)
    case bytes([UInt8])
    /// A value of another type, by its D-Bus signature (`b`, `a{sv}`, …).
    case other(String)
}

/// A D-Bus object's properties of one interface (`a{sv}`), by name.
public typealias BusProperties = [String: BusValue]

/// What one read of NetworkManager (and ModemManager) returned, object by object, keyed by
/// object path: the input ``NetworkManagerReading`` believes or refuses. Nothing in it is
/// checked yet beyond what sd-bus checks (well-formed messages, UTF-8 strings, valid paths).
public struct NetworkManagerSnapshot: Hashable, Sendable {
    /// `GetDevices`, in NetworkManager's order.
    public var devicePaths: [String]
    /// Each device's `org.freedesktop.NetworkManager.Device` properties.
    public var devices: [String: BusProperties]
    /// Each active connection's `org.freedesktop.NetworkManager.Connection.Active` properties.
    public var activeConnections: [String: BusProperties]
    /// Each access point's `Ssid`.
    public var accessPointSSIDs: [String: BusValue]
    /// Each connection profile's `GetSettings`, by setting name (`connection`, `gsm`, …).
    public var settings: [String: [String: BusProperties]]
    /// Each modem's `Modem3gpp.OperatorName`, by the modem's ModemManager path (a device's `Udi`).
    public var operatorNames: [String: BusValue]
    /// Objects whose replies could not be read at all, in words for the journal.
    public var problems: [String]

    public init(devicePaths: [String] = [], devices: [String: BusProperties] = [:],
                activeConnections: [String: BusProperties] = [:], accessPointSSIDs: [String: BusValue] = [:],
                settings: [String: [String: BusProperties]] = [:], operatorNames: [String: BusValue] = [:],
                problems: [String] = []) {
        self.devicePaths = devicePaths
        self.devices = devices
        self.activeConnections = activeConnections
        self.accessPointSSIDs = accessPointSSIDs
        self.settings = settings
        self.operatorNames = operatorNames
        self.problems = problems
    }
}
