/// A subject's traffic of one scope, `scope:SCOPE/SUBJECT` (`scope:internet/eth0`,
/// `scope:local/network:UUID`, `scope:unknown/app:1000/firefox`): what an interface, a network
/// or an application sent to and received from local addresses, the internet, or ends not
/// known (docs/SCOPES.md). Another view of its subject's bytes: the three add up to it.
public struct ScopeKind: SubjectKind {
    public init() {}
    public var prefix: String? { "scope" }
    public var form: String { "scope:SCOPE/SUBJECT" }
    public var noun: String { "scope of a subject" }
    public var plural: String { "scopes" }
    public var section: SubjectSection { .scopes }
    /// A plan counts a subject's internet scope instead of it (docs/PLANS.md, `traffic`).
    public var planSelector: PlanSelectorKey { .narrowing("traffic") }

    /// `local`, `internet` or `unknown`, `/`, then an interface's, a network's, a service's,
    /// an application's or a link remainder's subject.
    public func accepts(_ name: Substring) -> Bool {
        guard let (scope, subject) = Self.split(name), TrafficScope(name: scope) != nil,
              let kind = SubjectKinds.kind(of: String(subject))?.kind else { return false }
        return [SubjectSection.interfaces, .networks, .apps].contains(kind.section)
    }

    public func metricLabels(_ name: Substring) -> [(key: String, value: String)] {
        guard let (scope, subject) = Self.split(name),
              let (kind, inner) = SubjectKinds.kind(of: String(subject)) else { return [] }
        return [("scope", String(scope))] + kind.metricLabels(inner)
    }

    public func closingLabel(_ name: Substring) -> EstimateLabel? {
        guard let (scope, subject) = Self.split(name) else { return nil }
        if scope == "unknown" { return .scopeUnknown }
        return SubjectKinds.kind(of: String(subject)).flatMap { $0.kind.closingLabel($0.name) }
    }

    /// The scope and the subject in `name` (`internet`, `eth0`).
    public static func split(_ name: Substring) -> (scope: Substring, subject: Substring)? {
        guard let slash = name.firstIndex(of: "/") else { return nil }
        return (name[..<slash], name[name.index(after: slash)...])
    }

    /// `scope:SCOPE/SUBJECT`.
    public static func subject(_ subject: String, scope: TrafficScope) -> String {
        "scope:" + scope.name + "/" + subject
    }

    /// The scope and the subject of a subject of this kind (`scope:internet/eth0`); nil for
    /// any other.
    public static func parse(_ subject: String) -> (scope: TrafficScope, subject: String)? {
        guard subject.hasPrefix("scope:"), let (scope, inner) = split(subject.dropFirst(6)),
              let value = TrafficScope(name: scope) else { return nil }
        return (value, String(inner))
    }
}
