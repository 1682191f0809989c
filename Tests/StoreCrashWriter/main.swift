// A child process for the store's crash test: resumes from the database, then saves in a tight
// loop until it is killed. Kernel counters are simulated: interface i's rx counter is
// `base + step × (i + 1) × 1000`, and the step continues from what the database saved, as a
// real kernel's counters continue across a daemon restart.
// usage: store-crash-writer DATABASE INTERFACES
import IfMeterCore
import IfMeterHistory
import IfMeterStore
#if canImport(Glibc)
import Glibc
#endif

let arguments = CommandLine.arguments
guard arguments.count == 3, let interfaceCount = Int(arguments[2]) else {
    print("usage: store-crash-writer DATABASE INTERFACES")
    exit(64)
}
let base: UInt64 = 1_000_000

func counters(_ index: Int, step: UInt64) -> Traffic {
    Traffic(rxBytes: base + step * UInt64(index + 1) * 1000, txBytes: base + step * 7,
            rxPackets: step, txPackets: step * 2)
}

do {
    let store = try Store(path: arguments[1])
    let (state, names) = try store.loader.meter()
    // Where the previous writer's saved counters were, so the simulated kernel moves on from there.
    let savedStep = state?.interfaces.first { $0.name == "if0" }.map { ($0.last.rxBytes - base) / 1000 } ?? 0
    var meter = Meter(bootID: "crash-test-boot", restoring: state, knownNames: names)
    var pending = PendingWrites()
    var clock = 1_800_000_000.0 + Double(savedStep) * 10
    func instant() -> MeterInstant { MeterInstant(wall: clock, sinceBootNanoseconds: UInt64(clock * 1e9)) }
    var step = savedStep + 1
    let links = (0..<interfaceCount).map { index in
        Link(ifindex: Int32(index + 2), name: "if\(index)", kind: "veth", arpType: ARPHRD.ether,
             counters: LinkCounters(rxBytes: counters(index, step: step).rxBytes,
                                    txBytes: counters(index, step: step).txBytes,
                                    rxPackets: counters(index, step: step).rxPackets,
                                    txPackets: counters(index, step: step).txPackets))
    }
    // A fresh database baselines at `base` (step 0) so totals = last − base throughout.
    let startLinks = state == nil
        ? links.map { var link = $0; link.counters = LinkCounters(rxBytes: base, txBytes: base); return link }
        : links
    pending.add(meter.start(links: startLinks, at: instant()), calendar: store.configuration.calendar,
                monthStartDay: { _ in 1 })
    while true {
        clock += 10
        let readings = (0..<interfaceCount).map { index in
            let value = counters(index, step: step)
            return CounterReading(ifindex: Int32(index + 2), counters: LinkCounters(
                rxBytes: value.rxBytes, txBytes: value.txBytes, rxPackets: value.rxPackets,
                txPackets: value.txPackets))
        }
        pending.add(meter.apply(sample: readings, at: instant()), calendar: store.configuration.calendar,
                    monthStartDay: { _ in 1 })
        pending.setMeterState(meter.exportState())
        try store.writer.save(&pending)
        if step % 16 == 0 { try store.retention.prune(now: Int64(clock)) }
        // One write(2) per line, unbuffered: the parent must see each save as soon as it is done.
        var line = "saved \(step)\n"
        line.withUTF8 { _ = write(STDOUT_FILENO, $0.baseAddress, $0.count) }
        step += 1
    }
} catch {
    print("error: \(error)")
    exit(1)
}
