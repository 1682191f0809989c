import IfMeterCore
import IfMeterHistory
import IfMeterKernel
import IfMeterService

/// What networks (docs/NETWORKS.md) add to a sample, in one run: a sample is the kernel's
/// `RTM_GETSTATS` dump of the namespace's links (run where scripts/bench made `links` of them;
/// elsewhere the dump is left out and the share overstated) and the service's ingest of `links`
/// busy links, with a save every other sample; once with `devices` of the links on networks
/// that NetworkManager reported (and `known` networks seen before, as a laptop that has joined
/// a thousand), switching network every tenth sample, and once with none.
func networkBenchmark(links count: Int = 1000, devices: Int = 8, known: Int = 1000, rounds: Int = 500) throws {
    let names = (0..<count).map { index in "l" + String(String(index + 10000).suffix(4)) }
    var without = NetworkRun(names: names, devices: 0, known: 0)
    var with = NetworkRun(names: names, devices: devices, known: known)
    let socket = try NetlinkSocket()
    let dumped = try socket.dumpCounters().count
    let dump: () throws -> Void = dumped >= count ? { _ = try socket.dumpCounters() } : {}
    for round in 1...rounds {
        if round % 2 == 0 {
            try without.step(round, dump: dump)
            try with.step(round, dump: dump)
        } else {
            try with.step(round, dump: dump)
            try without.step(round, dump: dump)
        }
    }
    try with.check(rounds: rounds)
    try without.check(rounds: rounds)
    let base = median(without.samples)
    let differences = zip(with.samples, without.samples).map { Int64(bitPattern: $0 &- $1) }.sorted()
    let added = Double(differences[differences.count / 2])
    print("networks: \(devices) of \(count) links on networks, \(known) networks known, a switch every 10th sample, \(rounds) samples, "
        + (dumped >= count ? "each a dump of \(dumped) links and the ingest: " : "ingest only (no \(count) links here to dump): ")
        + "sample median \(Int(base / 1000)) µs without networks; networks add \(Int(added / 1000)) µs "
        + "(median of the differences by round) = \(ratio(base + added, base))")
}

/// One service and its samples, in nanoseconds: each sample's ingest, and the report of
/// NetworkManager's state that follows a switch.
private struct NetworkRun {
    let names: [String]
    let devices: Int
    var service: MeterService
    var samples: [UInt64] = []

    static func instant(_ round: Int) -> MeterInstant {
        MeterInstant(wall: 1_800_000_000 + Double(round) * 30, sinceBootNanoseconds: UInt64(round) * 30_000_000_000)
    }

    static func network(_ index: Int) -> Network {
        Network(uuid: "0b5ab2a0-0000-4000-8000-" + String(String(100_000_000_000 + index).suffix(12)), id: "net\(index)",
                type: "wifi", ssid: Array("net\(index)".utf8), metered: index % 2 == 0 ? .yes : .no)
    }

    init(names: [String], devices: Int, known: Int) {
        self.names = names
        self.devices = devices
        var configuration = ServiceConfiguration()
        configuration.store.calendar = BucketCalendar(zone: .utc)
        let history = ServiceHistory(networks: (0..<known).map { index in
            NetworkRecord(network: Self.network(index), firstSeen: 1_700_000_000, lastSeen: 1_700_000_000, interface: nil, active: false)
        })
        service = MeterService(bootID: "bench", configuration: configuration, history: history, at: 1_800_000_000)
        let links = names.enumerated().map { index, name in
            Link(ifindex: Int32(index + 2), name: name, kind: "veth", arpType: ARPHRD.ether,
                 counters: LinkCounters(rxBytes: 0, txBytes: 0, rxPackets: 0, txPackets: 0), sysfs: SysfsFacts())
        }
        _ = service.start(links: links, unparseable: 0, at: Self.instant(0))
        report(round: 0)
    }

    /// What NetworkManager says after a switch: each device on the network of this tenth of the run.
    mutating func report(round: Int) {
        guard devices > 0 else { return }
        service.reportNetworks((0..<devices).map { index in
            DeviceNetwork(interface: names[index], network: Self.network(index * 10 + round / 10 % 10))
        }, at: Self.instant(round).wall)
    }

    mutating func step(_ round: Int, dump: () throws -> Void) throws {
        let bytes = UInt64(round) * 1_000_000
        let readings = (0..<names.count).map { index in
            CounterReading(ifindex: Int32(index + 2),
                           counters: LinkCounters(rxBytes: bytes, txBytes: bytes / 2, rxPackets: UInt64(round) * 700,
                                                  txPackets: UInt64(round) * 350))
        }
        let started = nanoseconds()
        try dump()
        _ = service.ingest(linkEvents: [], readings: readings, at: Self.instant(round))
        if round % 10 == 0 { report(round: round) }
        samples.append(nanoseconds() - started)
        if round % 2 == 0 {
            let batch = service.beginSave(at: Self.instant(round).wall)
            _ = service.finishSave(batch, error: nil)
        }
    }

    /// The networks hold every byte their devices carried, and add up to them.
    func check(rounds: Int) throws {
        let networks = service.networkFigures().reduce(UInt64(0)) { $0 + $1.total.traffic.rxBytes }
        guard networks == UInt64(devices) * UInt64(rounds) * 1_000_000 else {
            throw BenchmarkError("the networks hold \(networks) bytes, not their \(devices) devices' \(UInt64(devices) * UInt64(rounds) * 1_000_000)")
        }
    }
}
