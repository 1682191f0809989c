/// A NetworkManager connection (`network:UUID`), and `network:unknown` for what crossed a
/// managed interface while its network was not known (docs/NETWORKS.md): another view of the
/// interfaces' traffic, with figures and labels of its own in `/metrics`.
public struct NetworkKind: SubjectKind {
    public init() {}
    public var prefix: String? { "network" }
    public var form: String { "network:UUID" }
    public var noun: String { "network" }
    public var plural: String { "networks" }
    public var section: SubjectSection { .networks }
    public var planSelector: PlanSelectorKey { .key("network") }
    /// Every name: a subject that is not a known network's is answered as one without a record.
    public func accepts(_ name: Substring) -> Bool { true }

    public func closingLabel(_ name: Substring) -> EstimateLabel? {
        name == Self.unknownName ? .networkUnknown : nil
    }

    static let unknownName = "unknown"
}
