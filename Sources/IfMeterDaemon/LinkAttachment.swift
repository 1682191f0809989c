import IfMeterCore
import IfMeterKernel
import IfMeterPlatform
#if canImport(Glibc)
import Glibc
#endif

/// `ifmeterd --attach-link-stdin` and `--attach-link IFINDEX` (docs/SCOPES.md, "Least
/// privilege"): root's short step that covers one interface with the scope programs the root
/// step pinned. Under `ifmeterd-attach@.service` (socket-activated, `Accept=yes`, one process
/// a connection) it reads one line, `attach IFINDEX`, from its socket, answers `ok` or
/// `error: WHY`, and exits: the daemon asks for its links without ever holding CAP_NET_ADMIN.
struct LinkAttachment {
    let pinDirectory: String

    /// The longest request line, its newline included.
    static let maximumLine = 64

    /// `prune`: the daemon saw a covered link leave its namespace (deleted, or moved to
    /// another, where its programs would go on counting under an ifindex that may be another
    /// link's here): the pins of links not on an interface of this namespace are removed.
    static let pruneLine = Array("prune".utf8)

    /// A request line's ifindex, or why it is not one: `attach N`, N in 1…2^31−1 written as
    /// the kernel writes it (no sign, no leading zero), then a newline or the end.
    static func parse(_ line: [UInt8]) -> Result<Int32, LineError> {
        var bytes = line[...]
        if bytes.last == 0x0A { bytes = bytes.dropLast() }
        guard bytes.count < maximumLine else { return .failure(LineError("the line is longer than \(maximumLine) bytes")) }
        let prefix = Array("attach ".utf8)
        guard bytes.starts(with: prefix) else { return .failure(LineError("expected \"attach IFINDEX\" or \"prune\"")) }
        let digits = bytes.dropFirst(prefix.count)
        guard !digits.isEmpty, digits.count <= 10, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), digits.first != 0x30,
              let value = Int64(String(decoding: digits, as: UTF8.self)), value <= Int64(Int32.max) else {
            return .failure(LineError("expected an interface index from 1 to \(Int32.max) after \"attach \""))
        }
        return .success(Int32(value))
    }

    struct LineError: Error, Equatable, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// One request from standard input, its answer on standard output. Exit status 0 for `ok`.
    func runStdin() -> Int32 {
        let line: [UInt8]
        switch Self.readLine(from: STDIN_FILENO, timeoutMilliseconds: 5000) {
        case .success(let read): line = read
        case .failure(let error): return answer("error: \(error)", status: PlatformError.Kind.usage.rawValue)
        }
        if line.last == 0x0A ? Array(line.dropLast()) == Self.pruneLine : line == Self.pruneLine { return prune() }
        switch Self.parse(line) {
        case .success(let ifindex): return attach(ifindex)
        case .failure(let error): return answer("error: \(error)", status: PlatformError.Kind.usage.rawValue)
        }
    }

    /// `--attach-link IFINDEX`, for an administrator: the same step, said on standard output.
    func run(ifindex: Int32) -> Int32 { attach(ifindex) }

    private func attach(_ ifindex: Int32) -> Int32 {
        // Loopback never leaves the host: it is never split (docs/SCOPES.md), and the programs
        // would only cost there.
        var name = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        if if_indextoname(UInt32(ifindex), &name) != nil,
           let flags = try? WholeFile.read("/sys/class/net/\(String(cString: name))/flags", limit: 64),
           let value = UInt32(String(decoding: flags, as: UTF8.self).filter { $0.isHexDigit || $0 == "x" }.dropFirst(2), radix: 16),
           value & UInt32(IFF_LOOPBACK) != 0 {
            return answer("error: ifindex \(ifindex) is loopback, whose traffic is never split", status: PlatformError.Kind.usage.rawValue)
        }
        do {
            let attached = try InterfaceScopeProgram.attach(ifindex: ifindex, pinDirectory: pinDirectory)
            if attached.pinsPruned > 0 {
                Diagnostics.notice("removed \(attached.pinsPruned) scope link pin(s) of interfaces that are gone")
            }
            return answer("ok", status: 0)
        } catch {
            Diagnostics.error("ifindex \(ifindex): \(error)")
            let status = error.errno == EPERM || error.errno == EACCES
                ? PlatformError.Kind.noPermission.rawValue : PlatformError.Kind.unavailable.rawValue
            return answer("error: \(error)", status: status)
        }
    }

    private func prune() -> Int32 {
        do {
            let pruned = try InterfaceScopeProgram.prune(pinDirectory: pinDirectory)
            if pruned > 0 { Diagnostics.notice("removed \(pruned) scope link pin(s) of interfaces that left this namespace") }
            return answer("ok", status: 0)
        } catch {
            return answer("error: \(error)", status: PlatformError.Kind.unavailable.rawValue)
        }
    }

    /// One line on standard output, in one write: the client reads until the newline.
    private func answer(_ text: String, status: Int32) -> Int32 {
        var line = text.replacingOccurrences(of: "\n", with: " ") + "\n"
        line.withUTF8 { bytes in _ = write(STDOUT_FILENO, bytes.baseAddress, bytes.count) }
        return status
    }

    /// Bytes up to and including the first newline, at most ``maximumLine`` + 1 of them, or
    /// whatever came before the end or the timeout.
    /// The timeout is the whole line's: a peer sending a byte now and then holds the helper no
    /// longer than one that sends nothing.
    static func readLine(from fd: Int32, timeoutMilliseconds: Int32) -> Result<[UInt8], LineError> {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        let deadline = SystemClock.now().sinceBootNanoseconds + UInt64(timeoutMilliseconds) * 1_000_000
        while line.count <= maximumLine {
            let now = SystemClock.now().sinceBootNanoseconds
            let left = now < deadline ? Int32((deadline - now + 999_999) / 1_000_000) : 0
            var poll = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = left > 0 ? Glibc.poll(&poll, 1, left) : 0
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else {
                return .failure(LineError(ready == 0 ? "no whole request within \(timeoutMilliseconds / 1000) s" : "poll: \(Errno(errno))"))
            }
            let count = read(fd, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            line.append(byte)
            if byte == 0x0A { break }
        }
        return .success(line)
    }
}
