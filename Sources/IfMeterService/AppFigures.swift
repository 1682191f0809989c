import IfMeterApps
import IfMeterCore
import IfMeterHistory

extension MeterService {
    /// Every application's figures (docs/APPS.md): services, users' applications and the
    /// links' remainders, by subject. Another view of the interfaces' bytes: never added to
    /// them, to networks or to owners.
    public func appFigures() -> [InterfaceFigures] {
        apps.subjects.keys.filter { SubjectKinds.kind(of: $0)?.kind.section == .apps }.sorted().compactMap { appFigures(of: $0) }
    }

    /// Every application's figures on one network (`network:UUID` or `network:unknown`), by
    /// subject (`netapp:UUID/SUBJECT`, docs/APPS.md "By network").
    public func appFigures(onNetwork network: String) -> [InterfaceFigures] {
        let prefix = NetworkAppKind.subject("", onNetwork: network)
        return apps.subjects.keys.filter { $0.hasPrefix(prefix) }.sorted().compactMap { appFigures(of: $0) }
    }

    /// One application's figures; nil for a subject never counted.
    func appFigures(of subject: String) -> InterfaceFigures? {
        guard let since = apps.subjects[subject] else { return nil }
        let kind = SubjectKinds.kind(of: subject)?.kind
        let inner = subject.hasPrefix("netapp:") ? NetworkAppKind.split(subject.dropFirst("netapp:".count))?.subject ?? "" : subject[...]
        let isRemainder = inner.hasPrefix(AppAttribution.remainderPrefix)
        return InterfaceFigures(
            name: subject, interfaceClass: isRemainder ? "remainder" : "application",
            classReason: isRemainder ? "what the link counted that no named application did" : "counted by cgroup",
            kind: kind?.noun ?? "application", total: total(of: subject), since: since, eventsLost: 0,
            present: nil, lastSeen: nil)
    }

    /// Whether applications are counted: the counting map has been read since the start.
    public var countsApps: Bool { apps.reading }
}
