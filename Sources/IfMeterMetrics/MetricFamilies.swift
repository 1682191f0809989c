import IfMeterHistory
import IfMeterService

/// Every family ifmeter exposes (docs/METRICS.md), in the order the exposition writes them.
extension MetricFamily {
    static let estimateNote = "An estimate from interface counters: protocol overhead included, not per application; "
        + "a tunnel's traffic (class=\"tunnel\") is counted again on the link beneath it."

    static let up = MetricFamily("ifmeter_up", .gauge, help: "1 when ifmeterd is metering, 0 while it is still loading its database.")
    static let buildInfo = MetricFamily("ifmeter_build_info", .info, labels: ["version"], help: "The running ifmeterd's version.")
    static let lastSample = MetricFamily("ifmeter_last_sample_timestamp_seconds", .gauge, unit: "seconds",
                                         help: "When ifmeterd last read the interface counters, in Unix seconds.")
    static let storeHealthy = MetricFamily(
        "ifmeter_store_healthy", .gauge,
        help: "1 while saves to the database work; 0 while they fail (counting goes on in memory and saves are retried).")
    static let linkEventsLost = MetricFamily(
        "ifmeter_link_events_lost_total", .counter,
        help: "Times link events were lost: ifmeterd's own (it resynchronised from a full dump; links that "
            + "came and went in between may be missing), or one owner's or metered namespace's only (its last "
            + "moments may be missing); the figures they concern are labelled events-lost.")

    static let interfaceInfo = MetricFamily(
        "ifmeter_interface_info", .info, labels: ["interface", "class", "kind", "operstate", "class_reason", "alias"],
        help: "1 for every interface ifmeter meters: its class and why, its kind, its operational state "
            + "(\"absent\" for a name with history that is not present now) and its alias, if it has one.")
    static let ownerInfo = MetricFamily(
        "ifmeter_owner_info", .info, labels: ["interface", "kind", "id", "alias"],
        help: "1 for every present interface counted as a container's, virtual machine's or namespace's (docs/NAMESPACES.md): "
            + "the owner's kind, name and id, and the host-side link it is counted through now (alias).")

    /// The per-interface counters, each with its figure.
    static let interfaceCounters: [(family: MetricFamily, value: @Sendable (InterfaceFigures) -> UInt64)] = [
        (interfaceCounter("ifmeter_interface_receive_bytes_total", unit: "bytes",
                          "Bytes received since ifmeter began counting the interface, continuous across counter resets, re-creation, "
                            + "daemon restarts and reboots. " + estimateNote), { $0.total.traffic.rxBytes }),
        (interfaceCounter("ifmeter_interface_transmit_bytes_total", unit: "bytes",
                          "Bytes transmitted since ifmeter began counting the interface, continuous across counter resets, re-creation, "
                            + "daemon restarts and reboots. " + estimateNote), { $0.total.traffic.txBytes }),
        (interfaceCounter("ifmeter_interface_receive_packets_total", unit: "packets",
                          "Packets received since ifmeter began counting the interface, continuous like the byte totals. " + estimateNote),
         { $0.total.traffic.rxPackets }),
        (interfaceCounter("ifmeter_interface_transmit_packets_total", unit: "packets",
                          "Packets transmitted since ifmeter began counting the interface, continuous like the byte totals. " + estimateNote),
         { $0.total.traffic.txPackets }),
        (interfaceCounter("ifmeter_interface_resets_total",
                          "Times the interface's kernel counters started over (a driver reset, a re-created interface, a new epoch after "
                            + "a reboot); ifmeter's totals carry on across them."), { UInt64(clamping: $0.total.resets) }),
        (interfaceCounter("ifmeter_interface_gaps_total",
                          "Times ifmeterd was not sampling and counted the difference when it resumed (the traffic is in the totals, "
                            + "attributed to the resume)."), { UInt64(clamping: $0.total.gaps) }),
        (interfaceCounter("ifmeter_interface_implausible_dropped_total",
                          "Counter jumps left out of the totals because the link could not have moved that much."),
         { UInt64(clamping: $0.total.implausible) }),
    ]

    private static func interfaceCounter(_ name: String, unit: String? = nil, _ help: String) -> MetricFamily {
        MetricFamily(name, .counter, unit: unit, labels: ["interface", "class"], help: help)
    }

    /// The data plans' gauges, each with its figure.
    static let planGauges: [(family: MetricFamily, value: @Sendable (PlanFigures) -> UInt64)] = [
        (planGauge("ifmeter_plan_used_bytes",
                   "Bytes a data plan's interfaces used in its current period (saved and not yet saved), in the plan's direction. "
                    + estimateNote), { $0.used }),
        (planGauge("ifmeter_plan_limit_bytes", "A data plan's limit for one period."), { $0.plan.limit }),
        (planGauge("ifmeter_plan_projected_bytes",
                   "What a data plan's period will have used at its end at its pace so far: a projection, not traffic."),
         { $0.projected }),
        (planGauge("ifmeter_plan_period_start_timestamp_seconds", unit: "seconds", "When a data plan's current period began, in Unix seconds."),
         { UInt64(clamping: $0.bounds.start) }),
        (planGauge("ifmeter_plan_period_end_timestamp_seconds", unit: "seconds", "When a data plan's current period ends, in Unix seconds."),
         { UInt64(clamping: $0.bounds.end) }),
    ]

    private static func planGauge(_ name: String, unit: String = "bytes", _ help: String) -> MetricFamily {
        MetricFamily(name, .gauge, unit: unit, labels: ["plan", "direction"], help: help)
    }

    /// Each network's counters, each with its figure.
    static let networkCounters: [(family: MetricFamily, value: @Sendable (NetworkFigures) -> UInt64)] = [
        (networkCounter("ifmeter_network_receive_bytes_total", "received"), { $0.total.traffic.rxBytes }),
        (networkCounter("ifmeter_network_transmit_bytes_total", "transmitted"), { $0.total.traffic.txBytes }),
    ]

    private static func networkCounter(_ name: String, _ direction: String) -> MetricFamily {
        MetricFamily(name, .counter, unit: "bytes", labels: ["network", "uuid", "type", "metered"],
                     help: "Bytes \(direction) on any interface while it was on this NetworkManager connection (network=\"unknown\": "
                        + "while the interface's network was not known), since ifmeter first saw it. Another view of the "
                        + "interfaces' bytes: do not add it to theirs. " + estimateNote)
    }

    static let networksNotExposed = MetricFamily(
        "ifmeter_networks_not_exposed", .gauge,
        help: "Networks left out of ifmeter_network_* because more than \(MetricsExposition.maximumNetworks) have been seen "
            + "(the least recently seen go first); `ifmeter networks` lists them all.")

    /// Each application's counters, each with its figure.
    static let appCounters: [(family: MetricFamily, value: @Sendable (InterfaceFigures) -> UInt64)] = [
        (appCounter("ifmeter_app_receive_bytes_total", "received"), { $0.total.traffic.rxBytes }),
        (appCounter("ifmeter_app_transmit_bytes_total", "transmitted"), { $0.total.traffic.txBytes }),
    ]

    private static func appCounter(_ name: String, _ direction: String) -> MetricFamily {
        MetricFamily(name, .counter, unit: "bytes", labels: ["subject", "kind", "app", "uid", "service", "remainder_of"],
                     help: "Bytes \(direction) by the sockets of a system service (service), a user's application (app, uid) "
                        + "or, for a link's remainder (remainder_of), by no named application, since ifmeter first counted it; "
                        + "counted per cgroup and given in the link's terms (link headers included). Another view of the "
                        + "interfaces' bytes: do not add it to theirs. An estimate.")
    }

    static let appsNotExposed = MetricFamily(
        "ifmeter_apps_not_exposed", .gauge,
        help: "Applications left out of ifmeter_app_* because more than \(MetricsExposition.maximumApps) have been counted "
            + "(the least busy go first); `ifmeter apps` lists them all.")

    static let sampleDuration = MetricFamily("ifmeter_sample_duration_seconds", .histogram, unit: "seconds", labels: ["le"],
                                             help: "Time one sample takes: every queued link event, one counters dump, and the meter.")
    static let saveDuration = MetricFamily("ifmeter_save_duration_seconds", .histogram, unit: "seconds", labels: ["le"],
                                           help: "Time one save to the database takes (one transaction, synchronous=FULL).")

    static let processCPU = MetricFamily("process_cpu_seconds_total", .counter, unit: "seconds",
                                         help: "Total user and system CPU time spent in seconds.")
    static let processResident = MetricFamily("process_resident_memory_bytes", .gauge, unit: "bytes", help: "Resident memory size in bytes.")
    static let processVirtual = MetricFamily("process_virtual_memory_bytes", .gauge, unit: "bytes", help: "Virtual memory size in bytes.")
    static let processStart = MetricFamily("process_start_time_seconds", .gauge, unit: "seconds",
                                           help: "Start time of the process since unix epoch in seconds.")
    static let processOpenFDs = MetricFamily("process_open_fds", .gauge, help: "Number of open file descriptors.")
    static let processMaxFDs = MetricFamily("process_max_fds", .gauge, help: "Maximum number of open file descriptors.")

    /// Every family, in the order the exposition writes them.
    public static let all: [MetricFamily] = [up, buildInfo, lastSample, storeHealthy, linkEventsLost, interfaceInfo, ownerInfo]
        + interfaceCounters.map(\.family) + planGauges.map(\.family) + [percentileRate, percentileCoverage] + networkCounters.map(\.family)
        + [networksNotExposed] + appCounters.map(\.family) + [appsNotExposed] + scopeCounters.map(\.family) + [sampleDuration, saveDuration, processCPU, processResident, processVirtual, processStart, processOpenFDs,
           processMaxFDs]
}
