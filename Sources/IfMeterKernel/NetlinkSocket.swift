import CLinkStats
import IfMeterCore
#if canImport(Glibc)
import Glibc
#endif

/// A `NETLINK_ROUTE` socket for dumps, bound to the network namespace of the thread that
/// opened it. Reuses its receive buffer across calls; the dumps' C arrays live only for the
/// call that fills them.
public final class NetlinkSocket {
    /// For this module's other dumps (`OnLinkPrefixes`).
    let handle: OpaquePointer
    private var links = ifm_link_array()
    private var counters = ifm_counters_array()

    public init() throws(KernelError) {
        var handle: OpaquePointer?
        _ = try KernelError.check(ifm_nl_open(&handle), "netlink socket")
        self.handle = handle!
    }

    deinit {
        ifm_link_array_free(&links)
        ifm_counters_array_free(&counters)
        ifm_nl_close(handle)
    }

    /// Every link with its metadata and 64-bit counters: one `RTM_GETLINK` dump.
    public func dumpLinks() throws(KernelError) -> [Link] {
        // A full dump comes at start and after lost events only, and its C array is large:
        // freed, not kept from one to the next.
        defer { ifm_link_array_free(&links) }
        let count = try KernelError.check(ifm_nl_dump_links(handle, &links), "netlink RTM_GETLINK dump")
        return UnsafeBufferPointer(start: links.items, count: count).map(Link.init)
    }

    /// One link as the kernel has it now (`RTM_GETLINK` by index); nil when there is none.
    public func link(index: Int32) throws(KernelError) -> Link? {
        var raw = ifm_link()
        let result = ifm_nl_get_link(handle, index, &raw)
        if result == -ENODEV { return nil }
        _ = try KernelError.check(result, "netlink RTM_GETLINK of index \(index)")
        return Link(raw)
    }

    /// Messages of the last ``dumpLinks()`` that libnl could not parse: left out, not fatal.
    public var unparseableInLastDump: Int { links.skipped }

    /// The nsid this socket's namespace gives the network namespace `descriptor` (an open
    /// namespace file: `/run/netns/NAME`, `/proc/PID/ns/net`) refers to; nil when it has none,
    /// which is the case of every namespace no link of this one reaches.
    public func namespaceID(of descriptor: Int32) throws(KernelError) -> Int32? {
        let result = ifm_nl_netns_id(handle, descriptor)
        if result == -ENOENT { return nil }
        return Int32(try KernelError.check(result, "netlink RTM_GETNSID"))
    }

    /// The nsid this socket's namespace gives the network namespace of process `pid`; nil when
    /// it has none or the process is gone. Needs no right to trace the process.
    public func namespaceID(ofProcess pid: Int32) throws(KernelError) -> Int32? {
        let result = ifm_nl_netns_id_of_pid(handle, pid)
        if result == -ENOENT || result == -ESRCH { return nil }
        return Int32(try KernelError.check(result, "netlink RTM_GETNSID of pid \(pid)"))
    }

    /// Every link's 64-bit counters and nothing else: one `RTM_GETSTATS` dump. This is what a
    /// periodic sample costs; names and metadata come from ``dumpLinks()`` and link events.
    public func dumpCounters() throws(KernelError) -> [CounterReading] {
        // Kept between samples it would be memory per link for the whole run, to save one
        // mapping a sample: freed (docs/BENCHMARKS.md, memory per link).
        defer { ifm_counters_array_free(&counters) }
        let count = try KernelError.check(
            ifm_nl_dump_counters(handle, &counters), "netlink RTM_GETSTATS dump")
        return UnsafeBufferPointer(start: counters.items, count: count).map {
            CounterReading(ifindex: $0.ifindex, counters: LinkCounters($0.counters))
        }
    }
}
