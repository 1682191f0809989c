import IfMeterCore
import IfMeterService

/// The scope subjects (`scope:SCOPE/SUBJECT`, docs/SCOPES.md) the service has figures of: what
/// `select: "scopes"` answers and `/metrics` exposes. Asked of the service by name — each
/// counted subject's three scopes — so that wherever the service keeps them (with the
/// applications' subjects, or as names with history), a name without figures is simply left
/// out: a subject not split, not an unknown name.
public enum ScopeSubjects {
    /// The scope subjects of `subjects`, in their order, each subject's local, internet, then
    /// unknown.
    public static func figures(_ service: MeterService, of subjects: [String]) -> [InterfaceFigures] {
        let names = subjects.flatMap { subject in TrafficScope.allCases.map { ScopeKind.subject(subject, scope: $0) } }
        let found = Dictionary(service.figures(named: names).map { ($0.name, $0) }) { first, _ in first }
        return names.compactMap { found[$0] }
    }

    /// Every interface's, network's and application's scope subjects in `snapshot` (the
    /// service's), by subject; then any the service keeps of a subject no longer counted.
    public static func figures(_ service: MeterService, in snapshot: MeterSnapshot) -> [InterfaceFigures] {
        // Scope subjects kept as names with history are among the snapshot's interfaces.
        let listed = snapshot.interfaces.filter { SubjectKinds.kind(of: $0.name)?.kind.section == .scopes }
        let counted = snapshot.interfaces.filter { !$0.name.contains(":") && $0.interfaceClass != "ignored" }.map(\.name)
            + snapshot.networks.map(\.subject) + snapshot.apps.map(\.name)
        let ordered = figures(service, of: counted.sorted())
        let placed = Set(ordered.map(\.name))
        return ordered + listed.filter { !placed.contains($0.name) }.sorted { $0.name < $1.name }
    }

    /// ``figures(_:in:)`` of the service's snapshot now.
    public static func figures(_ service: MeterService) -> [InterfaceFigures] {
        figures(service, in: service.snapshot())
    }
}
