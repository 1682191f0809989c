import IfMeterCore
import IfMeterKernel

/// Finds who owns the namespaces behind host-side links and the taps, from what the kernel and
/// each ``OwnerSource`` expose (docs/NAMESPACES.md): each source in the order of ``sources``
/// names what the ones before it did not, and what none names is nobody's.
///
/// Used by one thread at a time: the kernel's, beside a sample's counters dump, and the loop's
/// when no dump is out (the start, the last sample) — hence `@unchecked Sendable`.
public final class OwnerDirectory: @unchecked Sendable {
    /// The sources, in the order they are asked. A runtime's state comes before a bound name,
    /// which Podman, Docker and the CNI runtimes give their containers' and pods' namespaces too; LXC binds none, so it is
    /// asked only for what no file named; a namespace's processes come last, for what no
    /// runtime named for certain.
    public static let sources: [any OwnerSource.Type] = [
        NspawnSource.self,
        PodmanSource.self,
        DockerSource.self,
        KubernetesSource.self,
        NamedNamespaceSource.self,
        LXCSource.self,
        ProcessSource.self,
        LibvirtSource.self,
    ]

    public let paths: OwnerPaths
    private let socket: NetlinkSocket
    private let sources: [any OwnerSource]

    public init(paths: OwnerPaths = OwnerPaths()) throws(KernelError) {
        self.paths = paths
        socket = try NetlinkSocket()
        sources = Self.sources.map { (source: any OwnerSource.Type) -> any OwnerSource in source.init(paths: paths) }
    }

    /// Who owns what `unsettled` waits on: the namespaces behind host-side veths and the taps.
    public func lookUp(_ unsettled: Attribution.Unsettled) -> OwnerLookups {
        // Only veths with both ends here wait: no runtime's state is read for them.
        guard !unsettled.nsids.isEmpty || !unsettled.taps.isEmpty else { return OwnerLookups(namespaces: [:]) }
        var look = OwnerLook(unsettled, files: NamespaceFiles(socket: socket), sources: sources)
        for source in sources { source.find(&look) }
        for nsid in look.nsids where look.namespaces[nsid] == nil { look.namespaces[nsid] = .unknown }
        for ifindex in look.tapsSought.keys where look.taps[ifindex] == nil { look.taps[ifindex] = .unknown }
        return OwnerLookups(namespaces: look.namespaces, taps: look.taps)
    }

    /// Whose virtual machine's NIC each of `taps` (by ifindex) is.
    public func lookUp(taps: [Int32: TapSight]) -> [Int32: OwnerLookup] {
        lookUp(Attribution.Unsettled(taps: taps)).taps
    }

    /// Who owns each of `nsids` (as the daemon's namespace numbers them); `hostNames` are the
    /// host-side link names leading there (`ve-NAME` names an nspawn machine).
    public func lookUp(_ nsids: Set<Int32>, hostNames: [Int32: String]) -> [Int32: OwnerLookup] {
        lookUp(Attribution.Unsettled(nsids: nsids, hostNames: hostNames)).namespaces
    }
}
