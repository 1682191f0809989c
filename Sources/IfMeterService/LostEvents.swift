/// Every `events-lost` moment, by whose figures it may have hidden traffic from: everyone's,
/// when the daemon's own link events were lost; one subject's (`container:web`), when the
/// socket that hears other namespaces lost messages as that owner's link went; or a metered
/// namespace's (`netns:vpn/`, every subject named under it), when that namespace's feed lost
/// its own. So a tenant that floods its namespace labels what it can have hidden, and nobody
/// else's figures.
///
/// The scope is the `interface` of the stored `events-lost` event: none for everyone, a
/// subject's name, or a prefix ending in `/`.
public struct LostEvents: Hashable, Sendable {
    /// Losses that concern every figure.
    public private(set) var everyone = LostEventTimes()
    /// Losses that concern one subject, or every subject under a prefix ending in `/`.
    private var scoped: [String: LostEventTimes] = [:]

    /// Losses at `moments` (stored events, each a run's first loss), in any order.
    public init(_ moments: [(at: Double, scope: String?)] = []) {
        for moment in moments.sorted(by: { $0.at < $1.at }) { record(moment.at, scope: moment.scope) }
    }

    /// Whether some loss concerns only some figures.
    public var hasScoped: Bool { !scoped.isEmpty }

    /// Every loss recorded, whoever it concerns.
    public var total: Int { scoped.values.reduce(everyone.total) { $0 + $1.total } }

    /// Records a loss at `time` concerning `scope` (nil: everyone); true when it begins a run
    /// (store it as an event), false when it joined one (``LostEventTimes/record(_:)``).
    @discardableResult
    public mutating func record(_ time: Double, scope: String?) -> Bool {
        guard let scope else { return everyone.record(time) }
        return scoped[scope, default: LostEventTimes()].record(time)
    }

    /// Losses in runs overlapping `[from, to)` that concern `subject`'s figures.
    public func count(from: Double, to: Double, for subject: String) -> Int {
        var count = everyone.count(from: from, to: to)
        guard !scoped.isEmpty else { return count }
        count += scoped[subject]?.count(from: from, to: to) ?? 0
        if let slash = subject.firstIndex(of: "/") {
            count += scoped[String(subject[...slash])]?.count(from: from, to: to) ?? 0
        }
        return count
    }

    /// Losses in runs overlapping `[from, to)` that concern a sum of `subjects` (a plan's
    /// members, a class's total): everyone's, and each member's own.
    public func count(from: Double, to: Double, forAny subjects: some Sequence<String>) -> Int {
        guard !scoped.isEmpty else { return everyone.count(from: from, to: to) }
        var scopes: Set<String> = []
        for subject in subjects {
            if scoped[subject] != nil { scopes.insert(subject) }
            if let slash = subject.firstIndex(of: "/"), scoped[String(subject[...slash])] != nil {
                scopes.insert(String(subject[...slash]))
            }
        }
        return scopes.reduce(everyone.count(from: from, to: to)) { $0 + scoped[$1]!.count(from: from, to: to) }
    }
}
