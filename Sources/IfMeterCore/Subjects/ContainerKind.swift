/// A container (`container:web`, `container:web#3` for its second link), counted on the host
/// side of its veth (docs/NAMESPACES.md).
public struct ContainerKind: SubjectKind {
    public init() {}
    public var prefix: String? { "container" }
    public var form: String { "container:NAME" }
    public var noun: String { "container" }
    public var plural: String { "containers" }
    public var section: SubjectSection { .owners }
    public var planSelector: PlanSelectorKey { .interfaces }
    public func metricLabels(_ name: Substring) -> [(key: String, value: String)] { OwnerLabels.named("container", name) }
    public func countedLabel(_ name: Substring) -> EstimateLabel? { .hostSideVeth }
}
