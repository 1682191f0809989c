// Writes a known history into a new database through the real meter and store, for the CLI's
// golden tests: eth0 (ethernet) and wwan0 (cellular) sampled hourly from 2026-02-26 22:00 UTC
// to 2026-03-31 07:00 UTC, across the Europe/Berlin DST change (2026-03-29 is a 23-hour day
// there), with a six-hour gap on 2026-03-20 (the daemon stopped, then resumed in the same boot)
// and a counter reset of wwan0 on 2026-03-30 at 10:00 UTC. Buckets are cut in the local zone
// (run it with TZ set). Traffic per hour h: eth0 rx (h mod 7 + 1) × 3 MiB, tx (h mod 3 + 1) ×
// 512 KiB; wwan0 rx (h mod 5) × 10 MiB, tx 2 MiB.
// usage: history-seeder DATABASE
import IfMeterCore
import IfMeterHistory
import IfMeterStore
#if canImport(Glibc)
import Glibc
#endif

let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    print("usage: history-seeder DATABASE")
    exit(64)
}

let mebibyte: UInt64 = 1 << 20
let start = 1_772_143_200.0  // 2026-02-26 22:00 UTC
let end = 1_774_940_400.0  // 2026-03-31 07:00 UTC
let gap = (from: 1_773_986_400.0, to: 1_774_008_000.0)  // 2026-03-20 06:00 to 12:00 UTC
let reset = 1_774_864_800.0  // 2026-03-30 10:00 UTC

func instant(_ wall: Double) -> MeterInstant {
    MeterInstant(wall: wall, sinceBootNanoseconds: UInt64((wall - start + 3600) * 1e9))
}

/// The simulated kernel counters of both links after `hours` hours.
func counters(after hours: Int, resetAt resetHour: Int) -> (eth0: Traffic, wwan0: Traffic) {
    var eth0 = Traffic(rxBytes: 10 * mebibyte, txBytes: mebibyte, rxPackets: 1000, txPackets: 100)
    var wwan0 = Traffic(rxBytes: 0, txBytes: 0, rxPackets: 0, txPackets: 0)
    for hour in 1...max(1, hours) where hours > 0 {
        eth0.rxBytes += UInt64(hour % 7 + 1) * 3 * mebibyte
        eth0.txBytes += UInt64(hour % 3 + 1) * 512 * 1024
        eth0.rxPackets += 2000
        eth0.txPackets += 500
        if hour == resetHour {
            // The modem's driver reset its counters: what it counted since is all that is left.
            wwan0 = Traffic(rxBytes: 5 * mebibyte, txBytes: mebibyte, rxPackets: 50, txPackets: 10)
        } else {
            wwan0.rxBytes += UInt64(hour % 5) * 10 * mebibyte
            wwan0.txBytes += 2 * mebibyte
            wwan0.rxPackets += 100
            wwan0.txPackets += 30
        }
    }
    return (eth0, wwan0)
}

func link(_ name: String, _ ifindex: Int32, _ traffic: Traffic) -> Link {
    Link(ifindex: ifindex, name: name, kind: "", arpType: ARPHRD.ether,
         counters: LinkCounters(rxBytes: traffic.rxBytes, txBytes: traffic.txBytes,
                                rxPackets: traffic.rxPackets, txPackets: traffic.txPackets))
}

do {
    let store = try Store(path: arguments[1])
    var pending = PendingWrites()
    let calendar = store.configuration.calendar
    let resetHour = Int((reset - start) / 3600)
    func take(_ output: MeterOutput, at wall: Double) {
        pending.add(output, calendar: calendar, monthStartDay: store.configuration.monthStartDay(for:))
        pending.note(InterfaceRecord(name: "eth0", interfaceClass: "ethernet", kind: "", mac: "52:54:00:00:00:01", lastSeen: wall))
        pending.note(InterfaceRecord(name: "wwan0", interfaceClass: "cellular", kind: "", mac: "", lastSeen: wall))
    }
    var meter = Meter(bootID: "seed-boot", restoring: nil, knownNames: [:])
    let first = counters(after: 0, resetAt: resetHour)
    take(meter.start(links: [link("eth0", 2, first.eth0), link("wwan0", 3, first.wwan0)], at: instant(start)), at: start)
    try store.writer.save(&pending)
    var wall = start + 3600
    while wall <= end {
        let now = counters(after: Int((wall - start) / 3600), resetAt: resetHour)
        if wall > gap.from && wall < gap.to {
            wall += 3600
            continue
        }
        if wall == gap.to {
            // The daemon was stopped at gap.from and starts again now, resuming its saved state.
            try store.writer.save(&pending)
            meter = Meter(bootID: "seed-boot", restoring: meter.exportState(),
                          knownNames: meter.firstSeen.dictionary)
            take(meter.start(links: [link("eth0", 2, now.eth0), link("wwan0", 3, now.wwan0)], at: instant(wall)), at: wall)
        } else {
            take(meter.apply(sample: [
                CounterReading(ifindex: 2, counters: LinkCounters(rxBytes: now.eth0.rxBytes, txBytes: now.eth0.txBytes,
                                                                  rxPackets: now.eth0.rxPackets, txPackets: now.eth0.txPackets)),
                CounterReading(ifindex: 3, counters: LinkCounters(rxBytes: now.wwan0.rxBytes, txBytes: now.wwan0.txBytes,
                                                                  rxPackets: now.wwan0.rxPackets, txPackets: now.wwan0.txPackets)),
            ], at: instant(wall)), at: wall)
        }
        // The daemon saves every minute; once a day is enough to exercise the same path here.
        if Int((wall - start) / 3600) % 24 == 0 { try store.writer.save(&pending) }
        wall += 3600
    }
    try store.writer.save(&pending)
} catch {
    print("history-seeder: \(error)")
    exit(1)
}
