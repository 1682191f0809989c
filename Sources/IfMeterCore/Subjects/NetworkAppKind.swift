/// A service's or application's traffic on one network, `netapp:UUID/SUBJECT`
/// (`netapp:6f1c…/app:1000/firefox`, `netapp:unknown/service:nginx.service`): what it sent
/// and received on links while they were on that network, split at the same sample boundaries
/// as the links' (docs/APPS.md, "By network"). Another view of the applications' bytes, listed
/// by `ifmeter apps --network`, never with them.
public struct NetworkAppKind: SubjectKind {
    public init() {}
    public var prefix: String? { "netapp" }
    public var form: String { "netapp:UUID/SUBJECT" }
    public var noun: String { "application on a network" }
    public var plural: String { "applications on networks" }
    public var section: SubjectSection { .networkApps }
    public var planSelector: PlanSelectorKey { .key("app") }
    public var baseLabels: [EstimateLabel] { EstimateLabel.cgroupCounted }

    /// A network's UUID (or `unknown`), `/`, then a service's, application's or link
    /// remainder's subject.
    public func accepts(_ name: Substring) -> Bool {
        guard let (network, subject) = Self.split(name) else { return false }
        guard network == NetworkKind.unknownName || Network.isUUID(String(network)),
              let kind = SubjectKinds.kind(of: String(subject))?.kind else { return false }
        return kind.section == .apps
    }

    public func metricLabels(_ name: Substring) -> [(key: String, value: String)] {
        guard let (network, subject) = Self.split(name),
              let (kind, inner) = SubjectKinds.kind(of: String(subject)) else { return [] }
        return [("uuid", String(network))] + kind.metricLabels(inner)
    }

    public func closingLabel(_ name: Substring) -> EstimateLabel? {
        guard let (network, subject) = Self.split(name) else { return nil }
        if network == NetworkKind.unknownName { return .networkUnknown }
        return SubjectKinds.kind(of: String(subject)).flatMap { $0.kind.closingLabel($0.name) }
    }

    /// The network (a UUID or `unknown`) and the application's subject in `name`.
    public static func split(_ name: Substring) -> (network: Substring, subject: Substring)? {
        guard let slash = name.firstIndex(of: "/") else { return nil }
        return (name[..<slash], name[name.index(after: slash)...])
    }

    /// `netapp:NETWORK/SUBJECT` for a network's subject (`network:UUID`, `network:unknown`).
    public static func subject(_ app: String, onNetwork network: String) -> String {
        "netapp:" + network.dropFirst(NetworkSubject.prefix.count) + "/" + app
    }
}
