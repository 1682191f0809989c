import IfMeterCore
import CLinkStats
#if canImport(Glibc)
import Glibc
#endif

/// A failed kernel call: which operation, and the errno it ended with.
public struct KernelError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The failing operation, as a user would name it ("netlink RTM_GETSTATS dump").
    public var call: String
    public var errno: Int32
    /// What a user can do about it, or what the library said beyond the errno ("run as root,
    /// or with CAP_BPF and CAP_NET_ADMIN"); nil when the errno says it all.
    public var detail: String?

    public init(call: String, errno: Int32, detail: String? = nil) {
        self.call = call
        self.errno = errno
        self.detail = detail
    }

    /// "netlink RTM_GETSTATS dump failed: Operation not permitted (EPERM)", and "; DETAIL".
    public var description: String {
        let name = ifm_errno_name(errno).map { String(cString: $0) } ?? "errno \(errno)"
        let message = Errno(errno).description
        return "\(call) failed: \(message) (\(name))" + (detail.map { "; \($0)" } ?? "")
    }

    /// Turns a CLinkStats return value (a count, or -errno) into a count or a thrown error.
    static func check(_ result: Int32, _ call: String) throws(KernelError) -> Int {
        guard result >= 0 else { throw KernelError(call: call, errno: -result) }
        return Int(result)
    }
}
