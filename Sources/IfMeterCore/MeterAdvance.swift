/// One tracked interface's counters moving on: the comparison every sample makes for every
/// link, kept apart from the meter's bookkeeping because it touches nothing but the interface.
extension Meter {
    /// ``MeterRule/advance``, ``MeterRule/backwards``, ``MeterRule/wrap`` and ``MeterRule/implausible`` for one interface moving to `current`.
    /// Touches nothing of the meter but `interface`: at most one delta, the traffic counted.
    static func advance(
        _ interface: inout TrackedInterface, to current: Traffic, at instant: MeterInstant,
        configuration: MeterConfiguration, flags: MeterDelta.Flags = [], judgeRate: Bool = true
    ) -> MeterOutput {
        var output = MeterOutput()
        var flags = flags
        let elapsed = instant.seconds(since: interface.lastInstant)
        let cap = judgeRate ? byteCap(for: interface, elapsed: elapsed, configuration: configuration) : nil
        let step = CounterStep(
            from: interface.last, to: current, is32Bit: interface.countersAre32Bit,
            wrapLimit: Swift.min(cap ?? CounterStep.wrapModulus / 2, CounterStep.wrapModulus / 2))
        var delta = step.delta
        switch step {
        case .advanced:
            break
        case .wrapped(_, let counters):
            flags.insert(.wrapped)
            output.events.append(CounterEvent(
                kind: .wrap, at: instant.wall, interface: interface.name, namespace: interface.namespace,
                ifindex: interface.ifindex, previous: interface.last, current: current, delta: delta,
                detail: "32-bit \(counters.joined(separator: ", ")) wrapped past 2^32"))
        case .reset:
            flags.insert(.reset)
            interface.epoch.generation += 1
            interface.epoch.since = instant.wall
            output.events.append(CounterEvent(
                kind: .reset, at: instant.wall, interface: interface.name, namespace: interface.namespace,
                ifindex: interface.ifindex, previous: interface.last, current: current, delta: delta,
                detail: "counters went backwards with the same ifindex; new epoch, "
                    + "its current values are counted"))
        }
        if let cap, delta.rxBytes > cap || delta.txBytes > cap {
            // Each direction is judged on its own: a glitch in rx says nothing about tx.
            var dropped = Traffic.zero
            if delta.rxBytes > cap {
                (dropped.rxBytes, dropped.rxPackets) = (delta.rxBytes, delta.rxPackets)
                (delta.rxBytes, delta.rxPackets) = (0, 0)
            }
            if delta.txBytes > cap {
                (dropped.txBytes, dropped.txPackets) = (delta.txBytes, delta.txPackets)
                (delta.txBytes, delta.txPackets) = (0, 0)
            }
            flags.insert(.implausibleDropped)
            output.events.append(CounterEvent(
                kind: .implausible, at: instant.wall, interface: interface.name,
                namespace: interface.namespace, ifindex: interface.ifindex, previous: interface.last, current: current,
                delta: dropped,
                detail: "more than \(cap) bytes in \(Int(elapsed.rounded())) s is beyond this link; "
                    + "left out of the totals"))
        }
        interface.last = current
        interface.lastInstant = instant
        if !delta.isZero || !flags.isEmpty {
            output.deltas.append(MeterDelta(
                name: interface.name, namespace: interface.namespace, ifindex: interface.ifindex, epoch: interface.epoch,
                traffic: delta, at: instant.wall, flags: flags))
        }
        return output
    }

    /// ``MeterRule/implausible``: the most bytes per direction this interface could plausibly have moved in
    /// `elapsed` seconds, or nil when nothing bounds it. tun devices report a fake 10 Mbit/s,
    /// so their speed is never used.
    static func byteCap(
        for interface: TrackedInterface, elapsed: Double, configuration: MeterConfiguration
    ) -> UInt64? {
        let window = Swift.max(elapsed, configuration.minimumCapWindowSeconds)
        var cap: Double?
        if interface.kind != "tun", let speed = interface.speedBitsPerSecond, speed > 0 {
            cap = Double(speed) / 8 * window * configuration.speedMargin
        }
        if let maximum = configuration.maxBytesPerSecond {
            cap = Swift.min(cap ?? .infinity, Double(maximum) * window)
        }
        return cap.map { $0 >= 1.8e19 ? UInt64.max : UInt64($0) }
    }
}
