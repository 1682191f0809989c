import IfMeterCore
import IfMeterHistory
import IfMeterService

/// What the process exposes about itself, as Prometheus client libraries do.
public struct ProcessFigures: Hashable, Sendable {
    public var cpuSeconds: Double
    public var residentBytes: UInt64
    public var virtualBytes: UInt64
    public var startTime: Double
    public var openFDs: Int
    public var maxFDs: UInt64?

    public init(cpuSeconds: Double, residentBytes: UInt64, virtualBytes: UInt64, startTime: Double, openFDs: Int,
                maxFDs: UInt64?) {
        self.cpuSeconds = cpuSeconds
        self.residentBytes = residentBytes
        self.virtualBytes = virtualBytes
        self.startTime = startTime
        self.openFDs = openFDs
        self.maxFDs = maxFDs
    }
}

/// Everything one exposition is made from.
public struct MetricsInput: Sendable {
    /// What is counted now; nil while the daemon is loading its database.
    public var snapshot: MeterSnapshot?
    /// Every data plan's figures now.
    public var plans: [PlanFigures] = []
    public var now: Double
    /// Names absent for longer than this leave the exposition.
    public var keepAbsentSeconds: Double
    public var sampleDurations: Histogram
    public var saveDurations: Histogram
    public var version: String
    /// The daemon's own process; nil where another exporter reports its process (a textfile).
    public var process: ProcessFigures?

    public init(snapshot: MeterSnapshot?, now: Double, keepAbsentSeconds: Double, sampleDurations: Histogram,
                saveDurations: Histogram, version: String, process: ProcessFigures?) {
        self.snapshot = snapshot
        self.now = now
        self.keepAbsentSeconds = keepAbsentSeconds
        self.sampleDurations = sampleDurations
        self.saveDurations = saveDurations
        self.version = version
        self.process = process
    }
}

/// ifmeter's metrics (docs/METRICS.md), in either text format.
public enum MetricsExposition {
    static let estimateNote = "An estimate from interface counters: protocol overhead included, not per application; "
        + "a tunnel's traffic (class=\"tunnel\") is counted again on the link beneath it."

    /// The per-interface counters: name, help, and the figure.
    static let interfaceCounters: [(name: String, unit: String?, help: String, value: @Sendable (InterfaceFigures) -> UInt64)] = [
        ("ifmeter_interface_receive_bytes_total", "bytes",
         "Bytes received since ifmeter began counting the interface, continuous across counter resets, re-creation, "
            + "daemon restarts and reboots. " + estimateNote, { $0.total.traffic.rxBytes }),
        ("ifmeter_interface_transmit_bytes_total", "bytes",
         "Bytes transmitted since ifmeter began counting the interface, continuous across counter resets, re-creation, "
            + "daemon restarts and reboots. " + estimateNote, { $0.total.traffic.txBytes }),
        ("ifmeter_interface_receive_packets_total", "packets",
         "Packets received since ifmeter began counting the interface, continuous like the byte totals. " + estimateNote,
         { $0.total.traffic.rxPackets }),
        ("ifmeter_interface_transmit_packets_total", "packets",
         "Packets transmitted since ifmeter began counting the interface, continuous like the byte totals. " + estimateNote,
         { $0.total.traffic.txPackets }),
        ("ifmeter_interface_resets_total", nil,
         "Times the interface's kernel counters started over (a driver reset, a re-created interface, a new epoch after "
            + "a reboot); ifmeter's totals carry on across them.", { UInt64(clamping: $0.total.resets) }),
        ("ifmeter_interface_gaps_total", nil,
         "Times ifmeterd was not sampling and counted the difference when it resumed (the traffic is in the totals, "
            + "attributed to the resume).", { UInt64(clamping: $0.total.gaps) }),
        ("ifmeter_interface_implausible_dropped_total", nil,
         "Counter jumps left out of the totals because the link could not have moved that much.",
         { UInt64(clamping: $0.total.implausible) }),
    ]

    /// Every sample name the exposition can contain (a histogram's as its `_bucket`, `_sum`
    /// and `_count`), for checking what dashboards and docs name.
    public static var familyNames: Set<String> {
        var names: Set<String> = ["ifmeter_up", "ifmeter_build_info", "ifmeter_last_sample_timestamp_seconds",
                                  "ifmeter_store_healthy", "ifmeter_link_events_lost_total", "ifmeter_interface_info", "ifmeter_owner_info",
                                  "process_cpu_seconds_total", "process_resident_memory_bytes", "process_virtual_memory_bytes",
                                  "process_start_time_seconds", "process_open_fds", "process_max_fds"]
        names.formUnion(interfaceCounters.map(\.name))
        names.formUnion(planGauges.map(\.name))
        names.formUnion(["ifmeter_network_receive_bytes_total", "ifmeter_network_transmit_bytes_total",
                         "ifmeter_networks_not_exposed"])
        for histogram in ["ifmeter_sample_duration_seconds", "ifmeter_save_duration_seconds"] {
            names.formUnion(["_bucket", "_sum", "_count"].map { histogram + $0 })
        }
        return names
    }

    /// Writes the whole exposition and finishes it.
    public static func write(_ input: MetricsInput, to writer: inout ExpositionWriter) {
        writer.family("ifmeter_up", .gauge, help: "1 when ifmeterd is metering, 0 while it is still loading its database.")
        writer.sample("ifmeter_up", [:], UInt64(input.snapshot == nil ? 0 : 1))
        writer.family("ifmeter_build_info", .info, help: "The running ifmeterd's version.")
        writer.sample("ifmeter_build_info", ["version": input.version], UInt64(1))
        if let snapshot = input.snapshot {
            writeDaemon(snapshot, input, to: &writer)
            writeInterfaces(snapshot.interfaces, showing: { isShown($0, input) }, to: &writer)
            writePlans(input.plans, to: &writer)
            writeNetworks(snapshot.networks, to: &writer)
        }
        writer.histogram("ifmeter_sample_duration_seconds",
                         help: "Time one sample takes: every queued link event, one counters dump, and the meter.",
                         input.sampleDurations)
        writer.histogram("ifmeter_save_duration_seconds",
                         help: "Time one save to the database takes (one transaction, synchronous=FULL).",
                         input.saveDurations)
        if let process = input.process { writeProcess(process, to: &writer) }
        writer.finish()
    }

    /// Present interfaces, and absent ones seen within the keep time; never ignored ones.
    /// A predicate, not a filtered copy: at thousands of interfaces the copy is megabytes.
    static func isShown(_ figures: InterfaceFigures, _ input: MetricsInput) -> Bool {
        guard figures.interfaceClass != "ignored" else { return false }
        guard let lastSeen = figures.lastSeen else { return true }
        return input.now - lastSeen <= input.keepAbsentSeconds
    }

    static func writeDaemon(_ snapshot: MeterSnapshot, _ input: MetricsInput, to writer: inout ExpositionWriter) {
        if let sampled = snapshot.summary.sampledAt {
            writer.family("ifmeter_last_sample_timestamp_seconds", .gauge, unit: "seconds",
                          help: "When ifmeterd last read the interface counters, in Unix seconds.")
            writer.sample("ifmeter_last_sample_timestamp_seconds", [:], sampled.wall)
        }
        writer.family("ifmeter_store_healthy", .gauge,
                      help: "1 while saves to the database work; 0 while they fail (counting goes on in memory and saves are retried).")
        writer.sample("ifmeter_store_healthy", [:], UInt64(snapshot.summary.saveError == nil ? 1 : 0))
        writer.family("ifmeter_link_events_lost_total", .counter,
                      help: "Times link events were lost: ifmeterd's own (it resynchronised from a full dump; links that "
                        + "came and went in between may be missing), or one owner's or metered namespace's only (its last "
                        + "moments may be missing); the figures they concern are labelled events-lost.")
        writer.sample("ifmeter_link_events_lost_total", [:], UInt64(snapshot.summary.eventsLost))
    }

    static func writeInterfaces(
        _ interfaces: [InterfaceFigures], showing isShown: (InterfaceFigures) -> Bool, to writer: inout ExpositionWriter
    ) {
        writer.family("ifmeter_interface_info", .info,
                      help: "1 for every interface ifmeter meters: its class and why, its kind, and its operational state "
                        + "(\"absent\" for a name with history that is not present now).")
        for figures in interfaces where isShown(figures) {
            writer.sample("ifmeter_interface_info", [
                "interface": figures.name, "class": figures.interfaceClass, "kind": figures.kind,
                "operstate": figures.present?.operState.rawValue ?? "absent", "class_reason": figures.classReason,
            ], UInt64(1))
        }
        if interfaces.contains(where: { $0.present?.owner != nil && isShown($0) }) {
            writeOwners(interfaces, showing: isShown, to: &writer)
        }
        let shown = interfaces.indices.filter { isShown(interfaces[$0]) }
        // A subject's series say whose they are (its kind's ``SubjectKind/metricLabels(_:)``:
        // `container="web"`, a pod's `namespace` and `pod`, as kube-state-metrics names them),
        // so a query needs no join;
        // as many as the interfaces shown.
        let labelSets = shown.map { index -> [UInt8] in
            let (name, interfaceClass) = (interfaces[index].name, interfaces[index].interfaceClass)
            guard let (kind, owner) = SubjectKinds.kind(of: name), kind.prefix != nil else {
                return ExpositionWriter.labelSet(["interface": name, "class": interfaceClass])
            }
            return ExpositionWriter.labelSet(pairs: [("interface", name), ("class", interfaceClass)] + kind.metricLabels(owner))
        }
        for counter in interfaceCounters {
            writer.family(counter.name, .counter, unit: counter.unit, help: counter.help)
            for (index, labels) in zip(shown, labelSets) {
                writer.sample(counter.name, labelSet: labels, counter.value(interfaces[index]))
            }
        }
    }

    /// Who owns each present container's or namespace's interface.
    static func writeOwners(
        _ interfaces: [InterfaceFigures], showing isShown: (InterfaceFigures) -> Bool, to writer: inout ExpositionWriter
    ) {
        writer.family("ifmeter_owner_info", .info,
                      help: "1 for every present interface counted as a container's, virtual machine's or namespace's (docs/NAMESPACES.md): "
                        + "the owner's kind, name and id, and the host-side link it is counted through now (alias).")
        for figures in interfaces where isShown(figures) {
            guard let owner = figures.present?.owner, let subject = SubjectName.owner(of: figures.name) else { continue }
            writer.sample("ifmeter_owner_info", pairs: [("interface", figures.name)] + subject.kind.metricLabels(subject.name)
                + [("kind", owner.kind.rawValue), ("id", owner.id), ("alias", owner.alias)], UInt64(1))
        }
    }

    /// Most networks exposed: a laptop meets a few dozen, but every SSID it ever joined is a
    /// network for good, and each would be series for good.
    public static let maximumNetworks = 256

    /// Each network's traffic (docs/NETWORKS.md): those active now first, then the most
    /// recently seen, up to ``maximumNetworks``; how many were left out is a gauge of its own.
    /// The `network` label is the connection's id as ``InterfaceName/printable(_:keepingLines:)`` shows it.
    static func writeNetworks(_ networks: [NetworkFigures], to writer: inout ExpositionWriter) {
        guard !networks.isEmpty else { return }
        let ordered = networks.sorted { a, b in
            ((a.interface != nil ? 1 : 0), a.record?.lastSeen ?? .infinity) > ((b.interface != nil ? 1 : 0), b.record?.lastSeen ?? .infinity)
        }
        let shown = ordered.prefix(maximumNetworks).sorted { ($0.record?.network.id ?? "", $0.subject) < ($1.record?.network.id ?? "", $1.subject) }
        let labelSets = shown.map { figures in
            let network = figures.record?.network
            // A connection's id is anybody's text: shown as the terminal shows it (`\xNN` for
            // control characters), since an exposition is read in terminals too.
            return ExpositionWriter.labelSet([
                "network": network.map { InterfaceName.printable($0.id) } ?? "unknown", "uuid": network?.uuid ?? "unknown", "type": network?.type ?? "unknown",
                "metered": network?.metered.rawValue ?? Metered.unknown.rawValue,
            ])
        }
        for (name, direction, value) in [
            ("ifmeter_network_receive_bytes_total", "received", { (figures: NetworkFigures) in figures.total.traffic.rxBytes }),
            ("ifmeter_network_transmit_bytes_total", "transmitted", { (figures: NetworkFigures) in figures.total.traffic.txBytes }),
        ] {
            writer.family(name, .counter, unit: "bytes",
                          help: "Bytes \(direction) on any interface while it was on this NetworkManager connection (network=\"unknown\": "
                            + "while the interface's network was not known), since ifmeter first saw it. Another view of the "
                            + "interfaces' bytes: do not add it to theirs. " + estimateNote)
            for (figures, labels) in zip(shown, labelSets) { writer.sample(name, labelSet: labels, value(figures)) }
        }
        writer.family("ifmeter_networks_not_exposed", .gauge,
                      help: "Networks left out of ifmeter_network_* because more than \(maximumNetworks) have been seen "
                        + "(the least recently seen go first); `ifmeter networks` lists them all.")
        writer.sample("ifmeter_networks_not_exposed", [:], UInt64(networks.count - shown.count))
    }

    /// The data plans' gauges: name, unit, help, and the figure.
    static let planGauges: [(name: String, unit: String, help: String, value: @Sendable (PlanFigures) -> UInt64)] = [
        ("ifmeter_plan_used_bytes", "bytes",
         "Bytes a data plan's interfaces used in its current period (saved and not yet saved), in the plan's direction. "
            + estimateNote, { $0.used }),
        ("ifmeter_plan_limit_bytes", "bytes", "A data plan's limit for one period.", { $0.plan.limit }),
        ("ifmeter_plan_projected_bytes", "bytes",
         "What a data plan's period will have used at its end at its pace so far: a projection, not traffic.",
         { $0.projected }),
        ("ifmeter_plan_period_start_timestamp_seconds", "seconds", "When a data plan's current period began, in Unix seconds.",
         { UInt64(clamping: $0.bounds.start) }),
        ("ifmeter_plan_period_end_timestamp_seconds", "seconds", "When a data plan's current period ends, in Unix seconds.",
         { UInt64(clamping: $0.bounds.end) }),
    ]

    /// One series per plan and gauge, labelled `plan` and `direction`: as many as the config has plans.
    static func writePlans(_ plans: [PlanFigures], to writer: inout ExpositionWriter) {
        guard !plans.isEmpty else { return }
        let labelSets = plans.map { ExpositionWriter.labelSet(["plan": $0.plan.name, "direction": $0.plan.direction.rawValue]) }
        for gauge in planGauges {
            writer.family(gauge.name, .gauge, unit: gauge.unit, help: gauge.help)
            for (plan, labels) in zip(plans, labelSets) {
                writer.sample(gauge.name, labelSet: labels, gauge.value(plan))
            }
        }
    }

    static func writeProcess(_ process: ProcessFigures, to writer: inout ExpositionWriter) {
        writer.family("process_cpu_seconds_total", .counter, unit: "seconds", help: "Total user and system CPU time spent in seconds.")
        writer.sample("process_cpu_seconds_total", [:], process.cpuSeconds)
        writer.family("process_resident_memory_bytes", .gauge, unit: "bytes", help: "Resident memory size in bytes.")
        writer.sample("process_resident_memory_bytes", [:], process.residentBytes)
        writer.family("process_virtual_memory_bytes", .gauge, unit: "bytes", help: "Virtual memory size in bytes.")
        writer.sample("process_virtual_memory_bytes", [:], process.virtualBytes)
        writer.family("process_start_time_seconds", .gauge, unit: "seconds",
                      help: "Start time of the process since unix epoch in seconds.")
        writer.sample("process_start_time_seconds", [:], process.startTime)
        writer.family("process_open_fds", .gauge, help: "Number of open file descriptors.")
        writer.sample("process_open_fds", [:], UInt64(process.openFDs))
        if let maxFDs = process.maxFDs {
            writer.family("process_max_fds", .gauge, help: "Maximum number of open file descriptors.")
            writer.sample("process_max_fds", [:], maxFDs)
        }
    }

    /// The whole exposition as one buffer, its room reserved for `expectedBytes` (the size of
    /// the last one): grown by doubling instead, a buffer of megabytes keeps up to twice that.
    public static func render(_ input: MetricsInput, format: ExpositionFormat, expectedBytes: Int = 0) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(expectedBytes + expectedBytes / 64)
        var writer = ExpositionWriter(format: format) { bytes += $0 }
        write(input, to: &writer)
        return bytes
    }
}
