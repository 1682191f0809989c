/// A system service, named by its unit (`service:nginx.service`, `service:init.scope`), or a
/// rootful container counted by its cgroup (`service:container/web`): traffic counted per
/// cgroup (docs/APPS.md), another view of the interfaces' bytes. Its name's grammar is
/// ``AppName``'s.
public struct ServiceKind: SubjectKind {
    public init() {}
    public var prefix: String? { "service" }
    public var form: String { "service:NAME" }
    public var noun: String { "service" }
    public var plural: String { "services" }
    public var section: SubjectSection { .apps }
    public var baseLabels: [EstimateLabel] { EstimateLabel.cgroupCounted }
    public var planSelector: PlanSelectorKey { .key("service") }
    public func accepts(_ name: Substring) -> Bool { AppName.isValid(name) }
    public func metricLabels(_ name: Substring) -> [(key: String, value: String)] { [("service", String(name))] }
}
