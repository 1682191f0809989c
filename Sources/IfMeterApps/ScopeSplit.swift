import IfMeterCore

/// Splits each counted link's deltas by where the packets' far ends were, in the link's own
/// terms (docs/SCOPES.md, "How an interface's split is counted"): `scope:local/IFACE`,
/// `scope:internet/IFACE` and `scope:unknown/IFACE` add up to the link's delta exactly.
///
/// The link's counters decide how much; the interface scope program's map (`link_scopes`)
/// decides how it divides. The two are read at slightly different moments and a driver may
/// count a packet the program does not see (or the other way round), so the program's counts
/// are proportions, not figures:
///
/// - a link covered at the last read and at this one, of the same map: its delta is divided in
///   proportion to the program's deltas, bytes by bytes and packets by packets, by largest
///   remainder, so the three meet the link's delta to the byte; a link that moved while the
///   program counted nothing is all unknown;
/// - otherwise (not covered, attached during the interval, a map made anew, an entry that
///   went back): the program's deltas as counted, each capped at what the link has left, and
///   the rest unknown. What the program did not see is never guessed at.
///
/// The map's first read ever is the baseline, as an interface's first sight is; a map not seen
/// before (a reboot, the program loaded again) counts from zero, as a gap. Like ``AppMeter``,
/// the last read is what a save keeps, so a restart counts what the map counted meanwhile.
public struct ScopeSplit: Sendable, Equatable {
    /// The boot and map ``last`` was read from; nil before the first read.
    public private(set) var bootID: String
    public private(set) var mapID: UInt32?
    /// Every entry as last read: a link with a `local` entry was covered then.
    public private(set) var last: [ScopeCounterKey: Traffic]
    /// Whether ``last`` is the read just before the next: a sample whose map could not be read
    /// breaks the run, and the next read's deltas span more than its links' do.
    public private(set) var continuous: Bool

    /// A split resuming from what a save kept (``saved``); empty for a first start.
    public init(bootID: String, mapID: UInt32? = nil, last: [ScopeCounterKey: Traffic] = [:]) {
        self.bootID = bootID
        self.mapID = mapID
        self.last = last
        continuous = mapID != nil
    }

    /// What a save keeps, to resume from: the boot, the map and its entries as last read (which
    /// links were covered is which have entries).
    public var saved: (bootID: String, mapID: UInt32?, last: [ScopeCounterKey: Traffic]) { (bootID, mapID, last) }

    /// Whether the map was ever read (here or before a restart).
    public var hasRead: Bool { mapID != nil }

    /// One sample: `counts`, the map as read just after the links' counters (nil when it could
    /// not be read: every link's delta is then unknown), split against `linkDeltas`, the same
    /// ingest's deltas of links. `link` names a counted link of the daemon's namespace by
    /// ifindex (nil for loopback, ignored and unknown links, which are not split). `bootID` is
    /// the boot the map was read in, and the deltas' epochs'.
    public mutating func split(
        _ counts: ScopeCounts?, linkDeltas: [MeterDelta], link: (Int32) -> AppLink?, bootID currentBoot: String,
        at time: Double
    ) -> [MeterDelta] {
        var links: [Int32: (name: String, traffic: Traffic, flags: MeterDelta.Flags)] = [:]
        for delta in linkDeltas where delta.namespace == .own {
            guard let onLink = link(delta.ifindex) else { continue }
            let before = links[delta.ifindex] ?? (onLink.name, .zero, [])
            links[delta.ifindex] = (onLink.name, before.traffic + delta.traffic, before.flags.union(delta.flags))
        }
        let program = counts.map { programDeltas($0, bootID: currentBoot) }
        var out: [MeterDelta] = []
        for (ifindex, own) in links.sorted(by: { $0.key < $1.key }) where !own.traffic.isZero {
            let counted = program?[ifindex]
            let shares = counted.map { Self.shares(of: own.traffic, program: $0.traffic, proportional: $0.proportional) }
                ?? [.zero, .zero, own.traffic]
            let flags = own.flags.union(counted?.flags ?? [])
            for (scope, traffic) in zip(TrafficScope.allCases, shares) where !traffic.isZero {
                out.append(MeterDelta(name: ScopeKind.subject(own.name, scope: scope), ifindex: ifindex,
                                      epoch: Epoch(bootID: currentBoot, ifindex: ifindex, since: time),
                                      traffic: traffic, at: time, flags: flags))
            }
        }
        if let counts {
            bootID = currentBoot
            mapID = counts.mapID
            last = counts.counters
            continuous = true
        } else {
            continuous = false
        }
        return out
    }

    /// What the program counted on each link since the last read, by scope (local, internet,
    /// unknown), and whether the link's delta may be divided in its proportions.
    private func programDeltas(_ counts: ScopeCounts, bootID currentBoot: String) -> [Int32: ProgramDelta] {
        // The first read ever is the baseline: what the map counted before is not counted, as
        // the links' traffic of that time is not.
        guard mapID != nil else { return [:] }
        let sameMap = currentBoot == bootID && counts.mapID == mapID
        var byLink: [Int32: ProgramDelta] = [:]
        for (key, now) in counts.counters {
            let before = sameMap ? last[key] : nil
            var entry = byLink[key.ifindex] ?? {
                let covered = sameMap && continuous && last[ScopeCounterKey(ifindex: key.ifindex, scope: .local)] != nil
                    && counts.covers(key.ifindex)
                return ProgramDelta(traffic: Array(repeating: .zero, count: 3), proportional: covered,
                                    flags: sameMap ? [] : .gap)
            }()
            let index = Int(key.scope.rawValue)
            if let before, now.isAtLeast(before) {
                entry.traffic[index] += now.combined(with: before, -)
            } else {
                // Made since the last read (attached meanwhile, or a new map: all of it arrived
                // since), or lower than last read (made again): counted in full, and the link
                // is not divided in proportions this once.
                entry.traffic[index] += now
                if before != nil { entry.flags.insert(.reset) }
                if !now.isZero { entry.proportional = false }
            }
            byLink[key.ifindex] = entry
        }
        return byLink
    }

    /// The program's deltas on one link: local, internet, unknown.
    private struct ProgramDelta {
        var traffic: [Traffic]
        var proportional: Bool
        var flags: MeterDelta.Flags
    }

    /// `own`, a link's delta, split into local, internet and unknown (in that order) by
    /// `program`, the program's deltas in the same order: in proportion, or capped.
    static func shares(of own: Traffic, program: [Traffic], proportional: Bool) -> [Traffic] {
        var out = Array(repeating: Traffic.zero, count: 3)
        let counters: [WritableKeyPath<Traffic, UInt64>] = [\.rxBytes, \.txBytes, \.rxPackets, \.txPackets]
        for counter in counters {
            let weights = program.map { $0[keyPath: counter] }
            let parts = proportional
                ? apportion(own[keyPath: counter], by: weights)
                : capped(own[keyPath: counter], by: weights)
            for index in out.indices { out[index][keyPath: counter] = parts[index] }
        }
        return out
    }

    /// `total` divided in proportion to `weights` by largest remainder: the parts add up to
    /// `total` exactly, and a tie goes to the earlier part. All of it to the last part (unknown)
    /// when the weights are all zero.
    public static func apportion(_ total: UInt64, by weights: [UInt64]) -> [UInt64] {
        var weights = weights
        // Their sum must fit: a sum past 2⁶⁴ (no real interval's) is scaled down, keeping the
        // proportions to 63 bits.
        while weights.reduce((0 as UInt64, false), { sum, weight in
            let (value, overflow) = sum.0.addingReportingOverflow(weight)
            return (value, sum.1 || overflow)
        }).1 {
            weights = weights.map { $0 >> 1 }
        }
        let sum = weights.reduce(0, +)
        guard sum > 0 else { return weights.indices.map { $0 == weights.count - 1 ? total : 0 } }
        var parts: [UInt64] = []
        var remainders: [(remainder: UInt64, index: Int)] = []
        for (index, weight) in weights.enumerated() {
            // total × weight / sum ≤ total: the quotient fits, the product need not.
            let (quotient, remainder) = sum.dividingFullWidth(total.multipliedFullWidth(by: weight))
            parts.append(quotient)
            remainders.append((remainder, index))
        }
        var left = total - parts.reduce(0, +)
        for entry in remainders.sorted(by: { ($0.remainder, -$0.index) > ($1.remainder, -$1.index) }) where left > 0 {
            parts[entry.index] += 1
            left -= 1
        }
        return parts
    }

    /// The program's counts as counted, each capped at what `total` has left after the parts
    /// before it; the rest is the last part's (unknown).
    static func capped(_ total: UInt64, by weights: [UInt64]) -> [UInt64] {
        var left = total
        var parts: [UInt64] = []
        for weight in weights.dropLast() {
            let part = min(weight, left)
            parts.append(part)
            left -= part
        }
        parts.append(left)
        return parts
    }
}
