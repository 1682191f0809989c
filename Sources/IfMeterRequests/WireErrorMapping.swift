import IfMeterStore
import IfMeterWire

extension WireError {
    /// The one mapping from what a handler threw to the error a peer reads: a handler's own
    /// ``WireError`` as it is, a database failure as `store_error`, and anything else — a
    /// ``PlatformError`` from a system call — as `internal_error`, never blamed on the store.
    public init(answering error: any Error, id: RequestID?) {
        switch error {
        case let error as WireError: self.init(error.code, error.message, id: id)
        case let error as StoreError: self.init(.storeError, error.description, id: id)
        default: self.init(.internalError, "\(error)", id: id)
        }
    }
}
