#if canImport(Glibc)
import IfMeterCore
import Glibc
#endif

/// The write end of the self-pipe the handler writes to; a global, because a C signal handler
/// cannot capture anything. Written once, before the handlers are installed.
nonisolated(unsafe) private var signalPipeWriteEnd: Int32 = -1

/// Signals turned into a readable descriptor (the self-pipe trick: Glibc's Swift module has no
/// `signalfd`), so a `poll` on the daemon's socket or the log directory ends cleanly on Ctrl-C.
final class SignalDescriptor {
    enum Wake { case signal, readable, timeout }
    private let readEnd: FileDescriptor

    init(_ signals: [Int32]) throws(CLIError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0, let readEnd = FileDescriptor(adopting: ends[0]) else {
            throw CLIError(.failure, "cannot create a pipe: \(Errno.current.description)")
        }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            // Non-blocking: a handler must never block on a full pipe.
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        self.readEnd = readEnd
        signalPipeWriteEnd = ends[1]
        var set = sigset_t()
        sigemptyset(&set)
        for number in signals {
            signal(number) { _ in
                var byte: UInt8 = 1
                _ = write(signalPipeWriteEnd, &byte, 1)
            }
            sigaddset(&set, number)
        }
        // A parent may have started us with these blocked (the mask is inherited across exec).
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// Waits until a signal arrives, `other` is readable, or the timeout passes; a signal wins.
    func wait(alongside other: Int32, timeoutMilliseconds: Int32 = -1) throws(CLIError) -> Wake {
        var fds = [pollfd(fd: readEnd.rawValue, events: Int16(POLLIN), revents: 0), pollfd(fd: other, events: Int16(POLLIN), revents: 0)]
        let ready = try valueOrErrno { poll(&fds, 2, timeoutMilliseconds) }.mapError { CLIError(.failure, "poll failed: \($0)") }.get()
        if ready == 0 { return .timeout }
        return fds[0].revents != 0 ? .signal : .readable
    }
}
