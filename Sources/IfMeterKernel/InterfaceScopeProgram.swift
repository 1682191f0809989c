import CAppCounters
import IfMeterCore
#if canImport(Glibc)
import Glibc
#endif

/// The interface scope programs (docs/SCOPES.md): tcx programs that `ifmeterd --attach-apps`
/// pins unattached, and that this attaches to one interface at a time as pinned bpf_links, for
/// `ifmeterd --attach-link`. Needs CAP_BPF and CAP_NET_ADMIN; the daemon never calls it.
public enum InterfaceScopeProgram {
    /// What one attach did.
    public struct Attached: Equatable, Sendable {
        /// Links made now: 2 for an interface newly covered, 0 for one covered already.
        public var linksMade: Int
        /// Pins of links whose interface is gone, removed first.
        public var pinsPruned: Int

        public init(linksMade: Int, pinsPruned: Int) {
            self.linksMade = linksMade
            self.pinsPruned = pinsPruned
        }
    }

    /// Attaches the programs to `ifindex` of the calling thread's network namespace, for ingress
    /// and egress, and makes its local and internet entries in `link_scopes`. Idempotent.
    public static func attach(ifindex: Int32, pinDirectory: String) throws(KernelError) -> Attached {
        var result = ifmeter_tcx_result()
        let status = ifmeter_tcx_attach(pinDirectory, ifindex, &result)
        guard status == 0 else {
            let hint: String? = switch -status {
            case EPERM, EACCES: "run as root, or with CAP_BPF and CAP_NET_ADMIN"
            case ENODEV: "no interface has that index"
            case EPROTO: "the programs are not pinned there: run ifmeterd --attach-apps first"
            default: nil
            }
            throw KernelError(call: "attach the scope programs to ifindex \(ifindex), pinned in \(pinDirectory)",
                              errno: -status, detail: hint)
        }
        return Attached(linksMade: Int(result.links_made), pinsPruned: Int(result.pins_pruned))
    }

    /// Removes the pins of links whose interface is gone (and their `link_scopes` entries).
    public static func prune(pinDirectory: String) throws(KernelError) -> Int {
        let status = ifmeter_tcx_prune(pinDirectory)
        guard status >= 0 else { throw KernelError(call: "prune tcx link pins in \(pinDirectory)", errno: -status) }
        return Int(status)
    }
}
