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
    ]

    // MARK: runtime-state

    /// The container runtimes' state files as another program (or an attacker with a container)
    /// may have written them: Podman's containers.json, an OCI spec, Docker's config.v2.json, a
    /// process's cgroup, libvirt's live status of a domain. Invariants: no trap; no name that is not an acceptable owner name (it
    /// becomes part of a subject, a label value and log lines) and no id that is not one.
    public static func runtimeState(_ bytes: [UInt8]) {
        for (id, name) in RuntimeState.podmanContainers(containersJSON: bytes) {
            guard OwnerName.isAcceptable(name), id.utf8.count == 64 else { fatalError("podman state gave \(id) \(name)") }
        }
        _ = RuntimeState.networkNamespacePath(ociConfig: bytes)
        if let monitor = RuntimeState.lxcMonitor(cmdline: bytes) {
            guard OwnerName.isAcceptable(monitor.name), monitor.path.hasPrefix("/") else { fatalError("lxc monitor gave \(monitor)") }
        }
        _ = RuntimeState.processStat(bytes)
        if let domain = RuntimeState.libvirtDomain(statusXML: bytes) {
            guard OwnerName.isAcceptable(domain.name), domain.uuid.utf8.count == 36,
                  domain.interfaces.allSatisfy({ ($0.mac?.count ?? 6) == 6 && ($0.target?.utf8.count ?? 1) <= 15 }) else {
                fatalError("libvirt status gave \(domain)")
            }
        }
        if let container = RuntimeState.dockerContainer(configV2: bytes) {
            guard OwnerName.isAcceptable(container.name), container.id.utf8.count == 64, !container.sandbox.isEmpty else {
                fatalError("docker state gave \(container)")
            }
        }
        switch RuntimeState.cgroupOwner(String(decoding: bytes, as: UTF8.self)) {
        case .podman(let id)?, .docker(let id)?:
            guard id.utf8.count == 64 else { fatalError("a cgroup gave id \(id)") }
        case .unit?, nil:
            break
        }
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

    // MARK: vnstat

    /// A vnStat database file of arbitrary bytes (seeded with a real one), read as an import
    /// reads it. Invariants: no trap; either an error naming the file, or interfaces whose rows
    /// have the resolutions vnStat has.
    public static func vnstat(_ bytes: [UInt8]) {
        var template = Array("/tmp/ifmeter-fuzz-vnstat-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        guard fd >= 0 else { return }
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { unlink(path) }
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        do {
            let database = try VnStatDatabase(path: path, utc: bytes.first.map { $0 & 1 == 1 } ?? false)
            for interface in database.interfaces where interface.rows.count != VnStatDatabase.tables.count {
                fatalError("\(interface.name) has rows for \(interface.rows.count) resolutions")
            }
        } catch {
            guard error.path == path else { fatalError("the error names \(error.path), not the file read") }
        }
    }

    // MARK: vnstat-schema

    /// The database the real vnstatd 2.10 wrote (the `vnstat` corpus's seed).
    static let vnStatSeed = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("corpus/vnstat/seed-vnstat-2.10.db").path

    /// The real vnStat file edited by a script of SQL statements the input chooses: views,
    /// triggers, generated columns, virtual and unknown tables, expression indexes, dropped
    /// tables, and times, byte counts and names of any value and type. Then read and imported
    /// into a new store, which is opened and loaded again. Invariants: no trap; a read that
    /// fails names the vnStat file; what is read has times in 1970…9999, counts in 0…2^60 and
    /// interface names; and the store starts from whatever the import wrote.
    public static func vnstatSchema(_ bytes: [UInt8]) {
        var input = ByteReader(bytes)
        var template = Array("/tmp/ifmeter-fuzz-schema-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { return }
        let directory = String(cString: made)
        defer { _ = try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/vnstat.db"
        guard (try? FileManager.default.copyItem(atPath: vnStatSeed, toPath: path)) != nil else { fatalError("no seed at \(vnStatSeed)") }
        if let editor = try? SQLiteConnection(path: path, create: false) {
            for _ in 0..<Int(input.byte() % 8) where !input.isEmpty { try? editor.execute(schemaEdit(&input), "edit") }
        }
        let database: VnStatDatabase
        do {
            database = try VnStatDatabase(path: path, utc: input.byte() & 1 == 1)
        } catch {
            guard error.path == path else { fatalError("the error names \(error.path), not the file read") }
            return
        }
        for interface in database.interfaces {
            guard VnStatDatabase.isInterfaceName(interface.name) else { fatalError("read a name \(interface.name.debugDescription)") }
            let times = [interface.created, interface.updated] + interface.rows.values.flatMap { $0.map { Double($0.start) } }
            guard times.allSatisfy(Statement.acceptedTimes.contains) else { fatalError("read a time out of range for \(interface.name)") }
            let counts = [interface.rxTotal, interface.txTotal] + interface.rows.values.flatMap { $0.flatMap { [$0.rx, $0.tx] } }
            guard counts.allSatisfy({ $0 <= UInt64(VnStatDatabase.Limits.bytesPerValue) }) else { fatalError("read a count out of range") }
        }
        let storePath = directory + "/ifmeter.db"
        do {
            _ = try Store(path: storePath).importVnStat(database, dryRun: false)
            let reopened = try Store(path: storePath)
            guard reopened.repairs.isEmpty else { fatalError("the import wrote what the store had to repair: \(reopened.repairs)") }
            _ = try reopened.loadHistory()
            _ = try reopened.usage(.interfaceClass(.other), resolution: .day)
        } catch {
            fatalError("the store does not start from what the import wrote: \(error)")
        }
    }

    /// One SQL statement against a vnStat file, as `input` chooses it.
    static func schemaEdit(_ input: inout ByteReader) -> String {
        let tables = ["fiveminute", "hour", "day", "month", "year", "top", "interface", "info"]
        let table = tables[Int(input.byte()) % tables.count]
        let value = sqlValue(&input), other = sqlValue(&input)
        let n = input.byte()
        switch input.byte() % 16 {
        case 0: return "UPDATE interface SET created = \(value)"
        case 1: return "UPDATE interface SET updated = \(value)"
        case 2: return "UPDATE \(table) SET date = \(value) WHERE id = (SELECT min(id) FROM \(table))"
        case 3: return "UPDATE \(table) SET rx = \(value), tx = \(other)"
        case 4: return "UPDATE interface SET name = \(value)"
        case 5: return "UPDATE interface SET rxtotal = \(value), txtotal = \(other)"
        case 6: return "CREATE VIEW v\(n) AS SELECT * FROM \(table)"
        case 7: return "CREATE TRIGGER t\(n) BEFORE UPDATE ON \(table) BEGIN SELECT RAISE(ABORT, 'no'); END"
        case 8: return "ALTER TABLE \(table) ADD COLUMN g\(n) AS (length(hex(zeroblob(\(Int(n) << 20)))))"
        case 9: return n & 1 == 0 ? "CREATE VIRTUAL TABLE x\(n) USING fts5(a)" : "CREATE VIRTUAL TABLE x\(n) USING rtree(id, a, b)"
        case 10: return "CREATE TABLE \(n & 1 == 0 ? "extra\(n)" : "sqlite_stat1x") (a)"
        case 11: return """
            INSERT INTO interface (name, active, created, updated, rxcounter, txcounter, rxtotal, txtotal)
            VALUES (\(value), 1, \(other), \(sqlValue(&input)), 0, 0, \(sqlValue(&input)), \(sqlValue(&input)))
            """
        case 12: return "INSERT INTO \(table) (interface, date, rx, tx) VALUES (\(Int(n % 3)), \(value), \(other), \(sqlValue(&input)))"
        case 13: return "UPDATE info SET value = \(value) WHERE name = 'dbversion'"
        case 14: return "DROP TABLE \(table)"
        default: return "CREATE INDEX i\(n) ON \(table) (length(hex(zeroblob(\(Int(n) << 20)))))"
        }
    }

    /// A literal of any SQL type: dates real and impossible, integers at the edges, text with
    /// control bytes, reals, blobs, NULL.
    static func sqlValue(_ input: inout ByteReader) -> String {
        let dates = ["'1960-01-01 00:00:00'", "'1970-01-01'", "'2026-03-29 02:30:00'", "'9999-12-31 23:59:59'", "'10000-01-01'",
                     "'2026-13-45'", "''", "'now'", "'yesterday'"]
        switch input.byte() % 8 {
        case 0: return dates[Int(input.byte()) % dates.count]
        case 1: return String(Int64(bitPattern: input.counter()))
        case 2: return ["-1", "0", "1", "9223372036854775807", "-9223372036854775808", "1152921504606846977"][Int(input.byte()) % 6]
        case 3: return ["1e300", "-1e300", "0.5", "'NaN'"][Int(input.byte()) % 4]
        case 4:
            var blob = "x'"
            for _ in 0..<Int(input.byte() % 8) {
                let byte = input.byte()
                blob += String(byte >> 4, radix: 16) + String(byte & 0xf, radix: 16)
            }
            return blob + "'"
        case 6:
            var text = "'eth"
            for _ in 0..<Int(input.byte() % 20) {
                let scalar = Unicode.Scalar(input.byte() % 0x7f + 1)
                text += scalar == "'" ? "''" : String(scalar)
            }
            return text + "'"
        default: return "char(\(input.byte()), \(input.byte()))"
        }
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
