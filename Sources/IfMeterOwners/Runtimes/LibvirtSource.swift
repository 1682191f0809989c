import IfMeterCore
#if canImport(Glibc)
import Glibc
#endif

extension LinkOwner.Kind {
    /// A libvirt QEMU domain, a virtual machine: its name and UUID from libvirt's live status
    /// file, which names the tap of each of its NICs.
    public static let libvirt = LinkOwner.Kind("libvirt", prefix: .vm)
}

/// libvirt's running QEMU domains, from their live status files (`/run/libvirt/qemu/NAME.xml`):
/// each names the tap of every NIC and the guest's MAC. A tap is a domain's when its status names
/// it, whatever the name (libvirt's own `vnetN` or a `<target dev='…'/>` the domain chose), and
/// the tap's address is the guest's MAC. A tap no running domain claims is one libvirt is still
/// starting (it writes the status after the taps) while its state directory exists, and
/// nobody's otherwise. A file counts only when root wrote it, in a directory only root can
/// write to: libvirtd runs as root. Each file is read again only when it changed.
public final class LibvirtSource: OwnerSource {
    public static let kind = LinkOwner.Kind.libvirt
    public static let fuzzSeeds = ["libvirt-status.xml"]

    private let directory: String
    /// Each running domain's status, by file name.
    private var status: [String: CachedFile<LibvirtDomain?>] = [:]

    public init(paths: OwnerPaths) { directory = paths.libvirtQemu }

    public func find(_ look: inout OwnerLook) {
        guard !look.tapsSought.isEmpty else { return }
        let domains = self.domains()
        let running = RootOwned.check(directory, type: S_IFDIR)
        for (ifindex, tap) in look.tapsSought where look.taps[ifindex] == nil {
            let owner = domains.lazy.compactMap { domain in
                domain.nic(tap: tap.name, address: tap.address).map { FoundOwner(.libvirt, name: domain.name, id: domain.uuid, nic: Int32($0)) }
            }.first
            look.taps[ifindex] = owner.map(OwnerLookup.found) ?? (running ? .starting(fallback: nil) : .unknown)
        }
    }

    /// The running domains, in the order of their files' names.
    private func domains() -> [LibvirtDomain] {
        guard RootOwned.check(directory, type: S_IFDIR) else {
            status = [:]
            return []
        }
        let files = SysfsReader.listDirectory(directory).filter { $0.hasSuffix(".xml") }.sorted()
        status = status.filter { files.contains($0.key) }
        var domains: [LibvirtDomain] = []
        for file in files {
            let path = directory + "/" + file
            guard RootOwned.check(path, type: S_IFREG) else { continue }
            var cached = status[file] ?? CachedFile()
            if let domain = cached.read(path, Self.domain(statusXML:)) ?? nil { domains.append(domain) }
            status[file] = cached
        }
        return domains
    }

    public static func fuzz(_ bytes: [UInt8]) {
        if let domain = domain(statusXML: bytes) {
            guard OwnerName.isAcceptable(domain.name), isUUID(domain.uuid),
                  domain.interfaces.allSatisfy({ ($0.target.map(isLinkName) ?? true) && ($0.mac?.count ?? 6) == 6 }) else {
                fatalError("libvirt status gave \(domain)")
            }
        }
    }

    public static func names(seed bytes: [UInt8]) -> Bool { domain(statusXML: bytes) != nil }
}

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
    /// its first byte (`fa` where the guest's is `fe`), so that a bridge does not take the
    /// guest's address for its own; a tap
    /// made by someone else may carry the guest's MAC itself. The address tells a tap whose
    /// name the next domain took over from one this stale file still lists.
    public func nic(tap name: String, address: String) -> Int? {
        guard let tap = Self.macBytes(address) else { return nil }
        for (offset, interface) in interfaces.enumerated() {
            guard interface.target == name, let guest = interface.mac else { continue }
            // A guest MAC that itself begins with fe gets a tap beginning with fa.
            let libvirts: UInt8 = guest[0] == 0xfe ? 0xfa : 0xfe
            if tap[1...] == guest[1...], tap[0] == libvirts || tap[0] == guest[0] { return offset + 1 }
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

extension LibvirtSource {
    /// A libvirt QEMU domain's live status file: `<domstatus>` around the `<domain>` it runs,
    /// whose `<name>`, `<uuid>` and `<devices><interface>` (`<mac address>`, `<target dev>`) are
    /// read. nil when the file is not one, is not well nested, or names the domain with
    /// anything an owner's name may not hold.
    ///
    /// The scanner reads elements, attributes, text, comments and processing instructions;
    /// libvirt writes nothing else, so a DOCTYPE or CDATA section makes the file unusable rather
    /// than interpreted, and an entity reference in a value read makes that value so (no
    /// acceptable name, UUID, device or address holds one). Nesting is bounded (64 deep).
    public static func domain(statusXML bytes: [UInt8]) -> LibvirtDomain? {
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

