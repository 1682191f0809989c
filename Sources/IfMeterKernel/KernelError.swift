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

    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// "netlink RTM_GETSTATS dump failed: Operation not permitted (EPERM)"
    public var description: String {
        let name = ifm_errno_name(errno).map { String(cString: $0) } ?? "errno \(errno)"
        let message = Errno(errno).description
        return "\(call) failed: \(message) (\(name))"
    }

    /// Turns a CLinkStats return value (a count, or -errno) into a count or a thrown error.
    static func check(_ result: Int32, _ call: String) throws(KernelError) -> Int {
        guard result >= 0 else { throw KernelError(call: call, errno: -result) }
        return Int(result)
    }
}
