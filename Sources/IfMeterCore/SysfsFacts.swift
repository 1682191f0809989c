#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// What sysfs says about one interface, as far as classification needs it.
public struct SysfsFacts: Hashable, Sendable {
    /// `phy80211` exists: a cfg80211 (Wi-Fi) device.
    public var hasPhy80211 = false
    /// `wireless/` exists: a wireless-extensions device.
    public var hasWireless = false
    /// `DEVTYPE=` from `uevent` (`wlan`, `wwan`, `bridge`, …), if any.
    public var devtype: String?
    /// The driver bound to the interface's device (`device/driver`), if any.
    public var driver: String?
    /// `tun_flags` as a number, when the interface is a tun or tap device.
    public var tunFlags: UInt32?
    /// `device` exists: the interface sits on a bus device (PCI, USB, SDIO, …).
    public var hasDevice = false
    /// A sibling USB interface of the same device has a tty: a modem's control port.
    public var hasSiblingTTY = false
    /// `speed` in bits per second; nil when the driver does not know (it reads -1 or fails
    /// while the link is down).
    public var speedBitsPerSecond: UInt64?

    public init(
        hasPhy80211: Bool = false, hasWireless: Bool = false, devtype: String? = nil,
        driver: String? = nil, tunFlags: UInt32? = nil, hasDevice: Bool = false,
        hasSiblingTTY: Bool = false, speedBitsPerSecond: UInt64? = nil
    ) {
        self.hasPhy80211 = hasPhy80211
        self.hasWireless = hasWireless
        self.devtype = devtype
        self.driver = driver
        self.tunFlags = tunFlags
        self.hasDevice = hasDevice
        self.hasSiblingTTY = hasSiblingTTY
        self.speedBitsPerSecond = speedBitsPerSecond
    }
}

/// Sysfs facts as a ``Link`` keeps them: one shared object for all the links with the same facts
/// (thousands of veths have one set), where each link held 65 bytes of its own.
final class SharedSysfsFacts: Hashable, Sendable {
    let facts: SysfsFacts

    private init(facts: SysfsFacts) {
        self.facts = facts
    }

    /// The shared object of `facts`. At most ``internedLimit`` distinct sets are kept; past
    /// them each link gets its own, so nothing a host's links do can grow this without end.
    static func of(_ facts: SysfsFacts) -> SharedSysfsFacts {
        interned.withLock { interned in
            if let shared = interned[facts] { return shared }
            let shared = SharedSysfsFacts(facts: facts)
            if interned.count < internedLimit { interned[facts] = shared }
            return shared
        }
    }

    static let internedLimit = 1024
    private static let interned = Mutex<[SysfsFacts: SharedSysfsFacts]>([:])

    static func == (lhs: SharedSysfsFacts, rhs: SharedSysfsFacts) -> Bool { lhs === rhs || lhs.facts == rhs.facts }
    func hash(into hasher: inout Hasher) { hasher.combine(facts) }
}

/// Reads ``SysfsFacts`` under a sysfs root, `/sys` by default; tests point it at a fake tree.
///
/// sysfs shows the network namespace that mounted it, so a daemon reads it from its own
/// namespace. A missing file is a missing fact, never an error.
public struct SysfsReader: Sendable {
    public let root: String

    public init(root: String = "/sys") {
        self.root = root
    }

    public func facts(for interfaceName: String) -> SysfsFacts {
        // A name from the kernel never contains "/", but rules and tests pass names too.
        guard !interfaceName.isEmpty, !interfaceName.contains("/"), interfaceName != ".",
              interfaceName != ".." else { return SysfsFacts() }
        let base = "\(root)/class/net/\(interfaceName)"
        var facts = SysfsFacts()
        facts.hasPhy80211 = Self.exists("\(base)/phy80211")
        facts.hasWireless = Self.exists("\(base)/wireless")
        facts.devtype = Self.readFile("\(base)/uevent").flatMap(Self.devtype(fromUevent:))
        facts.tunFlags = Self.readFile("\(base)/tun_flags").flatMap(Self.parseNumber)
        facts.hasDevice = Self.exists("\(base)/device")
        facts.speedBitsPerSecond = speed(of: interfaceName)
        if facts.hasDevice {
            facts.driver = Self.resolve("\(base)/device/driver").map(Self.lastComponent)
            facts.hasSiblingTTY = Self.resolve("\(base)/device").map(Self.siblingHasTTY) ?? false
        }
        return facts
    }

    /// Link speed from `speed` alone, in bits per second; nil when unknown or down.
    public func speed(of interfaceName: String) -> UInt64? {
        guard !interfaceName.contains("/"), interfaceName != ".", interfaceName != ".." else { return nil }
        guard let megabits = Self.readFile("\(root)/class/net/\(interfaceName)/speed")
            .flatMap({ Int64($0.trimmingWhitespace()) }), megabits > 0 else { return nil }
        let (bits, overflow) = UInt64(megabits).multipliedReportingOverflow(by: 1_000_000)
        return overflow ? nil : bits
    }

    static func devtype(fromUevent text: String) -> String? {
        for line in text.split(separator: "\n") where line.hasPrefix("DEVTYPE=") {
            return String(line.dropFirst("DEVTYPE=".count))
        }
        return nil
    }

    /// `tun_flags` is printed as `0x1001`.
    static func parseNumber(_ text: String) -> UInt32? {
        let trimmed = text.trimmingWhitespace()
        if trimmed.hasPrefix("0x") { return UInt32(trimmed.dropFirst(2), radix: 16) }
        return UInt32(trimmed)
    }

    /// A USB network function's modem shares its USB device with a tty-bearing interface:
    /// `…/1-1/1-1:1.0/net/usb0` next to `…/1-1/1-1:1.2/tty/ttyACM0` (or `ttyUSB0` directly).
    static func siblingHasTTY(deviceDirectory: String) -> Bool {
        let usbDevice = parentDirectory(deviceDirectory)
        for sibling in listDirectory(usbDevice) where sibling.contains(":") {
            let path = "\(usbDevice)/\(sibling)"
            if path == deviceDirectory { continue }
            if exists("\(path)/tty") { return true }
            if listDirectory(path).contains(where: { $0.hasPrefix("tty") }) { return true }
        }
        return false
    }

    static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    static func resolve(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    static func lastComponent(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    static func parentDirectory(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    package static func listDirectory(_ path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Reads a small sysfs attribute; sysfs files are at most a page.
    static func readFile(_ path: String) -> String? {
        (try? WholeFile.read(path, limit: 4096)).map { String(decoding: $0, as: UTF8.self) }
    }
}

extension StringProtocol {
    package func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }),
              let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
