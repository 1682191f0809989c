/// A libvirt QEMU domain as its live status file says (`/run/libvirt/qemu/NAME.xml`, written by
/// libvirtd while the domain runs and removed when it stops): its name, its UUID and its NICs.
public struct LibvirtDomain: Hashable, Sendable {
    /// One `<interface>` of the domain, in the file's order.
    public struct Interface: Hashable, Sendable {
        /// The host-side device (`<target dev='vnet0'/>`); nil for a NIC with none (`type='user'`).
        public var target: String?
        /// The guest's MAC address (`<mac address='52:54:00:…'/>`), six bytes.
        public var mac: [UInt8]?

        public init(target: String?, mac: [UInt8]?) {
            self.target = target
            self.mac = mac
        }
    }

    public var name: String
    public var uuid: String
    public var interfaces: [Interface]

    public init(name: String, uuid: String, interfaces: [Interface]) {
        self.name = name
        self.uuid = uuid
        self.interfaces = interfaces
    }

    /// The position (from 1) of the NIC whose host side is the tap `name` with hardware address
    /// `address`; nil when none is. libvirt gives a tap it makes the guest's MAC with `fe` for
    /// its first byte (so that a bridge does not take the guest's address for its own); a tap
    /// made by someone else may carry the guest's MAC itself. The address tells a tap whose
    /// name the next domain took over from one this stale file still lists.
    public func nic(tap name: String, address: String) -> Int? {
        guard let tap = Self.macBytes(address) else { return nil }
        for (offset, interface) in interfaces.enumerated() {
            guard interface.target == name, let guest = interface.mac else { continue }
            if tap[1...] == guest[1...], tap[0] == 0xfe || tap[0] == guest[0] { return offset + 1 }
        }
        return nil
    }

    /// `52:54:00:50:6b:de` as six bytes; nil for anything else.
    static func macBytes(_ text: String) -> [UInt8]? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard part.utf8.count == 2, let byte = UInt8(part, radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}

extension RuntimeState {
    /// A libvirt QEMU domain's live status file: `<domstatus>` around the `<domain>` it runs,
    /// whose `<name>`, `<uuid>` and `<devices><interface>` (`<mac address>`, `<target dev>`) are
    /// read. nil when the file is not one, is not well nested, or names the domain with
    /// anything an owner's name may not hold.
    ///
    /// The scanner reads elements, attributes, text, comments and processing instructions;
    /// libvirt writes nothing else, so a DOCTYPE or CDATA section makes the file unusable rather
    /// than interpreted, and an entity reference in a value read makes that value so (no
    /// acceptable name, UUID, device or address holds one). Nesting is bounded (64 deep).
    public static func libvirtDomain(statusXML bytes: [UInt8]) -> LibvirtDomain? {
        var scanner = XMLScanner(bytes)
        var path: [String] = []
        var name: String?
        var uuid: String?
        var interfaces: [LibvirtDomain.Interface] = []
        var text: [UInt8] = []
        while let token = scanner.next() {
            switch token {
            case .failed:
                return nil
            case .open(let element, let attributes, let closed):
                guard path.count < 64, path.isEmpty == (element == "domstatus") else { return nil }
                path.append(element)
                text = []
                let inDevices = path.count == 5 && path[1] == "domain" && path[2] == "devices" && path[3] == "interface"
                switch (path.count, element) {
                case (4, "interface") where path[1] == "domain" && path[2] == "devices":
                    interfaces.append(LibvirtDomain.Interface(target: nil, mac: nil))
                case (5, "mac") where inDevices:
                    interfaces[interfaces.count - 1].mac = attributes["address"].flatMap(LibvirtDomain.macBytes)
                case (5, "target") where inDevices:
                    interfaces[interfaces.count - 1].target = attributes["dev"].flatMap { Self.isLinkName($0) ? $0 : nil }
                default:
                    break
                }
                if closed { path.removeLast() }
            case .text(let bytes):
                text += bytes
            case .close(let element):
                guard path.last == element else { return nil }
                if path.count == 3, path[1] == "domain" {
                    let value = String(decoding: text, as: UTF8.self).trimmingWhitespace()
                    if element == "name" { name = value }
                    if element == "uuid" { uuid = value }
                }
                path.removeLast()
                text = []
            }
        }
        guard path.isEmpty, let name, OwnerName.isAcceptable(name), let uuid, isUUID(uuid) else { return nil }
        return LibvirtDomain(name: name, uuid: uuid, interfaces: interfaces)
    }

    /// What the kernel takes for a link's name: 1 to 15 bytes, none of them `/`, `:`, a space or
    /// a control character.
    static func isLinkName(_ name: String) -> Bool {
        let bytes = name.utf8
        return (1...15).contains(bytes.count)
            && bytes.allSatisfy { $0 > 0x20 && $0 != 0x7f && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: ":") }
    }

    /// `ae25cd81-9c70-4c91-9c74-481c24be67a4`, lowercase, as libvirt writes a UUID.
    static func isUUID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        return bytes.indices.allSatisfy { index in
            [8, 13, 18, 23].contains(index) ? bytes[index] == UInt8(ascii: "-")
                : (0x30...0x39).contains(bytes[index]) || (0x61...0x66).contains(bytes[index])
        }
    }
}

/// The XML libvirt writes, token by token: elements with their attributes, text, and the
/// comments and processing instructions it skips. A DOCTYPE or CDATA section fails the scan;
/// entity references are not decoded.
struct XMLScanner {
    enum Token {
        case open(String, attributes: [String: String], closed: Bool)
        case close(String)
        case text(ArraySlice<UInt8>)
        case failed
    }

    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func next() -> Token? {
        guard index < bytes.count else { return nil }
        guard bytes[index] == UInt8(ascii: "<") else {
            let start = index
            while index < bytes.count, bytes[index] != UInt8(ascii: "<") { index += 1 }
            // An entity reference is left as it is: no name or UUID that needs one is acceptable.
            return .text(bytes[start..<index])
        }
        if starts(with: "<!--") { return skip(past: "-->") }
        if starts(with: "<?") { return skip(past: "?>") }
        if starts(with: "<!") { return .failed }
        if starts(with: "</") {
            index += 2
            guard let name = name() else { return .failed }
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ">") else { return .failed }
            index += 1
            return .close(name)
        }
        index += 1
        guard let element = name() else { return .failed }
        var attributes: [String: String] = [:]
        while true {
            skipSpace()
            guard index < bytes.count else { return .failed }
            if bytes[index] == UInt8(ascii: ">") {
                index += 1
                return .open(element, attributes: attributes, closed: false)
            }
            if starts(with: "/>") {
                index += 2
                return .open(element, attributes: attributes, closed: true)
            }
            guard let attribute = name() else { return .failed }
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { return .failed }
            index += 1
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "'") || bytes[index] == UInt8(ascii: "\"") else { return .failed }
            let quote = bytes[index]
            index += 1
            let start = index
            while index < bytes.count, bytes[index] != quote, bytes[index] != UInt8(ascii: "<") { index += 1 }
            guard index < bytes.count, bytes[index] == quote else { return .failed }
            let value = bytes[start..<index]
            index += 1
            // An entity in a value is not decoded: the value is left out, and what needed it is
            // not found.
            if !value.contains(UInt8(ascii: "&")) { attributes[attribute] = String(decoding: value, as: UTF8.self) }
        }
    }

    private func starts(with prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard bytes.count - index >= count else { return false }
        return prefix.withUTF8Buffer { prefix in prefix.indices.allSatisfy { bytes[index + $0] == prefix[$0] } }
    }

    private mutating func skip(past end: StaticString) -> Token {
        let count = end.utf8CodeUnitCount
        while bytes.count - index >= count {
            if starts(with: end) {
                index += count
                return .text([])
            }
            index += 1
        }
        return .failed
    }

    private mutating func skipSpace() {
        while index < bytes.count, [0x20, 0x09, 0x0a, 0x0d].contains(bytes[index]) { index += 1 }
    }

    /// An element's or attribute's name: letters, digits, `-`, `_`, `.`, `:`.
    private mutating func name() -> String? {
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            guard (0x30...0x39).contains(byte) || (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: ":")
            else { break }
            index += 1
        }
        return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
    }
}
