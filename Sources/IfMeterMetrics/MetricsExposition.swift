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
    /// The 95th percentiles this month, as last worked out.
    public var percentiles: [PercentileFigures] = []
    /// Every scope subject's figures (`scope:SCOPE/SUBJECT`, docs/SCOPES.md).
    public var scopes: [InterfaceFigures] = []
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
    /// Every sample name the exposition can contain (a histogram's as its `_bucket`, `_sum`
    /// and `_count`), for checking what dashboards and docs name.
    public static var familyNames: Set<String> { Set(MetricFamily.all.flatMap(\.sampleNames)) }

    /// Writes the whole exposition and finishes it.
    public static func write(_ input: MetricsInput, to writer: inout ExpositionWriter) {
        writer.family(.up)
        writer.sample(MetricFamily.up.name, [:], UInt64(input.snapshot == nil ? 0 : 1))
        writer.family(.buildInfo)
        writer.sample(MetricFamily.buildInfo.name, ["version": input.version], UInt64(1))
        if let snapshot = input.snapshot {
            writeDaemon(snapshot, input, to: &writer)
            writeInterfaces(snapshot.interfaces, showing: { isShown($0, input) }, to: &writer)
            writePlans(input.plans, to: &writer)
            writePercentiles(input.percentiles, to: &writer)
            writeNetworks(snapshot.networks, to: &writer)
            writeApps(snapshot.apps, to: &writer)
            writeScopes(input.scopes, of: snapshot, showing: { isShown($0, input) }, to: &writer)
        }
        writer.histogram(.sampleDuration, input.sampleDurations)
        writer.histogram(.saveDuration, input.saveDurations)
        if let process = input.process { writeProcess(process, to: &writer) }
        writer.finish()
    }

    /// Present interfaces, and absent ones seen within the keep time; never ignored ones.
    /// A predicate, not a filtered copy: at thousands of interfaces the copy is megabytes.
    static func isShown(_ figures: InterfaceFigures, _ input: MetricsInput) -> Bool {
        // A scope subject's series are in the scope families alone (``writeScopes``).
        guard figures.interfaceClass != "ignored", !figures.name.hasPrefix("scope:") else { return false }
        guard let lastSeen = figures.lastSeen else { return true }
        return input.now - lastSeen <= input.keepAbsentSeconds
    }

    static func writeDaemon(_ snapshot: MeterSnapshot, _ input: MetricsInput, to writer: inout ExpositionWriter) {
        if let sampled = snapshot.summary.sampledAt {
            writer.family(.lastSample)
            writer.sample(MetricFamily.lastSample.name, [:], sampled.wall)
        }
        writer.family(.storeHealthy)
        writer.sample(MetricFamily.storeHealthy.name, [:], UInt64(snapshot.summary.saveError == nil ? 1 : 0))
        writer.family(.linkEventsLost)
        writer.sample(MetricFamily.linkEventsLost.name, [:], UInt64(snapshot.summary.eventsLost))
    }

    static func writeInterfaces(
        _ interfaces: [InterfaceFigures], showing isShown: (InterfaceFigures) -> Bool, to writer: inout ExpositionWriter
    ) {
        writer.family(.interfaceInfo)
        for figures in interfaces where isShown(figures) {
            var labels: [(key: String, value: String)] = [
                ("interface", figures.name), ("class", figures.interfaceClass), ("kind", figures.kind),
                ("operstate", figures.present?.operState.rawValue ?? "absent"), ("class_reason", figures.classReason),
            ]
            // Only when it has one: an empty label is no label to Prometheus anyway.
            if let alias = figures.alias { labels.append(("alias", alias)) }
            writer.sample(MetricFamily.interfaceInfo.name, pairs: labels, UInt64(1))
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
        for counter in MetricFamily.interfaceCounters {
            writer.family(counter.family)
            for (index, labels) in zip(shown, labelSets) {
                writer.sample(counter.family.name, labelSet: labels, counter.value(interfaces[index]))
            }
        }
    }

    /// Who owns each present container's or namespace's interface.
    static func writeOwners(
        _ interfaces: [InterfaceFigures], showing isShown: (InterfaceFigures) -> Bool, to writer: inout ExpositionWriter
    ) {
        writer.family(.ownerInfo)
        for figures in interfaces where isShown(figures) {
            guard let owner = figures.present?.owner, let subject = SubjectName.owner(of: figures.name) else { continue }
            writer.sample(MetricFamily.ownerInfo.name, pairs: [("interface", figures.name)] + subject.kind.metricLabels(subject.name)
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
        let shown = exposedNetworks(networks)
        let labelSets = shown.map { ExpositionWriter.labelSet(pairs: networkLabels($0)) }
        for counter in MetricFamily.networkCounters {
            writer.family(counter.family)
            for (figures, labels) in zip(shown, labelSets) { writer.sample(counter.family.name, labelSet: labels, counter.value(figures)) }
        }
        writer.family(.networksNotExposed)
        writer.sample(MetricFamily.networksNotExposed.name, [:], UInt64(networks.count - shown.count))
    }

    /// The most series of applications exposed: a user who makes thousands of cgroups must not
    /// make every scrape thousands of series longer.
    public static let maximumApps = 500

    /// The busiest applications, up to ``maximumApps``, by subject; how many were left out is a
    /// gauge of its own, said once per scrape.
    static func writeApps(_ apps: [InterfaceFigures], to writer: inout ExpositionWriter) {
        guard !apps.isEmpty else { return }
        let shown = exposedApps(apps)
        let labelSets = shown.map { ExpositionWriter.labelSet(pairs: appLabels($0)) }
        for counter in MetricFamily.appCounters {
            writer.family(counter.family)
            for (figures, labels) in zip(shown, labelSets) { writer.sample(counter.family.name, labelSet: labels, counter.value(figures)) }
        }
        writer.family(.appsNotExposed)
        writer.sample(MetricFamily.appsNotExposed.name, [:], UInt64(apps.count - shown.count))
    }

    /// The networks exposed: those active now first, then the most recently seen, up to
    /// ``maximumNetworks``, by id.
    static func exposedNetworks(_ networks: [NetworkFigures]) -> [NetworkFigures] {
        let ordered = networks.sorted { a, b in
            ((a.interface != nil ? 1 : 0), a.record?.lastSeen ?? .infinity) > ((b.interface != nil ? 1 : 0), b.record?.lastSeen ?? .infinity)
        }
        return ordered.prefix(maximumNetworks).sorted { ($0.record?.network.id ?? "", $0.subject) < ($1.record?.network.id ?? "", $1.subject) }
    }

    /// A network's labels, in the family's order.
    static func networkLabels(_ figures: NetworkFigures) -> [(key: String, value: String)] {
        let network = figures.record?.network
        // A connection's id is anybody's text: shown as the terminal shows it (`\xNN` for
        // control characters), since an exposition is read in terminals too.
        return [
            ("network", network.map { InterfaceName.printable($0.id) } ?? "unknown"), ("uuid", network?.uuid ?? "unknown"),
            ("type", network?.type ?? "unknown"), ("metered", network?.metered.rawValue ?? Metered.unknown.rawValue),
        ]
    }

    /// The applications exposed: the busiest, up to ``maximumApps``, by subject.
    static func exposedApps(_ apps: [InterfaceFigures]) -> [InterfaceFigures] {
        func bytes(_ figures: InterfaceFigures) -> UInt64 { figures.total.traffic.rxBytes &+ figures.total.traffic.txBytes }
        return apps.sorted { (bytes($0), $1.name) > (bytes($1), $0.name) }.prefix(maximumApps).sorted { $0.name < $1.name }
    }

    /// An application's labels, in the family's order whatever its kind.
    static func appLabels(_ figures: InterfaceFigures) -> [(key: String, value: String)] {
        var labels: [(key: String, value: String)] = [("subject", figures.name), ("kind", figures.kind)]
        if let (kind, name) = SubjectKinds.kind(of: figures.name) { labels += kind.metricLabels(name) }
        let order = MetricFamily.appCounters[0].family.labels
        return labels.sorted { (order.firstIndex(of: $0.key) ?? order.count) < (order.firstIndex(of: $1.key) ?? order.count) }
    }

    /// One series per plan and gauge, labelled `plan` and `direction`: as many as the config has plans.
    static func writePlans(_ plans: [PlanFigures], to writer: inout ExpositionWriter) {
        guard !plans.isEmpty else { return }
        let labelSets = plans.map { ExpositionWriter.labelSet(["plan": $0.plan.name, "direction": $0.plan.direction.rawValue]) }
        for gauge in MetricFamily.planGauges {
            writer.family(gauge.family)
            for (plan, labels) in zip(plans, labelSets) {
                writer.sample(gauge.family.name, labelSet: labels, gauge.value(plan))
            }
        }
    }

    static func writeProcess(_ process: ProcessFigures, to writer: inout ExpositionWriter) {
        writer.family(.processCPU)
        writer.sample(MetricFamily.processCPU.name, [:], process.cpuSeconds)
        for (family, value) in [(MetricFamily.processResident, process.residentBytes), (.processVirtual, process.virtualBytes)] {
            writer.family(family)
            writer.sample(family.name, [:], value)
        }
        writer.family(.processStart)
        writer.sample(MetricFamily.processStart.name, [:], process.startTime)
        writer.family(.processOpenFDs)
        writer.sample(MetricFamily.processOpenFDs.name, [:], UInt64(process.openFDs))
        if let maxFDs = process.maxFDs {
            writer.family(.processMaxFDs)
            writer.sample(MetricFamily.processMaxFDs.name, [:], maxFDs)
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
