/// A virtual machine (`vm:db`, `vm:db#2` for its second NIC), counted on the host side of its
/// tap (docs/NAMESPACES.md).
public struct VirtualMachineKind: SubjectKind {
    public init() {}
    public var prefix: String? { "vm" }
    public var form: String { "vm:NAME" }
    public var noun: String { "virtual machine" }
    public var plural: String { "virtual machines" }
    public var section: SubjectSection { .owners }
    public var planSelector: PlanSelectorKey { .interfaces }
    public func metricLabels(_ name: Substring) -> [(key: String, value: String)] { OwnerLabels.named("vm", name) }
    public func countedLabel(_ name: Substring) -> EstimateLabel? { .hostSideTap }
}
