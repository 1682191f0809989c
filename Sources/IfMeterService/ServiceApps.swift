import IfMeterApps
import IfMeterCore
import IfMeterHistory

/// The applications' part of the service (docs/APPS.md): the meter of the counting program's
/// map, each cgroup's subject, each link's remainder, and what a save writes of them.
struct ServiceApps: Sendable {
    private(set) var meter: AppMeter
    private(set) var attribution = AppAttribution()
    /// Each counted cgroup's subject; an id with no name here went before it was named, and
    /// its traffic stays in its link's remainder.
    private(set) var names: [UInt64: String]
    /// The state the last save began with: the next writes only what changed since. Nil before
    /// the first save, and after one that failed: the next writes every row.
    private var lastBegun: AppCounterState?
    /// Whether the map has been read since the start: until then a save keeps what was loaded.
    private(set) var reading = false
    /// Every subject with history, with when it was first counted; and those new since the
    /// last save that worked.
    private(set) var subjects: [String: Double]
    private var newSubjects: [String: Double] = [:]
    /// Whether the last ingest counted a subject for the first time.
    private(set) var newSubjectsCounted = false
    /// How many subjects each user's applications have: a user names cgroups at will, and
    /// past ``maximumSubjectsPerUser`` their new ones are counted as `app:UID/other`.
    private var subjectsPerUser: [UInt32: Int] = [:]

    static let scopePrefix = "scope:"

    /// The most subjects one user's applications get (docs/APPS.md, "Hostile users").
    static let maximumSubjectsPerUser = 1000

    init(loaded: AppCounterState?, bootID: String) {
        subjects = loaded?.subjects ?? [:]
        for subject in subjects.keys { if let uid = Self.user(of: subject) { subjectsPerUser[uid, default: 0] += 1 } }
        meter = AppMeter(bootID: loaded?.bootID ?? bootID, mapID: loaded?.mapID, last: loaded?.counters ?? [:])
        names = loaded?.names ?? [:]
        lastBegun = loaded
    }

    /// One read: its deltas under their subjects, in their links' terms, and each link's
    /// remainder against `linkDeltas`, the same ingest's deltas of links. ``newSubjectsCounted``
    /// says whether it counted a subject for the first time (a plan may choose it).
    /// Each delta is also counted on the network its link is on (`networkOf`: a network's
    /// subject, or nil for a link NetworkManager does not manage), as `netapp:NETWORK/SUBJECT`,
    /// and by the scope of its entries, as `scope:SCOPE/SUBJECT` (docs/SCOPES.md).
    mutating func ingest(_ read: AppRead?, linkDeltas: [MeterDelta], link: (Int32) -> AppLink?,
                         networkOf: (Int32) -> String?, bootID: String, at time: Double) -> [MeterDelta] {
        var deltas: [AppCounterDelta] = []
        if let read {
            reading = true
            // In id order, so which of a flood of new names are kept does not depend on hashing.
            var named: [UInt32: Set<String>] = [:]
            for (id, subject) in read.names.sorted(by: { $0.key < $1.key }) { names[id] = capped(subject, named: &named) }
            deltas = meter.apply(read.counts, bootID: bootID)
        }
        var out = attribution.attribute(deltas, linkDeltas: linkDeltas, subject: { [names] in names[$0] }, link: link,
                                        scoped: true, bootID: bootID, at: time)
        for delta in out {
            // An application's scope on a network is not a subject (`scope:` takes an
            // application's or a network's, docs/SCOPES.md).
            guard !delta.name.hasPrefix(Self.scopePrefix), let network = networkOf(delta.ifindex) else { continue }
            var copy = delta
            copy.name = NetworkAppKind.subject(delta.name, onNetwork: network)
            out.append(copy)
        }
        newSubjectsCounted = false
        // A scope's subject has no history of its own to record: it is its application's.
        for delta in out where subjects[delta.name] == nil && !delta.name.hasPrefix(Self.scopePrefix) {
            subjects[delta.name] = time
            newSubjects[delta.name] = time
            newSubjectsCounted = true
            if let uid = Self.user(of: delta.name) { subjectsPerUser[uid, default: 0] += 1 }
        }
        // Names of cgroups whose entries are all gone are not needed again.
        if read?.counts.finals.isEmpty == false || names.count > meter.last.count {
            let counted = Set(meter.last.keys.map(\.cgroupID))
            names = names.filter { counted.contains($0.key) }
        }
        return out
    }

    /// `subject`, or `app:UID/other` when it is new and its user has their fill of subjects,
    /// counting those `named` in the same read.
    private func capped(_ subject: String, named: inout [UInt32: Set<String>]) -> String {
        guard subjects[subject] == nil, let uid = Self.user(of: subject), !named[uid, default: []].contains(subject) else {
            return subject
        }
        guard subjectsPerUser[uid, default: 0] + named[uid, default: []].count < Self.maximumSubjectsPerUser else {
            return AppKind().subject("\(uid)/other")
        }
        named[uid, default: []].insert(subject)
        return subject
    }

    /// The user whose application `subject` is (`app:UID/…`); nil for any other subject.
    static func user(of subject: String) -> UInt32? {
        guard subject.hasPrefix("app:") else { return nil }
        return AppKind.split(subject.dropFirst(4)).map(\.uid)
    }

    /// A link gone, its last deltas attributed: its remainder's debt goes with it.
    mutating func linkGone(ifindex: Int32) { attribution.forget(ifindex: ifindex) }

    /// A sample without a read (the maps could not be read): the links' deltas are their
    /// remainders', so applications and remainders still add up to the links.
    mutating func remainders(of linkDeltas: [MeterDelta], link: (Int32) -> AppLink?, networkOf: (Int32) -> String?,
                             bootID: String, at time: Double) -> [MeterDelta] {
        ingest(nil, linkDeltas: linkDeltas, link: link, networkOf: networkOf, bootID: bootID, at: time)
    }

    /// What a save beginning now writes; nil when nothing changed or the map was never read.
    mutating func beginSave() -> AppCounterWrite? {
        guard reading else { return nil }
        let now = AppCounterState(bootID: meter.bootID, mapID: meter.mapID, counters: meter.last, names: names)
        var write = AppCounterWrite(from: lastBegun, to: now)
        write.subjects = newSubjects
        lastBegun = now
        let changed = write.replaceAll || !write.counters.isEmpty || !write.removedCounters.isEmpty
            || !write.names.isEmpty || !write.removedNames.isEmpty || !write.subjects.isEmpty
        return changed ? write : nil
    }

    /// A save failed: the next writes every row, whatever the saves between wrote.
    mutating func saveFailed() { lastBegun = nil }

    /// Every subject with history, by name: what a plan on applications chooses from.
    var subjectNames: [String] { subjects.keys.sorted() }

    /// A subject's history deleted (`forget`).
    mutating func forget(_ subject: String) {
        if subjects.removeValue(forKey: subject) != nil, let uid = Self.user(of: subject) { subjectsPerUser[uid, default: 1] -= 1 }
        newSubjects[subject] = nil
    }

    /// A save worked: the subjects it recorded are recorded.
    mutating func saved(_ write: AppCounterWrite?) {
        for subject in write?.subjects.keys ?? [String: Double]().keys { newSubjects[subject] = nil }
    }
}
