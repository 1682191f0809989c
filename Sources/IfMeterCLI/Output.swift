import IfMeterCore
import IfMeterJSON
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// Standard output, buffered; `flush` after each update of a stream (`live`, `log --follow`).
public final class Output {
    private var buffer: [UInt8] = []
    private let fd: Int32

    public init(fd: Int32 = STDOUT_FILENO) {
        self.fd = fd
    }

    deinit { flush() }

    /// Human text: names and messages come from the kernel, the daemon and imported files, so
    /// control and direction-override characters are shown escaped, never sent to the terminal.
    func write(_ text: String) {
        InterfaceName.appendPrintable(text, keepingLines: true, to: &buffer)
        if buffer.count > 1 << 16 { flush() }
    }

    /// A terminal control sequence of the client's own (`live` redrawing in place), as it is.
    func control(_ sequence: String) {
        buffer += sequence.utf8
    }

    /// One line of JSON, written by the value itself as the daemon writes its answers: keys
    /// sorted, so output is stable for scripts and diffs.
    func json(_ value: some JSONWritable) {
        var writer = JSONWriter(capacity: 1 << 16)
        value.write(to: &writer)
        buffer += writer.bytes
        write("\n")
    }

    /// A line passed through as it came (the daemon's or the log's own JSON).
    func raw(_ line: [UInt8]) {
        buffer += line
        write("\n")
    }

    /// Why a write failed (a full disk, a closed file): nothing more is written, and the
    /// command fails with it instead of exiting 0 over a truncated output.
    public private(set) var failure: Errno?

    public func flush() {
        var offset = 0
        while offset < buffer.count, failure == nil {
            let written = buffer[offset...].withUnsafeBytes { raw in retryingEINTR { Glibc.write(fd, raw.baseAddress, raw.count) } }
            guard written > 0 else {
                failure = written < 0 ? Errno.current : Errno(EIO)
                break
            }
            offset += written
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
