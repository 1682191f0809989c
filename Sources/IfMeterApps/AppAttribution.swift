import IfMeterCore

/// An application's deltas under its subject, in each link's terms, and each link's
/// remainder: what the link's own counters counted that no socket's cgroup did (forwarded
/// traffic, the kernel's own, ARP and ND). What sockets sent that could not be named (a full
/// map counted it by link only, or its cgroup went before it was named) is the link's
/// `remainder:IFACE#unnamed`, labelled so. An interface's applications plus its remainders are
/// its counters (docs/APPS.md, "Exact").
public struct AppAttribution: Sendable, Equatable {
    /// What named applications counted beyond their links' own counters, per link and
    /// counter, to come off the link's next remainders. The program and the link count at
    /// slightly different moments, and a driver may count a GSO packet as several: a remainder
    /// is never negative, so the difference waits here.
    public private(set) var debt: [Int32: Traffic] = [:]

    public init() {}

    /// The subject a remainder of `link` is named by.
    public static func remainderSubject(of link: String) -> String { remainderPrefix + link }

    public static let remainderPrefix = "remainder:"

    /// The subject of what sockets sent and received on `link` that could not be named.
    public static func unnamedSubject(of link: String) -> String { remainderPrefix + link + RemainderKind.unnamedSuffix }

    /// Attributes one ingest's application deltas (`deltas`, the program's terms) and link
    /// deltas (`linkDeltas`, each counted link's own, by ifindex) to subjects.
    ///
    /// - `subject`: a cgroup id's subject, nil when it went before it was named.
    /// - `link`: a counted link of the daemon's namespace by ifindex; nil for links not counted
    ///   (loopback, ignored, gone), whose applications are not counted either.
    /// - `scoped`: each named application's deltas are also counted by the scope their entries
    ///   carry, as `scope:SCOPE/SUBJECT` (docs/SCOPES.md); remainders and the unnamed are not.
    public mutating func attribute(
        _ deltas: [AppCounterDelta], linkDeltas: [MeterDelta], subject: (UInt64) -> String?,
        link: (Int32) -> AppLink?, scoped: Bool = false, bootID: String, at time: Double
    ) -> [MeterDelta] {
        var named: [Int32: Traffic] = [:]
        var out: [MeterDelta] = []
        var bySubject: [SubjectOnLink: (traffic: Traffic, flags: MeterDelta.Flags)] = [:]
        for delta in deltas where delta.key != .lost {
            guard let onLink = link(delta.key.ifindex) else { continue }
            let name = (delta.key.isOverflow ? nil : subject(delta.key.cgroupID)) ?? Self.unnamedSubject(of: onLink.name)
            let traffic = onLink.inLinkTerms(delta.traffic)
            named[onLink.ifindex, default: .zero] += traffic
            let key = SubjectOnLink(subject: name, ifindex: onLink.ifindex)
            let before = bySubject[key] ?? (.zero, [])
            bySubject[key] = (before.traffic + traffic, before.flags.union(delta.flags))
            // The scope goes no further than this: the subject's own figure sums every scope.
            if scoped, !name.hasPrefix(Self.remainderPrefix) {
                let scopedKey = SubjectOnLink(subject: ScopeKind.subject(name, scope: delta.key.scope), ifindex: onLink.ifindex)
                let before = bySubject[scopedKey] ?? (.zero, [])
                bySubject[scopedKey] = (before.traffic + traffic, before.flags.union(delta.flags))
            }
        }
        for (key, value) in bySubject.sorted(by: { ($0.key.subject, $0.key.ifindex) < ($1.key.subject, $1.key.ifindex) }) {
            out.append(MeterDelta(name: key.subject, ifindex: key.ifindex, epoch: Self.epoch(bootID, key.ifindex, time),
                                  traffic: value.traffic, at: time, flags: value.flags))
        }
        var counted: [Int32: (name: String, traffic: Traffic, flags: MeterDelta.Flags)] = [:]
        for delta in linkDeltas where delta.namespace == .own {
            guard let onLink = link(delta.ifindex) else { continue }
            let before = counted[delta.ifindex] ?? (onLink.name, .zero, [])
            counted[delta.ifindex] = (onLink.name, before.traffic + delta.traffic, before.flags.union(delta.flags))
        }
        for ifindex in Set(counted.keys).union(named.keys).sorted() {
            guard let onLink = link(ifindex) else { continue }
            let own = counted[ifindex] ?? (onLink.name, .zero, [])
            let remainder = take(own.traffic, less: named[ifindex] ?? .zero, on: ifindex)
            guard !remainder.isZero else { continue }
            out.append(MeterDelta(name: Self.remainderSubject(of: own.name), ifindex: ifindex,
                                  epoch: Self.epoch(bootID, ifindex, time), traffic: remainder, at: time,
                                  flags: own.flags))
        }
        return out
    }

    /// A link gone: its debt goes with it (a new link with its ifindex starts afresh).
    public mutating func forget(ifindex: Int32) { debt[ifindex] = nil }

    /// `own` less `apps` and less the link's debt, counter by counter, never below zero; what
    /// could not be taken is the new debt.
    private mutating func take(_ own: Traffic, less apps: Traffic, on ifindex: Int32) -> Traffic {
        let owed = (debt[ifindex] ?? .zero) + apps
        var left = Traffic.zero
        var still = Traffic.zero
        func split(_ have: UInt64, _ owe: UInt64) -> (UInt64, UInt64) { have >= owe ? (have - owe, 0) : (0, owe - have) }
        (left.rxBytes, still.rxBytes) = split(own.rxBytes, owed.rxBytes)
        (left.txBytes, still.txBytes) = split(own.txBytes, owed.txBytes)
        (left.rxPackets, still.rxPackets) = split(own.rxPackets, owed.rxPackets)
        (left.txPackets, still.txPackets) = split(own.txPackets, owed.txPackets)
        debt[ifindex] = still.isZero ? nil : still
        return left
    }

    private static func epoch(_ bootID: String, _ ifindex: Int32, _ time: Double) -> Epoch {
        Epoch(bootID: bootID, ifindex: ifindex, since: time)
    }

    private struct SubjectOnLink: Hashable {
        var subject: String
        var ifindex: Int32
    }
}
