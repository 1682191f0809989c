#if canImport(Glibc)
import Glibc
#endif

/// Runs one closure on a new detached pthread.
public enum BackgroundThread {
    /// `name` (at most 15 bytes) is what `top -H`, `ps -L` and /proc/PID/task/TID/comm show for
    /// the thread: an admin sees which of the daemon's threads spends the time.
    public static func run(named name: String, _ body: @escaping @Sendable () -> Void) throws(PlatformError) {
        let box = Unmanaged.passRetained(ClosureBox { Self.name(name); body() }).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            let box = Unmanaged<ClosureBox>.fromOpaque(context!).takeRetainedValue()
            box.body()
            return nil
        }, box)
        guard result == 0 else {
            Unmanaged<ClosureBox>.fromOpaque(box).release()
            throw PlatformError.system("pthread_create", result)
        }
        pthread_detach(thread)
    }

    /// Names the calling thread through its own `comm` file (what pthread_setname_np does;
    /// Glibc's module does not export it). A thread that cannot be named stays unnamed:
    /// nothing depends on it.
    private static func name(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    private final class ClosureBox {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
