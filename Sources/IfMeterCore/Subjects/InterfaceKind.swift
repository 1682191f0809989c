/// An interface, named as the kernel names it (`wwan0`), or a link metered inside a namespace
/// (`netns:vpn/tun0`, a ``NamespaceKind`` name).
public struct InterfaceKind: SubjectKind {
    public init() {}
    public var prefix: String? { nil }
    public var form: String { "NAME" }
    public var noun: String { "interface" }
    public var plural: String { "interfaces" }
    public var section: SubjectSection { .interfaces }
    public var planSelector: PlanSelectorKey { .interfaces }
}
