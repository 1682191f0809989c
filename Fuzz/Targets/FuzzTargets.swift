import IfMeterPlans
import CLinkStats
import FoundationEssentials
import IfMeterCLI
import IfMeterCore
import IfMeterJSON
import IfMeterDaemon
import IfMeterKernel
import IfMeterOwners
import IfMeterHistory
import IfMeterService
import IfMeterStore
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// The bodies of the fuzz targets (`make fuzz`, docs/FUZZING.md): each takes arbitrary bytes
/// and must neither trap nor break an invariant (a broken one is a `fatalError`, which
/// libFuzzer reports as a crash). The same functions replay the committed corpora in the
/// ordinary test run (Tests/FuzzReplayTests).
public enum FuzzTargets {
    /// The names `scripts/fuzz` and the corpora use.
    public static let all: [String: @Sendable ([UInt8]) -> Void] = [
        "request": request, "config": config, "netlink": netlink, "log": log, "meter": meter, "vnstat": vnstat,
        "vnstat-schema": vnstatSchema, "answer": answer, "plan-state": planState, "runtime-state": runtimeState,
        "http-api": httpAPI, "http-host": httpHost, "network-manager": networkManager, "cgroup-naming": cgroupNaming,
        "save-journal": saveJournal, "prefixes": prefixes,
    ]

    // MARK: runtime-state

    /// The owner sources' state files as another program (or an attacker with a container) may
    /// have written them, each source's parsers in turn (``OwnerSource/fuzz(_:)``). Invariants:
    /// no trap; no name that is not an acceptable owner name, no id of the wrong shape.
    public static func runtimeState(_ bytes: [UInt8]) {
        for source in OwnerDirectory.sources { source.fuzz(bytes) }
    }

    // MARK: plan-state

    /// What ifmeter reads back of data plans from its own files, which a disk or a hand may have
    /// changed: the events table's `plan` column, a plan's fired thresholds, `notify`'s state file.
    /// Invariants: no trap; what reads writes back the same.
    public static func planState(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        if let facts = PlanColumn.facts(text) {
            guard PlanColumn.facts(PlanColumn.text(facts)) == facts else { fatalError("a plan column does not read back as written") }
        }
        if let fired = PlanState.fired(parsing: text) {
            let state = PlanState(fingerprint: "f", periodStart: 0, fired: fired)
            guard PlanState.fired(parsing: state.firedText) == fired else { fatalError("fired thresholds do not read back") }
        }
        if let state = try? NotifyState.parse(bytes, path: "fuzz.state") {
            guard state.count <= NotifyState.maximumKeys else { fatalError("notify's state kept more than its bound") }
        }
    }

    // MARK: config

    /// The config file parser, then the command line (arguments split at NUL bytes).
    public static func config(_ bytes: [UInt8]) {
        if let text = String(validating: bytes, as: UTF8.self) {
            if let config = try? DaemonConfig.parse(text, file: "fuzz.conf") {
                // What the daemon derives from a config it accepted must not trap either.
                _ = config.historyConfiguration
                _ = config.meterConfiguration
                _ = config.interval * 1_000_000 + config.saveInterval * 1_000_000 + config.idleTimeout * 1_000_000
            }
        }
        let arguments = bytes.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        if let options = try? DaemonOptions(arguments: arguments), let interval = options.interval {
            _ = interval * 1_000_000
        }
        // The client's command line, and every value in the one grammar.
        _ = try? CLI.parse(arguments: arguments)
        for argument in arguments {
            _ = try? ValueGrammar.size(argument)
            _ = try? ValueGrammar.duration(argument)
            _ = try? ValueGrammar.rate(argument)
            if let share = try? ValueGrammar.percent(argument) { _ = ValueGrammar.percentText(share) }
        }
    }

    // MARK: netlink

    /// The C shim's parsers over arbitrary bytes, as if they came off a netlink socket.
    public static func netlink(_ bytes: [UInt8]) {
        var events = ifm_event_array()
        var counters = ifm_counters_array()
        defer {
            ifm_event_array_free(&events)
            ifm_counters_array_free(&counters)
        }
        bytes.withUnsafeBytes { raw in
            let source = Int32(bitPattern: UInt32(bytes.last ?? 0)) - 1
            _ = ifm_parse_link_events(raw.baseAddress, raw.count, source, Int32(bytes.count % 2), &events)
            _ = ifm_parse_counters(raw.baseAddress, raw.count, &counters)
            let nsid = ifm_parse_netns_id(raw.baseAddress, raw.count, bytes.first.map(UInt32.init) ?? 0)
            guard nsid >= -4095 else { fatalError("RTM_GETNSID parse returned \(nsid)") }
        }
        for event in UnsafeBufferPointer(start: events.items, count: events.count) {
            _ = Link(event.link)
        }
    }

    // MARK: log

    /// The estimate-log reader of `ifmeter log` over arbitrary bytes.
    public static func log(_ bytes: [UInt8]) {
        var reader = EstimateLogReader()
        let (records, consumed) = reader.records(in: bytes)
        guard consumed <= bytes.count, records.count <= bytes.count else {
            fatalError("the log reader consumed \(consumed) of \(bytes.count) bytes")
        }
    }

    // MARK: answer

    /// A daemon's answer as the client reads it (``DaemonClient/readAnswer(_:)``, as a query
    /// and as a status), arriving in chunks whose size the first byte chooses. Invariants: no
    /// trap; the same outcome whatever the chunk size; a result read once writes and reads
    /// back to the same bytes.
    public static func answer(_ bytes: [UInt8]) {
        guard let first = bytes.first else { return }
        let input = Array(bytes.dropFirst())
        let whole = readAnswer(QueryResult.self, input, chunk: input.count + 1)
        let split = readAnswer(QueryResult.self, input, chunk: Int(first % 16) + 1)
        guard whole == split else { fatalError("the answer read differently in chunks of \(first % 16 + 1)") }
        _ = readAnswer(StatusResult.self, input, chunk: Int(first % 7) + 1)
        if let plans = readAnswer(PlansResult.self, input, chunk: Int(first % 5) + 1) {
            var reader = JSONReader(plans)
            guard let again = try? PlansResult(reading: &reader), again.jsonBytes == plans else {
                fatalError("a plans answer does not read back as it was written")
            }
        }
        if let events = readAnswer(EventsResult.self, input, chunk: Int(first % 3) + 1) {
            var reader = JSONReader(events)
            guard let again = try? EventsResult(reading: &reader), again.jsonBytes == events else {
                fatalError("an events answer (plan events among them) does not read back as it was written")
            }
        }
        if let written = whole {
            var reader = JSONReader(written)
            guard let again = try? QueryResult(reading: &reader), again.jsonBytes == written else {
                fatalError("a query result does not read back as it was written")
            }
        }
    }

    /// The result's bytes as written again, nil when the line was refused or had no result.
    private static func readAnswer<T: JSONReadable & JSONWritable>(_ type: T.Type, _ input: [UInt8], chunk: Int) -> [UInt8]? {
        var offset = 0
        var reader = JSONReader(more: {
            guard offset < input.count else { return nil }
            defer { offset += chunk }
            return Array(input[offset..<min(input.count, offset + chunk)])
        })
        let answer: DaemonClient.Answer<T>? = try? DaemonClient.readAnswer(&reader)
        return answer?.result?.jsonBytes
    }

    // MARK: meter

    /// The meter and pending writes driven by a script of samples, link events, restarts and
    /// clock readings with counters anywhere in 0…2^64−1. Invariants: no trap; a name's
    /// total never decreases; every resolution's buckets sum to the total.
    public static func meter(_ bytes: [UInt8]) {
        var input = ByteReader(bytes)
        var meter = Meter(bootID: "fuzz")
        var pending = PendingWrites()
        let calendar = BucketCalendar(zone: .utc)
        var wall = 1_790_000_000.0
        var boot: UInt64 = 1_000_000_000
        var previousTotals: [String: Traffic] = [:]
        var started = false
        func link(_ input: inout ByteReader) -> Link {
            let ifindex = Int32(input.byte() % 4 + 1)
            return Link(ifindex: ifindex, name: ["eth0", "wlan0", "tun0", "veth0"][Int(input.byte() % 4)],
                        kind: ["", "tun", "veth", "wireguard"][Int(input.byte() % 4)], arpType: 1,
                        counters: input.counters(), countersAre32Bit: input.byte() % 8 == 0,
                        speedBitsPerSecond: input.byte() % 2 == 0 ? nil : UInt64(input.byte()) * 1_000_000)
        }
        while !input.isEmpty {
            let operation = input.byte() % 7
            // Time moves forward on the boot clock; the wall clock may jump anywhere near it.
            boot &+= UInt64(input.byte()) * 1_000_000_000
            wall += Double(input.byte()) - (input.byte() % 16 == 0 ? 86_400 : 0)
            let instant = MeterInstant(wall: wall, sinceBootNanoseconds: boot)
            var output: MeterOutput
            switch operation {
            case 0 where !started, 1 where !started:
                output = meter.start(links: (0..<Int(input.byte() % 4)).map { _ in link(&input) }, at: instant)
                started = true
            case 0, 1:
                let readings = (0..<Int(input.byte() % 4)).map { _ in
                    CounterReading(ifindex: Int32(input.byte() % 4 + 1), counters: input.counters())
                }
                output = meter.apply(sample: readings, at: instant)
            case 2: output = meter.apply(.newOrChanged(link(&input)), at: instant)
            case 3: output = meter.apply(.deleted(link(&input)), at: instant)
            case 4: output = meter.resync(links: (0..<Int(input.byte() % 4)).map { _ in link(&input) }, at: instant)
            case 5:
                // A restart: the daemon saved and comes back, perhaps after a reboot.
                let state = meter.exportState()
                meter = Meter(bootID: input.byte() % 4 == 0 ? "fuzz-\(input.byte())" : state.bootID,
                              restoring: state,
                              knownNames: state.firstSeen.dictionary)
                started = false
                output = MeterOutput()
            default:
                output = MeterOutput()
            }
            pending.add(output, calendar: calendar, monthStartDay: { _ in Int(bytes.count % 28) + 1 })
            for (name, entry) in pending.traffic {
                let total = entry.total
                let before = previousTotals[name] ?? .zero
                guard total.traffic.values.indices.allSatisfy({ total.traffic.values[$0] >= before.values[$0] }) else {
                    fatalError("the total of \(name) went down: \(before) → \(total.traffic)")
                }
                previousTotals[name] = total.traffic
            }
        }
        for resolution in Resolution.allCases {
            var sums: [String: BucketTally] = [:]
            pending.forEachBucket { name, bucketResolution, _, tally in
                if bucketResolution == resolution { sums[name, default: BucketTally()] += tally }
            }
            for (name, entry) in pending.traffic where entry.total.implausible == 0 {
                let total = entry.total
                guard sums[name]?.traffic == total.traffic else {
                    fatalError("\(resolution) buckets of \(name) sum to \(String(describing: sums[name]?.traffic)), total \(total.traffic)")
                }
            }
        }
    }
}

/// Reads fuzz input as a script; past the end every read is zero.
struct ByteReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isEmpty: Bool { offset >= bytes.count }

    mutating func byte() -> UInt8 {
        defer { offset += 1 }
        return offset < bytes.count ? bytes[offset] : 0
    }

    /// A counter: small, near 2^32, near 2^64, or any value, as the input says.
    mutating func counter() -> UInt64 {
        let low = UInt64(byte()) | UInt64(byte()) << 8
        switch byte() % 4 {
        case 0: return low
        case 1: return (1 << 32) &- low
        case 2: return UInt64.max &- low
        default: return (0..<8).reduce(UInt64(0)) { value, _ in value << 8 | UInt64(byte()) }
        }
    }

    mutating func counters() -> LinkCounters {
        LinkCounters(rxBytes: counter(), txBytes: counter(), rxPackets: counter(), txPackets: counter())
    }
}
