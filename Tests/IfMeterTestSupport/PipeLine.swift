import Foundation

extension FileHandle {
    /// The first line a child process writes, without its newline; what came before the end of
    /// the stream if it ended first, or before `seconds` passed (a child that hangs must not
    /// hang the test). Reads with read(2), retrying EINTR: Foundation's `availableData`
    /// returns empty data when a signal (another test's child exiting) interrupts it, which
    /// reads as if the child had said nothing.
    public func firstLine(seconds: Double = 60) -> String {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            var poller = pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)
            let remaining = Int32(max(0, deadline.timeIntervalSinceNow) * 1000)
            let ready = poll(&poller, 1, remaining)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { break }
            let count = Glibc.read(fileDescriptor, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            guard count == 1, byte != UInt8(ascii: "\n") else { break }
            line.append(byte)
        }
        return String(decoding: line, as: UTF8.self)
    }
}
