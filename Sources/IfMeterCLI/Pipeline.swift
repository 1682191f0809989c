#if canImport(Glibc)
import Glibc
#endif

/// Work done on one other thread, in the order it is handed over, while the handing thread goes
/// on: a view of thousands of interfaces rendered and written while the rest of its answer is
/// still read (on two cores, its reading and its writing no longer add up).
///
/// Whatever `work` touches is the other thread's until ``finish()`` returns (it joins it).
final class Pipeline<Item>: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var changed = pthread_cond_t()
    private var waiting: [Item] = []
    private var closed = false
    private var thread = pthread_t()
    private var running = false
    private let work: (Item) -> Void

    /// Starts the thread; without one (pthread_create failed), each item is done when handed.
    init(_ work: @escaping (Item) -> Void) {
        self.work = work
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&changed, nil)
        running = ThreadBody.start({ [self] in drain() }, &thread)
    }

    deinit {
        pthread_cond_destroy(&changed)
        pthread_mutex_destroy(&mutex)
    }

    func hand(_ item: Item) {
        guard running else { return work(item) }
        pthread_mutex_lock(&mutex)
        waiting.append(item)
        pthread_cond_signal(&changed)
        pthread_mutex_unlock(&mutex)
    }

    /// Returns once every item handed over is done, and the thread has ended.
    func finish() {
        guard running else { return }
        pthread_mutex_lock(&mutex)
        closed = true
        pthread_cond_signal(&changed)
        pthread_mutex_unlock(&mutex)
        pthread_join(thread, nil)
        running = false
    }

    private func drain() {
        while true {
            pthread_mutex_lock(&mutex)
            while waiting.isEmpty && !closed { pthread_cond_wait(&changed, &mutex) }
            let items = waiting
            waiting.removeAll()
            let done = closed && items.isEmpty
            pthread_mutex_unlock(&mutex)
            if done { return }
            for item in items { work(item) }
        }
    }
}

/// A thread's body for pthread_create, which takes a C function: not generic, so that the
/// function captures nothing.
private final class ThreadBody {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }

    /// Starts a joinable thread running `body`; false if none could be made.
    static func start(_ body: @escaping () -> Void, _ thread: inout pthread_t) -> Bool {
        let context = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        let started = pthread_create(&thread, nil, { context in
            Unmanaged<ThreadBody>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, context) == 0
        if !started { Unmanaged<ThreadBody>.fromOpaque(context).release() }
        return started
    }
}
