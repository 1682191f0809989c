import CLinkStats
import IfMeterCore

/// Where link counters come from.
public enum LinkSource: String, Hashable, Sendable, CaseIterable {
    /// rtnetlink through libnl-route: 64-bit counters, kind, operstate, link events.
    case netlink
    /// `getifaddrs()` `AF_PACKET` entries: 32-bit counters that wrap at 4 GiB, no kind or
    /// operstate. Used when netlink is unavailable.
    case getifaddrs
}

/// Every link the kernel reports right now, from one source.
public struct LinkListing: Sendable {
    public var source: LinkSource
    public var links: [Link]
    /// Said to the user when the preferred source failed and the fallback answered.
    public var warnings: [String]
}

/// Reads the link list from a chosen source, or from netlink with `getifaddrs` as fallback.
public enum LinkLister {
    /// One listing from `source`; with `source == nil`, netlink and then, if it fails,
    /// `getifaddrs` with a warning.
    public static func list(from source: LinkSource? = nil) throws(NoLinkSourceError) -> LinkListing {
        guard let source else {
            do {
                return try listing(from: .netlink)
            } catch let netlinkError {
                do {
                    var fallback = try listing(from: .getifaddrs)
                    fallback.warnings.append(
                        "\(netlinkError); using getifaddrs instead (32-bit counters, no kind or operstate)")
                    return fallback
                } catch {
                    throw NoLinkSourceError(failures: [netlinkError, error])
                }
            }
        }
        do {
            return try listing(from: source)
        } catch {
            throw NoLinkSourceError(failures: [error])
        }
    }

    private static func listing(from source: LinkSource) throws(KernelError) -> LinkListing {
        switch source {
        case .netlink: LinkListing(source: .netlink, links: try NetlinkSocket().dumpLinks(), warnings: [])
        case .getifaddrs: LinkListing(source: .getifaddrs, links: try getifaddrsLinks(), warnings: [])
        }
    }

    /// `getifaddrs()` `AF_PACKET` entries as links.
    public static func getifaddrsLinks() throws(KernelError) -> [Link] {
        var array = ifm_link_array()
        defer { ifm_link_array_free(&array) }
        let count = try KernelError.check(ifm_getifaddrs_links(&array), "getifaddrs")
        return UnsafeBufferPointer(start: array.items, count: count).map(Link.init)
    }
}

/// No source could list the links; carries each source's failure in the order tried.
public struct NoLinkSourceError: Error, Sendable, CustomStringConvertible {
    public var failures: [KernelError]

    public var description: String {
        "cannot read interface counters: " + failures.map(\.description).joined(separator: "; ")
    }
}
