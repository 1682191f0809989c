import IfMeterStore
import IfMeterHTTP
import IfMeterPlatform
import IfMeterServer
import IfMeterHistory
import IfMeterKernel
import IfMeterPlatform

extension PlatformError {
    /// A store failure at start, by what the store says went wrong.
    init(_ error: StoreError) {
        let kind: Kind = switch error.kind {
        case .locked: .unavailable
        case .corrupt, .newerSchema: .dataError
        case .cannotOpen, .readOnly, .full: .cannotCreate
        case .io: .ioError
        case .other: .software
        }
        self.init(kind, error.description)
    }

    /// A kernel failure at start: netlink refused or missing.
    init(_ error: KernelError) {
        self.init(.unavailable, "cannot start metering: \(error)", call: error.call, errno: error.errno)
    }
}
