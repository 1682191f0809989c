import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// A thread of its own for one resource the loop hands work to, with each result coming back
/// to the loop in the order the jobs ran, woken by a pipe the loop watches. Jobs run in the
/// order handed over within a ``Lane``; a job of the ``Lane/later`` lane runs when no job of the
/// first is waiting, or after ``firstInARow`` of them ran while it waited: anonymous HTTP
/// clients' work keeps root's socket requests, saves and samples waiting behind at most one of
/// its jobs, and a socket client busy without pause cannot starve the page.
///
/// The daemon has three (IfMeterDaemon's `Workers.swift`): the store's (once loaded, saves,
/// queries, imports and deletions run there, so a save of thousands of interfaces never delays
/// `status`, a sample or a watcher, and a query handed over after a save sees what it wrote),
/// the kernel's counters dump, and the answers' (`interfaces` grows with the links, megabytes
/// at thousands; docs/BENCHMARKS.md has the figures).
public final class BackgroundWorker<Resource> {
    public typealias Lane = WorkLane

    private typealias Job = (id: Int, body: @Sendable (Resource) -> Void)

    /// The worker's side: the queues of jobs and which have finished.
    private final class Queue: @unchecked Sendable {
        var mutex = pthread_mutex_t()
        var changed = pthread_cond_t()
        var first: [Job] = []
        var later: [Job] = []
        var running = false
        var stopping = false
        /// First-lane jobs run in a row while a later one waited.
        var passed = 0
        /// What jobs handed the loop and it has not yet taken, in the order handed: a job's
        /// parts (``BackgroundWorker/run(in:_:parts:then:)``), then its end.
        var finished: [(id: Int, isPart: Bool)] = []
        let resource: Resource

        init(resource: Resource) {
            self.resource = resource
            pthread_mutex_init(&mutex, nil)
            pthread_cond_init(&changed, nil)
        }

        func withLock<T>(_ body: () -> T) -> T {
            pthread_mutex_lock(&mutex)
            defer { pthread_mutex_unlock(&mutex) }
            return body()
        }
    }

    /// Where a job leaves its result for the loop.
    private final class Slot<T>: @unchecked Sendable {
        var value: T?
    }

    /// Where a job leaves the parts it hands over while it runs; taken under the queue's lock.
    private final class Parts<Part>: @unchecked Sendable {
        var waiting: [Part] = []
    }

    private let queue: Queue
    /// The pipe's ends: the worker writes a byte per finished job, the loop reads them.
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private var source: EventSource?
    /// The loop's side: what to do with each job's result, by the job's number.
    private var completions: [Int: () -> Void] = [:]
    /// The loop's side of parts: takes the next part of the job and hands it on.
    private var partHandlers: [Int: () -> Void] = [:]
    private var nextID = 0

    /// Starts the thread, named `name` (``BackgroundThread/run(named:_:)``); the jobs' use of
    /// `resource` is its alone from now on.
    public init(_ resource: Resource, named name: String, loop: EventLoop) throws(PlatformError) {
        queue = Queue(resource: resource)
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw PlatformError.system("pipe", errno) }
        (wakeRead, wakeWrite) = (fds[0], fds[1])
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            // A full pipe must not block the worker: the loop reads the queue, not the bytes.
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        let queue = self.queue
        let wakeWrite = self.wakeWrite
        // A plain thread, not Dispatch: libdispatch's workers adjust their priority, which the
        // service's syscall filter (~@resources) refuses.
        try BackgroundThread.run(named: name) { Self.work(queue, wake: wakeWrite) }
        source = try loop.watch(fd: wakeRead, events: UInt32(EPOLLIN.rawValue)) { [unowned self] _ in self.deliver() }
    }

    deinit {
        queue.withLock {
            queue.stopping = true
            pthread_cond_broadcast(&queue.changed)
        }
    }

    /// First-lane jobs that run while a later-lane job waits, before it goes next.
    public static var firstInARow: Int { 8 }

    /// Forgets the jobs of `lane` not yet begun: they never run, and their results never come
    /// (the final save at stop waits for no HTTP client's question).
    public func discardWaiting(_ lane: Lane) {
        let dropped = queue.withLock {
            defer {
                switch lane {
                case .first: queue.first.removeAll()
                case .later: queue.later.removeAll()
                }
            }
            return lane == .first ? queue.first.map(\.id) : queue.later.map(\.id)
        }
        for id in dropped { (completions[id], partHandlers[id]) = (nil, nil) }
    }

    /// Runs `work` with the resource on the worker thread, then `then` with its result on the loop.
    public func run<T>(in lane: Lane = .first, _ work: @escaping @Sendable (Resource) -> T, then: @escaping (T) -> Void) {
        let slot = Slot<T>()
        let id = nextID
        nextID &+= 1
        completions[id] = { then(slot.value!) }
        let job: Job = (id, { resource in slot.value = work(resource) })
        queue.withLock {
            switch lane {
            case .first: queue.first.append(job)
            case .later: queue.later.append(job)
            }
            pthread_cond_broadcast(&queue.changed)
        }
    }

    /// Runs `work` as ``run(in:_:then:)`` does, and gives `part` on the loop, in order and before
    /// `then`, each part `work` hands to its second argument while it runs: a long answer goes
    /// out to its reader while the rest of it is being made.
    public func run<Part, T>(in lane: Lane = .first, _ work: @escaping @Sendable (Resource, _ handOver: (Part) -> Void) -> T,
                             parts part: @escaping (Part) -> Void, then: @escaping (T) -> Void) {
        let parts = Parts<Part>()
        let id = nextID
        let queue = self.queue
        let wake = wakeWrite
        partHandlers[id] = {
            let next = queue.withLock { parts.waiting.removeFirst() }
            part(next)
        }
        run(in: lane, { resource in
            work(resource) { next in
                queue.withLock {
                    parts.waiting.append(next)
                    queue.finished.append((id, true))
                }
                Self.wake(wake)
            }
        }, then: { [unowned self] result in
            partHandlers[id] = nil
            then(result)
        })
    }

    /// Waits for every job handed over and delivers its result: the final sample and save at stop.
    public func drain() {
        queue.withLock {
            while !queue.first.isEmpty || !queue.later.isEmpty || queue.running { pthread_cond_wait(&queue.changed, &queue.mutex) }
        }
        deliver()
    }

    /// Runs the results of finished jobs, in the order they ran.
    private func deliver() {
        var drained = [UInt8](repeating: 0, count: 512)
        while read(wakeRead, &drained, drained.count) == drained.count {}
        let finished = queue.withLock {
            defer { queue.finished.removeAll(keepingCapacity: true) }
            return queue.finished
        }
        for (id, isPart) in finished {
            if isPart {
                partHandlers[id]?()
            } else {
                completions.removeValue(forKey: id)?()
            }
        }
    }

    private static func work(_ queue: Queue, wake: Int32) {
        while true {
            let job: Job? = queue.withLock {
                while queue.first.isEmpty && queue.later.isEmpty && !queue.stopping { pthread_cond_wait(&queue.changed, &queue.mutex) }
                let next: Job?
                if !queue.later.isEmpty && (queue.first.isEmpty || queue.passed >= Self.firstInARow) {
                    next = queue.later.removeFirst()
                    queue.passed = 0
                } else if !queue.first.isEmpty {
                    next = queue.first.removeFirst()
                    queue.passed = queue.later.isEmpty ? 0 : queue.passed + 1
                } else {
                    next = nil
                }
                queue.running = next != nil
                return next
            }
            guard let job else { return }
            job.body(queue.resource)
            queue.withLock {
                queue.running = false
                queue.finished.append((job.id, false))
                pthread_cond_broadcast(&queue.changed)
            }
            Self.wake(wake)
        }
    }

    /// Wakes the loop to deliver what was handed over.
    private static func wake(_ fd: Int32) {
        var byte: UInt8 = 1
        _ = write(fd, &byte, 1)
    }
}

/// Which of a ``BackgroundWorker``'s queues a job waits in.
public enum WorkLane: Sendable {
    /// The daemon's own work and its socket's peers: first, in order.
    case first
    /// Work for the HTTP listener's clients: in order, when the first lane is empty.
    case later
}
