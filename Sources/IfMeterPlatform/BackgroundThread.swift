#if canImport(Glibc)
import Glibc
#endif

/// Runs one closure on a new detached pthread.
public enum BackgroundThread {
    public static func run(_ body: @escaping @Sendable () -> Void) throws(PlatformError) {
        let box = Unmanaged.passRetained(ClosureBox(body)).toOpaque()
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

    private final class ClosureBox {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
