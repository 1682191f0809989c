/// The machine-readable labels every figure carries (docs/PROTOCOL.md, "Labels"), so nobody
/// mistakes an interface-counter estimate for per-application or billing-grade accounting.
public enum EstimateLabel: String, Hashable, Sendable, CaseIterable {
    case estimate
    case interfaceCounters = "interface-counters"
    case notPerApp = "not-per-app"
    case includesOverhead = "includes-overhead"
    /// The traffic is counted again, encrypted and with overhead, on the link beneath.
    case tunnelDoubleCounted = "tunnel-double-counted"
    /// A container's or namespace's traffic read from the host's end of its veth, turned round
    /// to the container's point of view: rx is what the container received.
    case hostSideVeth = "host-side-veth"
    /// A virtual machine's traffic read from the host's end of its tap, turned round to the
    /// machine's point of view: rx is what the guest received.
    case hostSideTap = "host-side-tap"
    case resetInPeriod = "reset-in-period"
    case gapInPeriod = "gap-in-period"
    case implausibleDropped = "implausible-dropped"
    /// Link events were lost in the period (`events-lost`): a link that came and went then
    /// may be missing from the figure.
    case eventsLost = "events-lost"
    /// Raw kernel counters: since the interface was created or its driver last reset them.
    case kernelCountersSinceCreation = "kernel-counters-since-creation"
    /// A sum across interfaces that leaves out loopback, virtual and tunnel classes, so
    /// tunnelled traffic is not counted twice.
    case excludesLoopbackVirtualTunnel = "excludes-loopback-virtual-tunnel"
    /// Extrapolated to the end of a period at the pace so far; not traffic that happened.
    case projection
    /// 32-bit counters (the getifaddrs source) that wrap at 4 GiB.
    case counters32Bit = "32-bit-counters"
    /// Includes traffic imported from a vnStat database (`ifmeter import vnstat`): vnStat's
    /// own counting, with its known losses at counter resets and re-created interfaces.
    case importedVnstat = "imported-vnstat"
    /// Traffic of an interface whose network was not known when it crossed: NetworkManager
    /// was not running, or ifmeterd was not (`network:unknown`, docs/NETWORKS.md).
    case networkUnknown = "network-unknown"
    /// Counted per socket's cgroup by the application counter (docs/APPS.md), turned into its
    /// links' terms: another view of the interfaces' bytes, never added to them.
    case cgroupCounters = "cgroup-counters"
    /// Sockets' traffic on a link that could not be named: the counting map was full, or the
    /// cgroup went before it was named (`remainder:IFACE#unnamed`, docs/APPS.md).
    case unnamedApps = "unnamed-apps"
    /// Traffic whose far end is not known: counted before the scope program was attached to
    /// its link or the daemon wrote the local prefixes, or on a link it does not cover
    /// (`scope:unknown/…`, docs/SCOPES.md).
    case scopeUnknown = "scope-unknown"

    /// The labels that hold for every figure read from interface counters.
    public static let always: [EstimateLabel] = [
        .estimate, .interfaceCounters, .notPerApp, .includesOverhead,
    ]

    /// The labels that hold for every figure counted per cgroup (docs/APPS.md).
    public static let cgroupCounted: [EstimateLabel] = [.estimate, .cgroupCounters, .includesOverhead]

    /// The labels of a figure: `base` (what its kind is counted by: ``always`` for what
    /// interface counters count), then what applies to its class and period.
    public static func labels(base: [EstimateLabel] = always, tunnel: Bool, resets: Int, gaps: Int, implausibleDropped: Int,
                              eventsLost: Int = 0, imported: Bool = false, hostSide: EstimateLabel? = nil) -> [EstimateLabel] {
        var labels = base
        if imported { labels.append(.importedVnstat) }
        if tunnel { labels.append(.tunnelDoubleCounted) }
        if let hostSide { labels.append(hostSide) }
        if resets > 0 { labels.append(.resetInPeriod) }
        if gaps > 0 { labels.append(.gapInPeriod) }
        if implausibleDropped > 0 { labels.append(.implausibleDropped) }
        if eventsLost > 0 { labels.append(.eventsLost) }
        return labels
    }

    /// The footnote of views of applications (docs/APPS.md).
    public static let appsFootnote =
        "Estimates counted per cgroup, in each link's terms (link headers included): another view of the "
        + "interfaces' bytes, not added to them; remainder:IFACE is what no named application sent or received."

    /// The one-line footnote human output ends with.
    public static let footnote =
        "Estimates from interface counters: they include protocol overhead, are not per-application, "
        + "and tunnel traffic is counted again on the link beneath it."
}
