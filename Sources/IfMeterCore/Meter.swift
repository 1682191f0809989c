/// Turns raw kernel counters, which reset, into deltas that add up, and says what happened
/// (docs/METER.md).
///
/// A plain value: feed it the start dump, then link events and samples in the order the kernel
/// produced them (events already queued before a sample first), each with the instant it was
/// read; collect the ``MeterOutput`` each call returns. Time and boot id are injected, so every
/// rule is testable with made-up values.
///
/// States: ``Phase/awaitingStart`` until ``start(links:at:)`` has seen the first full dump
/// (samples and events before it are ignored: there is nothing to compare them to), then
/// ``Phase/running``.
public struct Meter: Sendable {
    public enum Phase: Hashable, Sendable {
        case awaitingStart
        case running
    }

    public private(set) var phase: Phase = .awaitingStart
    public let bootID: String
    public var configuration: MeterConfiguration
    /// The interfaces being counted, by ifindex.
    public private(set) var tracked = SlotTable<TrackedInterface>()
    /// Names with history and when their counting began (dense: a dictionary keeps twice as
    /// many slots as names).
    public private(set) var firstSeen: DenseTable<String, Double>
    public private(set) var rates = SlotTable<Rate>()
    private var restored: MeterState?
    private var lastInstant: MeterInstant?

    /// - Parameters:
    ///   - restoring: the state exported before the last shutdown or save, if any.
    ///   - knownNames: names the history store has, with when counting began; merged with the
    ///     restored state's. A name in neither is seen for the first time.
    public init(
        bootID: String, configuration: MeterConfiguration = MeterConfiguration(),
        restoring: MeterState? = nil, knownNames: [String: Double] = [:]
    ) {
        self.bootID = bootID
        self.configuration = configuration
        self.restored = restoring
        var firstSeen = DenseTable(knownNames)
        for (name, since) in restoring?.firstSeen ?? [:] {
            firstSeen[name] = firstSeen[name].map { Swift.min($0, since) } ?? since
        }
        self.firstSeen = firstSeen
    }

    /// Rule 2 (``MeterRule/reboot``): the restored epochs resume only in the boot they were
    /// saved in; after a reboot they all close at their saved values.
    private mutating func resumableEpochs(
        of restored: MeterState, at instant: MeterInstant
    ) -> ([LinkKey: TrackedInterface], MeterOutput) {
        guard restored.bootID == bootID else {
            return ([:], MeterOutput(events: [CounterEvent(
                kind: .reboot, at: instant.wall,
                detail: "boot id changed from \(restored.bootID) to \(bootID); "
                    + "\(restored.interfaces.count) epoch(s) closed at their last saved values")]))
        }
        lastInstant = restored.lastInstant
        return (Dictionary(restored.interfaces.map { ($0.key, $0) }) { first, _ in first }, MeterOutput())
    }

    /// `name`'s history was deleted: a link counted under it now has counted since `wall`; a
    /// name no link has is one never seen, first sight again if it returns at a daemon start.
    public mutating func forgetHistory(of name: String, at wall: Double) {
        firstSeen[name] = tracked.values.contains { $0.name == name } ? wall : nil
    }

    /// The state to persist with the totals, so a restart in this boot loses nothing.
    public func exportState() -> MeterState {
        // The tracked array itself, shared until the meter next changes it: a save usually ends
        // before that, and a copy would be a link's state again for every save.
        MeterState(bootID: bootID, interfaces: tracked.values, firstSeen: firstSeen, lastInstant: lastInstant)
    }

    // MARK: Inputs

    /// The first full dump after the daemon starts: resumes restored epochs (``MeterRule/reboot``,
    /// ``MeterRule/recreated``, ``MeterRule/resume``, ``MeterRule/rename``) and baselines new
    /// names (``MeterRule/firstSight``).
    public mutating func start(links: [Link], at instant: MeterInstant) -> MeterOutput {
        guard phase == .awaitingStart else { return resync(links: links, at: instant) }
        phase = .running
        var (resumable, output) = restored.map { resumableEpochs(of: $0, at: instant) } ?? ([:], MeterOutput())
        output += checkClock(instant)
        output.events.reserveCapacity(output.events.count + links.count)
        self.restored = nil
        let present = Set(links.map(\.key))
        let resumableNames = Set(resumable.values.map(\.name))
        // In key order, through sorted positions: sorting the links would copy every one.
        for link in links.indices.sorted(by: { links[$0].key < links[$1].key }).lazy.map({ links[$0] }) {
            guard let counters = link.counters else { continue }
            let current = Traffic(counters)
            if var interface = resumable[link.key] {
                output += resume(&interface, link: link, current: current, at: instant)
            } else if firstSeen[link.name] != nil {
                let replaces = resumableNames.contains(link.name)
                    && !resumable.values.contains { $0.name == link.name && present.contains($0.key) }
                output += countFromZero(link, current: current, at: instant,
                                        why: newEpoch(of: link, replacing: replaces, whileDown: true))
            } else {
                output += baseline(link, current: current, at: instant)
            }
        }
        for interface in resumable.values.sorted(by: { $0.key < $1.key })
        where !present.contains(interface.key) {
            output.events.append(CounterEvent(
                kind: .vanished, at: instant.wall, interface: interface.name,
                namespace: interface.namespace, ifindex: interface.ifindex, previous: interface.last,
                detail: "gone while the daemon was down; counted up to its last saved values"))
        }
        return output
    }

    /// A full dump of `namespace` after its event socket overflowed: links the meter missed
    /// appearing count from zero, links of that namespace missing from the dump are closed at
    /// their last values, the rest advance.
    public mutating func resync(links: [Link], of namespace: NamespaceID = .own, at instant: MeterInstant) -> MeterOutput {
        guard phase == .running else { return start(links: links, at: instant) }
        var output = checkClock(instant)
        let present = Set(links.map(\.key))
        for interface in tracked.values.sorted(by: { $0.key < $1.key })
        where interface.namespace == namespace && !present.contains(interface.key) {
            output += vanish(interface.key, at: instant, detail: "missing from a full dump")
        }
        for link in links.sorted(by: { $0.key < $1.key }) {
            output += observe(link, at: instant, from: .dump)
        }
        return output
    }

    /// One `RTNLGRP_LINK` message, with its own counters.
    public mutating func apply(_ event: LinkEvent, at instant: MeterInstant) -> MeterOutput {
        guard phase == .running else { return MeterOutput() }
        var output = checkClock(instant)
        switch event {
        case .newOrChanged(let link):
            output += observe(link, at: instant, from: .event)
        case .deleted(let link):
            output += delete(link, at: instant)
        }
        return output
    }

    /// A counters-only dump. Readings for ifindexes the meter does not track are skipped: their
    /// metadata (and so their counting) arrives with their link event.
    public mutating func apply(sample readings: [CounterReading], at instant: MeterInstant) -> MeterOutput {
        guard phase == .running else { return MeterOutput() }
        var output = checkClock(instant)
        let smoothing = configuration.rateSmoothingSeconds
        // In place, one index lookup per table: this runs for every link every interval, and
        // copying each epoch out and back (strings retained and released) was most of its cost.
        for reading in readings {
            guard let position = tracked.position(of: reading.key) else { continue }
            let step = Self.advance(&tracked[position: position], to: Traffic(reading.counters), at: instant,
                                    configuration: configuration)
            rates[reading.key, default: Rate(startingAt: instant, smoothingSeconds: smoothing)]
                .close(adding: step.deltas.last?.traffic ?? .zero, at: instant)
            output += step
        }
        return output
    }

    // MARK: Rules

    /// Where an observed link's counters come from, which decides whether they may go back.
    private enum Observation {
        /// A full dump: read now, so counters below the last applied are a reset (rule 5).
        case dump
        /// A link event: the kernel may have queued it after a sample read the queued events
        /// and before that sample's dump ran, so it is read after newer counters were applied.
        /// Counters below the last applied are that older reading, never a reset: the next
        /// dump decides (a genuine reset is still below the last applied then).
        case event
    }

    /// A link in an event or resync dump: advance a tracked one (renaming it if its name
    /// changed), or start counting a new one from zero.
    private mutating func observe(_ link: Link, at instant: MeterInstant, from source: Observation) -> MeterOutput {
        guard let counters = link.counters else { return MeterOutput() }
        var current = Traffic(counters)
        guard var interface = tracked[link.key] else {
            var output = MeterOutput()
            // Same name on another ifindex: its deletion was never announced (``MeterRule/recreated``).
            let stale = tracked.values.filter { $0.name == link.name && $0.namespace == link.namespace }.map(\.key).sorted()
            for key in stale {
                output += vanish(key, at: instant, detail: "replaced by ifindex \(link.ifindex)")
            }
            output += countFromZero(link, current: current, at: instant,
                                    why: newEpoch(of: link, replacing: !stale.isEmpty, whileDown: false))
            return output
        }
        current = Self.holdingVethReceive(current, of: link, last: interface.last)
        let older = source == .event && !current.isAtLeast(interface.last)
        var output = older ? MeterOutput() : advance(&interface, to: current, at: instant)
        output += adopt(link, into: &interface, at: instant)
        return output
    }

    /// Takes the link's current metadata into the tracked epoch (a new name is ``MeterRule/rename``) and
    /// stores it.
    private mutating func adopt(
        _ link: Link, into interface: inout TrackedInterface, at instant: MeterInstant
    ) -> MeterOutput {
        interface.kind = link.kind
        interface.speedBitsPerSecond = link.speedBitsPerSecond
        let output = interface.name == link.name
            ? MeterOutput() : rename(&interface, to: link.name, at: instant)
        tracked[link.key] = interface
        return output
    }

    /// The exception to rule 5 (``MeterRule/backwards``): a veth reads its rx through its
    /// peer. Once the peer is gone (IFLA_LINK 0, just before this end is deleted too) rx reads
    /// 0 — not a reset, so rx is held at its last value; tx for a link counted from its
    /// owner's point of view (``Link/owner``), whose counters are turned round.
    static func holdingVethReceive(_ current: Traffic, of link: Link, last: Traffic) -> Traffic {
        guard link.kind == "veth" && link.parent == nil else { return current }
        var held = current
        if link.owner != nil {
            held.txBytes = Swift.max(current.txBytes, last.txBytes)
            held.txPackets = Swift.max(current.txPackets, last.txPackets)
        } else {
            held.rxBytes = Swift.max(current.rxBytes, last.rxBytes)
            held.rxPackets = Swift.max(current.rxPackets, last.rxPackets)
        }
        return held
    }

    /// Rules 0′ and 3 (``MeterRule/countFromZero``, ``MeterRule/recreated``): why a link is
    /// counted from zero — the one place `recreated`, `epoch-started` and `appeared` are chosen.
    /// - Parameters:
    ///   - replacing: an epoch of the same name on another ifindex closes for it.
    ///   - whileDown: decided at daemon start, about what happened while it was down.
    private func newEpoch(of link: Link, replacing: Bool, whileDown: Bool) -> (kind: CounterEvent.Kind, detail: String) {
        // A container's link says whose it is: its start, a restart, its return.
        if let owner = link.owner {
            let whose = "\(owner.kind.rawValue) \(owner.kind.noun) \(owner.name) (\(owner.id.prefix(12)))"
            if replacing || firstSeen[link.name] != nil {
                return (replacing ? .recreated : .epochStarted, "\(whose) started again"
                    + (whileDown ? " while the daemon was down" : "") + ", via \(owner.alias) (ifindex \(link.ifindex)); counted from zero")
            }
            return (.appeared, "\(whose) appeared via \(owner.alias); counted from zero")
        }
        if replacing {
            return (.recreated, whileDown
                ? "came back with ifindex \(link.ifindex) while the daemon was down; counted from zero"
                : "re-created with ifindex \(link.ifindex); counted from zero")
        }
        if firstSeen[link.name] != nil {
            return (.epochStarted, "new epoch (ifindex \(link.ifindex)) for a name with history; counted from zero")
        }
        return (.appeared, "appeared while the daemon runs; counted from zero")
    }

    /// ``MeterRule/firstSight``: at daemon start, a never-seen name's counters are the baseline.
    private mutating func baseline(_ link: Link, current: Traffic, at instant: MeterInstant) -> MeterOutput {
        firstSeen[link.name] = instant.wall
        track(link, last: current, at: instant)
        return MeterOutput(events: [CounterEvent(
            kind: .firstSight, at: instant.wall, interface: link.name, namespace: link.namespace, ifindex: link.ifindex,
            current: current,
            detail: "first seen at daemon start; traffic before now is not counted")])
    }

    /// ``MeterRule/countFromZero`` (after ``MeterRule/reboot`` and ``MeterRule/recreated`` too): a new epoch whose whole counters are traffic ifmeter has not counted.
    private mutating func countFromZero(
        _ link: Link, current: Traffic, at instant: MeterInstant, why: (kind: CounterEvent.Kind, detail: String)
    ) -> MeterOutput {
        let (kind, detail) = why
        // A later epoch of a name with history restarts its counters; a brand-new name starts.
        let flags: MeterDelta.Flags = kind == .appeared ? [] : .reset
        if firstSeen[link.name] == nil { firstSeen[link.name] = instant.wall }
        track(link, last: .zero, at: instant)
        var interface = tracked[link.key]!
        var output = MeterOutput(events: [CounterEvent(
            kind: kind, at: instant.wall, interface: link.name, namespace: link.namespace, ifindex: link.ifindex,
            current: current, detail: detail)])
        // The counters cover an unknown time since creation, so no rate cap can judge them.
        output += advance(&interface, to: current, at: instant, flags: flags, judgeRate: false)
        tracked[link.key] = interface
        return output
    }

    /// ``MeterRule/resume`` (same boot, same ifindex, saved values): count everything since the save,
    /// attributed to now; then ``MeterRule/rename`` if the name changed while the daemon was down.
    private mutating func resume(
        _ interface: inout TrackedInterface, link: Link, current: Traffic, at instant: MeterInstant
    ) -> MeterOutput {
        let downSeconds = instant.wall - interface.lastInstant.wall
        let saved = interface.last
        rates[link.key] = Rate(startingAt: instant, smoothingSeconds: configuration.rateSmoothingSeconds)
        var output = advance(&interface, to: current, at: instant, flags: .gap)
        let counted = output.deltas.last { $0.flags.contains(.gap) }?.traffic ?? .zero
        output.events.insert(CounterEvent(
            kind: .gap, at: instant.wall, interface: interface.name, namespace: interface.namespace, ifindex: interface.ifindex,
            previous: saved, current: current, delta: counted,
            detail: "resumed after \(Int(downSeconds.rounded())) s without sampling; "
                + "traffic since the last save is counted now"), at: 0)
        output += adopt(link, into: &interface, at: instant)
        return output
    }

    /// ``MeterRule/rename``: the epoch continues under the new name; what was counted so far stays with the
    /// old one.
    private mutating func rename(
        _ interface: inout TrackedInterface, to name: String, at instant: MeterInstant
    ) -> MeterOutput {
        let old = interface.name
        interface.name = name
        if firstSeen[name] == nil { firstSeen[name] = instant.wall }
        return MeterOutput(events: [CounterEvent(
            kind: .rename, at: instant.wall, interface: name, namespace: interface.namespace, ifindex: interface.ifindex,
            current: interface.last, detail: "renamed from \(old) to \(name); the epoch continues")])
    }

    /// ``MeterRule/deleted``: final = the larger of the last poll and the message, per counter (a veth whose
    /// peer is gone reports rx 0 in its delete message).
    private mutating func delete(_ link: Link, at instant: MeterInstant) -> MeterOutput {
        guard var interface = tracked[link.key] else { return MeterOutput() }
        let message = link.counters.map(Traffic.init) ?? .zero
        let polled = interface.last
        var output = advance(&interface, to: Traffic.max(polled, message), at: instant, flags: .final)
        output.events.append(CounterEvent(
            kind: .deleted, at: instant.wall, interface: interface.name, namespace: interface.namespace,
            ifindex: interface.ifindex, previous: polled, current: message, delta: output.deltas.last?.traffic ?? .zero,
            detail: "deleted; counted up to its final counters (the larger of the last poll "
                + "and the delete message, per counter)"))
        tracked[link.key] = nil
        rates[link.key] = nil
        return output
    }

    /// ``MeterRule/recreated``: an ifindex that disappeared without a delete message closes at its last values.
    private mutating func vanish(_ key: LinkKey, at instant: MeterInstant, detail: String) -> MeterOutput {
        guard let interface = tracked.removeValue(forKey: key) else { return MeterOutput() }
        rates[key] = nil
        return MeterOutput(events: [CounterEvent(
            kind: .vanished, at: instant.wall, interface: interface.name, namespace: key.namespace, ifindex: key.ifindex,
            previous: interface.last,
            detail: "\(detail); closed at its last known counters")])
    }

    /// ``advance(_:to:at:configuration:flags:judgeRate:)``, its traffic added to the interface's rate.
    private mutating func advance(
        _ interface: inout TrackedInterface, to current: Traffic, at instant: MeterInstant,
        flags: MeterDelta.Flags = [], judgeRate: Bool = true
    ) -> MeterOutput {
        let output = Self.advance(&interface, to: current, at: instant, configuration: configuration,
                                  flags: flags, judgeRate: judgeRate)
        let smoothing = configuration.rateSmoothingSeconds
        rates[interface.key, default: Rate(startingAt: instant, smoothingSeconds: smoothing)]
            .add(output.deltas.last?.traffic ?? .zero)
        return output
    }

    private mutating func track(_ link: Link, last: Traffic, at instant: MeterInstant) {
        tracked[link.key] = TrackedInterface(
            name: link.name, namespace: link.namespace, ifindex: link.ifindex, kind: link.kind,
            epoch: Epoch(bootID: bootID, ifindex: link.ifindex, since: instant.wall),
            last: last, lastInstant: instant, countersAre32Bit: link.countersAre32Bit,
            speedBitsPerSecond: link.speedBitsPerSecond)
        rates[link.key] = Rate(startingAt: instant, smoothingSeconds: configuration.rateSmoothingSeconds)
    }

    /// ``MeterRule/clockJump``: wall time that moved differently from boot time is a clock jump. Buckets
    /// follow wall time, so the event explains an odd-looking bucket.
    private mutating func checkClock(_ instant: MeterInstant) -> MeterOutput {
        defer { lastInstant = instant }
        guard let last = lastInstant else { return MeterOutput() }
        let wall = instant.wall - last.wall
        let elapsed = instant.seconds(since: last)
        guard abs(wall - elapsed) > configuration.clockJumpThresholdSeconds else { return MeterOutput() }
        return MeterOutput(events: [CounterEvent(
            kind: .clockJump, at: instant.wall,
            detail: "wall clock moved \(Int(wall.rounded())) s while \(Int(elapsed.rounded())) s passed")])
    }
}
