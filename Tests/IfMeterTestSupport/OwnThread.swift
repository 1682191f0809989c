import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// Runs each test of a suite on a thread of its own instead of one of Swift Concurrency's
/// cooperative threads. An end-to-end test body blocks for most of its time (a daemon's
/// answer, a namespace's counters, a child's exit); on the cooperative pool, which is as wide as
/// the machine has cores, two such bodies hold a two-core machine's whole pool and every other
/// test waits behind them, though the machine is idle. Off the pool, as many run as Swift
/// Testing's parallelization width allows (twice the cores unless
/// `SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH` says otherwise). The body is still the
/// test's task, so `#expect` and its time limit still know which test they belong to.
public struct OwnThread: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // The suite's own scope runs nothing of a test's: only each test case moves.
        guard testCase != nil else { return try await function() }
        try await withTaskExecutorPreference(ThreadPerJob.executor) { try await function() }
    }
}

extension Trait where Self == OwnThread {
    /// Each test's body on a thread of its own (``OwnThread``).
    public static var ownThread: OwnThread { OwnThread() }
}

/// A task executor that runs every job it is given on a new thread. A test's task enqueues a
/// handful of jobs in its life (its start, and after each `await` in the testing library), and
/// a blocking body is one long job: a thread each costs nothing that matters and can never
/// leave one test waiting for another's.
final class ThreadPerJob: TaskExecutor {
    static let executor = ThreadPerJob()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        let body = Unmanaged.passRetained(JobBody { job.runSynchronously(on: executor) })
        // Every signal blocked in the new thread from its first instruction, as in libdispatch's
        // workers: Foundation learns that a child exited from SIGCHLD read through a signalfd,
        // and a thread with SIGCHLD unblocked would take the signal itself (and drop it), so
        // the child would stay a zombie and waiting for it would hang. The mask is set around
        // pthread_create because a thread inherits its creator's.
        var all = sigset_t(), previous = sigset_t()
        sigfillset(&all)
        pthread_sigmask(SIG_SETMASK, &all, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        // An end-to-end test's stack (Foundation, JSON of a few thousand links) within 8 MiB.
        pthread_attr_setstacksize(&attributes, 8 << 20)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let created = pthread_create(&thread, &attributes, { context in
            let body = Unmanaged<JobBody>.fromOpaque(context!).takeRetainedValue()
            body.run()
            return nil
        }, body.toOpaque())
        precondition(created == 0, "pthread_create failed: \(created)")
    }
}

/// A job's run, carried into its thread.
private final class JobBody {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
}
