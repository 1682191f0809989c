import IfMeterCore
import IfMeterService

/// The scope families (docs/METRICS.md, docs/SCOPES.md): each interface's, network's and
/// application's bytes by `scope` — `local`, `internet` or `unknown` — as series of their own,
/// so that the families without a scope keep every series they had.
extension MetricFamily {
    /// Each family with the figure it takes from a scope subject, by the section of the subject
    /// it splits.
    static let scopeCounters: [(family: MetricFamily, section: SubjectSection, value: @Sendable (InterfaceFigures) -> UInt64)] = [
        (scopeCounter("ifmeter_interface_scope_receive_bytes_total", "received", ["interface", "class"], of: "an interface"),
         .interfaces, { $0.total.traffic.rxBytes }),
        (scopeCounter("ifmeter_interface_scope_transmit_bytes_total", "transmitted", ["interface", "class"], of: "an interface"),
         .interfaces, { $0.total.traffic.txBytes }),
        (scopeCounter("ifmeter_network_scope_receive_bytes_total", "received", networkCounters[0].family.labels, of: "a network"),
         .networks, { $0.total.traffic.rxBytes }),
        (scopeCounter("ifmeter_network_scope_transmit_bytes_total", "transmitted", networkCounters[0].family.labels, of: "a network"),
         .networks, { $0.total.traffic.txBytes }),
        (scopeCounter("ifmeter_app_scope_receive_bytes_total", "received", appCounters[0].family.labels, of: "an application"),
         .apps, { $0.total.traffic.rxBytes }),
        (scopeCounter("ifmeter_app_scope_transmit_bytes_total", "transmitted", appCounters[0].family.labels, of: "an application"),
         .apps, { $0.total.traffic.txBytes }),
    ]

    private static func scopeCounter(_ name: String, _ direction: String, _ labels: [String], of subject: String) -> MetricFamily {
        MetricFamily(name, .counter, unit: "bytes", labels: labels + ["scope"],
                     help: "Bytes \(direction) by \(subject) whose far end was on a network this host is attached to or in "
                        + "local_prefixes (scope=\"local\"), anywhere else (scope=\"internet\"), or not known (scope=\"unknown\": "
                        + "counted where no scope program ran, or before it did), since ifmeter first counted that scope. The three "
                        + "add up to the subject's own bytes since scopes were counted: do not add them to it. An estimate.")
    }
}

extension MetricsExposition {
    /// Each scope subject's series, beside the subject's own: an interface's if its series are
    /// shown, a network's or an application's if theirs are exposed; labelled as those, and
    /// `scope`.
    static func writeScopes(_ scopes: [InterfaceFigures], of snapshot: MeterSnapshot,
                            showing isShown: (InterfaceFigures) -> Bool, to writer: inout ExpositionWriter) {
        guard !scopes.isEmpty else { return }
        let interfaces = Dictionary(snapshot.interfaces.filter(isShown).map { ($0.name, $0) }) { first, _ in first }
        let networks = Dictionary(exposedNetworks(snapshot.networks).map { ($0.subject, $0) }) { first, _ in first }
        let apps = Dictionary(exposedApps(snapshot.apps).map { ($0.name, $0) }) { first, _ in first }
        var series: [SubjectSection: [(labels: [UInt8], figures: InterfaceFigures)]] = [:]
        for figures in scopes {
            guard let (scope, subject) = ScopeKind.parse(figures.name) else { continue }
            let labels: [(key: String, value: String)]
            let section: SubjectSection
            if let interface = interfaces[subject] {
                (section, labels) = (.interfaces, [("interface", subject), ("class", interface.interfaceClass)])
            } else if let network = networks[subject] {
                (section, labels) = (.networks, networkLabels(network))
            } else if let app = apps[subject] {
                (section, labels) = (.apps, appLabels(app))
            } else {
                continue
            }
            series[section, default: []].append((ExpositionWriter.labelSet(pairs: labels + [("scope", scope.name)]), figures))
        }
        for counter in MetricFamily.scopeCounters {
            guard let written = series[counter.section] else { continue }
            writer.family(counter.family)
            for (labels, figures) in written { writer.sample(counter.family.name, labelSet: labels, counter.value(figures)) }
        }
    }
}
