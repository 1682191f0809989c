/// A link's remainder, `remainder:IFACE` (docs/APPS.md): what the link's own counters counted
/// that no named application did — forwarded traffic, the kernel's own (ARP, ND, tunnels'
/// encapsulation), applications a full map could not name, cgroups gone before they were
/// named. The link's applications plus its remainder are the link's counters.
public struct RemainderKind: SubjectKind {
    public init() {}
    public var prefix: String? { "remainder" }
    public var form: String { "remainder:IFACE" }
    public var noun: String { "link's remainder" }
    public var plural: String { "links' remainders" }
    public var section: SubjectSection { .apps }
    /// In `plan[NAME].interfaces`: a router's plan on what it forwards is one on `remainder:wan0`.
    public var planSelector: PlanSelectorKey { .interfaces }
    /// A kernel interface name: at most 15 bytes, no `/`, `:` or space.
    public func accepts(_ name: Substring) -> Bool {
        !name.isEmpty && name.utf8.count <= 15
            && name.utf8.allSatisfy { $0 > 0x20 && $0 != 0x7F && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: ":") }
    }
    public func metricLabels(_ name: Substring) -> [(key: String, value: String)] { [("remainder_of", String(name))] }
}
