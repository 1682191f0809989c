import IfMeterHTTP
import IfMeterPlatform
import IfMeterServer
import IfMeterKernel
import IfMeterPlatform
import IfMeterStore

/// The store's thread.
typealias StoreWorker = BackgroundWorker<Store>

/// The thread that takes the kernel's counters dump.
typealias KernelWorker = BackgroundWorker<LinkFeeds>

/// The thread that builds answers from a copy of the meter's state (`MeterService` is a
/// `Sendable` value: the copy shares its storage until the loop next changes it).
typealias AnswerWorker = BackgroundWorker<Void>
