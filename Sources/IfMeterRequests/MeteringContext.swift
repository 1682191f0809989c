import IfMeterService
import IfMeterStore
import IfMeterWire

/// What the request handlers need of a running daemon: its figures and the few things a
/// command makes it do. The daemon is one; a test or a fuzz target builds another from values,
/// with no socket, loop or lock.
public protocol MeteringContext: AnyObject {
    /// What is counted now; nil until the daemon is running (loading its database, first dump).
    var service: MeterService? { get }
    /// Whether it is running, without copying the service out to see.
    var isMetering: Bool { get }
    /// Wall-clock seconds now.
    var now: Double { get }
    /// Where `reload` reads the configuration from.
    var configPath: String { get }
    /// The `status` answer as of now: the daemon's own facts beside the service's summary.
    func status() -> StatusResult
    /// The `metrics` answer: the exposition `/metrics` serves, as text.
    func metrics(_ request: MetricsRequest.Checked) -> MetricsResult
    /// Hands what is pending to a save before an import, which writes history beside it.
    func saveBeforeImport()
    /// Re-reads the configuration: nil when it is in force, else what is wrong with it.
    func reload(requestedBy uid: UInt32) -> String?
    /// Drops `name`'s pending traffic from the service at once; whether the service knew it.
    func forgetPending(_ name: String) -> Bool
}

/// Who sent a request, as the server admitted it.
public struct Peer: Hashable, Sendable {
    public var uid: UInt32
    /// Root, ifmeterd's own user, or a member of `admin_group`.
    public var isAdmin: Bool

    public init(uid: UInt32, isAdmin: Bool) {
        self.uid = uid
        self.isAdmin = isAdmin
    }
}

/// How a request is answered: the bytes now, or work for another thread and the bytes it
/// makes. Which one is the command's ``CommandPolicy`` (`offLoop`), held to it by a test.
public enum Answer: Sendable {
    /// A line to send now.
    case line([UInt8])
    /// Work for the store's thread; its result is the line, and what to change in the service
    /// on the loop before sending it.
    case fromStore(@Sendable (Store) -> StoreAnswer)
    /// Work for the store's thread that hands the first bytes of its line to the second
    /// argument as it writes them (to be sent while it writes the rest), then ends the line.
    case streamedFromStore(@Sendable (Store, _ handOver: ([UInt8]) -> Void) -> StreamedLine)
    /// Built on another thread from a copy of the service taken now (a `Sendable` value).
    case offLoop(@Sendable () -> [UInt8])
    /// After a fresh sample: ``RequestHandlers/sampled(id:)`` then.
    case afterSample
    /// A `watch` stream begins with this line; later lines follow each sample and event.
    case watch([UInt8])
}

/// How a line whose first bytes were handed over in parts ends.
public enum StreamedLine: Sendable {
    /// The line's last bytes, its newline included (all of it, if nothing was handed over).
    case rest([UInt8])
    /// What went wrong after parts were handed over. A reader that has the parts cannot be told
    /// in the line (it is torn): its connection is closed, and the daemon logs this. A reader
    /// that holds the parts unsent (the HTTP API) is answered this error instead.
    case torn(WireError)

    /// The line a reader that held the parts unsent answers: the parts and the rest, or the error.
    public func whole(after parts: [UInt8]) -> [UInt8] {
        switch self {
        case .rest(let rest): parts.isEmpty ? rest : parts + rest
        case .torn(let error): LineEncoder.failure(error)
        }
    }
}

/// What a job on the store's thread answers.
public struct StoreAnswer: Sendable {
    public var line: [UInt8]
    /// Applied to the service on the loop, before the line is sent.
    public var update: (@Sendable (inout MeterService, Double) -> Void)?

    public init(line: [UInt8], update: (@Sendable (inout MeterService, Double) -> Void)? = nil) {
        self.line = line
        self.update = update
    }
}
