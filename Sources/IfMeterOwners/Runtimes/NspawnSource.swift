import IfMeterCore

extension LinkOwner.Kind {
    /// A systemd-nspawn machine (`--network-veth`): its name from the host side's `ve-NAME`.
    public static let nspawn = LinkOwner.Kind("nspawn", prefix: .container)
}

/// systemd-nspawn's machines, named by their host-side link alone: nspawn calls it `ve-NAME`
/// (`--network-veth`) or `vb-NAME` (`--network-bridge`), NAME cut to fit 15 bytes. Reads no file.
public final class NspawnSource: OwnerSource {
    public static let kind = LinkOwner.Kind.nspawn
    public static let fuzzSeeds = ["nspawn-host-side"]

    public init(paths: OwnerPaths) {}

    public func find(_ look: inout OwnerLook) {
        guard look.anySought else { return }
        for (nsid, name) in look.hostNames where look.isSought(nsid) {
            if let machine = Self.machine(hostSide: name) { look.namespaces[nsid] = .found(FoundOwner(.nspawn, name: machine, id: machine)) }
        }
    }

    /// The machine a host-side link's name says, if it is nspawn's.
    static func machine(hostSide name: String) -> String? {
        guard name.hasPrefix("ve-") || name.hasPrefix("vb-") else { return nil }
        let machine = String(name.dropFirst(3))
        return OwnerName.isAcceptable(machine) ? machine : nil
    }

    public static func fuzz(_ bytes: [UInt8]) {
        if let machine = machine(hostSide: String(decoding: bytes, as: UTF8.self)), !OwnerName.isAcceptable(machine) {
            fatalError("nspawn host side gave \(machine)")
        }
    }

    public static func names(seed bytes: [UInt8]) -> Bool { machine(hostSide: String(decoding: bytes, as: UTF8.self)) != nil }
}
