/// A network namespace no runtime claims (`netns:blue`, by its bound name or its first
/// process), counted on the host side of its veth; and a link metered inside a namespace
/// (`netns:vpn/tun0`, `meter_inside`), which is its own and carries no host-side label.
public struct NamespaceKind: SubjectKind {
    public init() {}
    public var prefix: String? { "netns" }
    public var form: String { "netns:NAME" }
    public var noun: String { "namespace" }
    public var plural: String { "namespaces" }
    public var section: SubjectSection { .owners }
    public var planSelector: PlanSelectorKey { .interfaces }
    public func metricLabels(_ name: Substring) -> [(key: String, value: String)] { OwnerLabels.named("netns", name) }

    public func countedLabel(_ name: Substring) -> EstimateLabel? {
        name.utf8.contains(UInt8(ascii: "/")) ? nil : .hostSideVeth
    }
}
