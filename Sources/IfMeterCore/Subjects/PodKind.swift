/// A Kubernetes pod, `pod:NAMESPACE/NAME`: the one owner name that holds a `/`.
public struct PodKind: SubjectKind {
    public init() {}
    public var prefix: String? { "pod" }
    public var form: String { "pod:NAMESPACE/NAME" }
    public var noun: String { "pod" }
    public var plural: String { "pods" }
    public var section: SubjectSection { .owners }
    public var planSelector: PlanSelectorKey { .interfaces }

    /// `namespace` and `pod`, as kube-state-metrics and the kubelet name them, so a query joins
    /// theirs.
    public func metricLabels(_ name: Substring) -> [(key: String, value: String)] {
        let owner = OwnerLabels.owner(name)
        guard let pod = Self.split(owner) else { return OwnerLabels.named("pod", name) }
        return [("namespace", String(pod.namespace)), ("pod", String(pod.name))]
    }

    public func countedLabel(_ name: Substring) -> EstimateLabel? { .hostSideVeth }

    /// A pod's namespace and name, from `NAMESPACE/NAME`.
    public static func split(_ name: Substring) -> (namespace: Substring, name: Substring)? {
        guard let slash = name.firstIndex(of: "/") else { return nil }
        return (name[..<slash], name[name.index(after: slash)...])
    }
}
