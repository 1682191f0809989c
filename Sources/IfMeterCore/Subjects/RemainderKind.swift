/// A link's remainder, `remainder:IFACE` (docs/APPS.md): what the link's own counters counted
/// that no socket's cgroup did — forwarded traffic, the kernel's own (ARP, ND, tunnels'
/// encapsulation). `remainder:IFACE#unnamed` is what sockets sent and received there that could
/// not be named: a full map counted it by link only, or its cgroup went before it was named.
/// The link's applications plus its remainders are the link's counters.
public struct RemainderKind: SubjectKind {
    public init() {}
    public var prefix: String? { "remainder" }
    public var form: String { "remainder:IFACE" }
    public var noun: String { "link's remainder" }
    public var plural: String { "links' remainders" }
    public var section: SubjectSection { .apps }
    /// In `plan[NAME].interfaces`: a router's plan on what it forwards is one on `remainder:wan0`.
    public var planSelector: PlanSelectorKey { .interfaces }
    /// What follows a link's name in the subject of its unnamed applications.
    public static let unnamedSuffix = "#unnamed"

    /// A kernel interface name (at most 15 bytes, no `/`, `:` or space), with `#unnamed` after
    /// it or not. (Only root names the daemon's links: one named `eth0#unnamed` would share its
    /// remainder's subject with eth0's unnamed applications.)
    public func accepts(_ name: Substring) -> Bool {
        let link = name.hasSuffix(Self.unnamedSuffix) ? name.dropLast(Self.unnamedSuffix.count) : name
        return !link.isEmpty && link.utf8.count <= 15 && link.utf8.allSatisfy {
            $0 > 0x20 && $0 != 0x7F && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: ":")
        }
    }
    public func metricLabels(_ name: Substring) -> [(key: String, value: String)] {
        [("remainder_of", String(name.hasSuffix(Self.unnamedSuffix) ? name.dropLast(Self.unnamedSuffix.count) : name))]
    }
    public func closingLabel(_ name: Substring) -> EstimateLabel? {
        name.hasSuffix(Self.unnamedSuffix) ? .unnamedApps : nil
    }
}
