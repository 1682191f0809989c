import IfMeterApps
import IfMeterCore
import IfMeterHistory

extension MeterService {
    /// Every application's figures (docs/APPS.md): services, users' applications and the
    /// links' remainders, by subject. Another view of the interfaces' bytes: never added to
    /// them, to networks or to owners.
    public func appFigures() -> [InterfaceFigures] {
        apps.subjects.keys.sorted().compactMap { appFigures(of: $0) }
    }

    /// One application's figures; nil for a subject never counted.
    func appFigures(of subject: String) -> InterfaceFigures? {
        guard let since = apps.subjects[subject] else { return nil }
        let kind = SubjectKinds.kind(of: subject)?.kind
        let isRemainder = subject.hasPrefix(AppAttribution.remainderPrefix)
        return InterfaceFigures(
            name: subject, interfaceClass: isRemainder ? "remainder" : "application",
            classReason: isRemainder ? "what the link counted that no named application did" : "counted by cgroup",
            kind: kind?.noun ?? "application", total: total(of: subject), since: since, eventsLost: 0,
            present: nil, lastSeen: nil)
    }

    /// Whether applications are counted: the counting map has been read since the start.
    public var countsApps: Bool { apps.reading }
}
