import CSystemd
import IfMeterCore
import IfMeterKernel
import IfMeterPlatform
#if canImport(Glibc)
import Glibc
#endif

/// Keeps the programs' `local_prefixes` map what is local now (docs/SCOPES.md): the built-in
/// prefixes, the links' on-link prefixes and `local_prefixes` from the config. It writes at
/// start, whenever netlink says an address or route changed (so a new address is local within
/// that event, not at the next sample), and on reload. Each write reads the kernel's addresses
/// and routes again on a thread of its own (a large route table is no stall of the loop), and
/// writes only the difference; one at a time, and one more after it when asked meanwhile.
final class PrefixSync {
    /// What a sync found: the prefixes written, or why none were.
    struct Outcome: Sendable {
        var count: Int?
        var error: String?
    }

    /// The map and a dump socket, on the writer's thread only.
    final class Writer: @unchecked Sendable {
        let pinDirectory: String
        private var map: LocalPrefixMap?
        private var socket: NetlinkSocket?

        init(pinDirectory: String) { self.pinDirectory = pinDirectory }

        func write(configured: Set<LocalPrefix>) -> Outcome {
            do {
                let socket = try self.socket ?? NetlinkSocket()
                self.socket = socket
                let onLink = try OnLinkPrefixes.read(through: socket)
                let all = LocalPrefixes(onLink: onLink, configured: configured).all
                let map = try self.map ?? LocalPrefixMap(pinDirectory: pinDirectory)
                self.map = map
                try map.write(all)
                return Outcome(count: all.count, error: nil)
            } catch {
                // Opened again next time: the pins may have been made anew meanwhile.
                map = nil
                socket = nil
                return Outcome(count: nil, error: "\(error)")
            }
        }
    }

    private let worker: BackgroundWorker<Writer>
    private var events: PrefixEventSocket?
    private var source: EventSource?
    private var running = false
    private var again = false
    /// `local_prefixes`, as configured now.
    var configured: Set<LocalPrefix>
    /// The prefixes the last sync wrote; nil before one succeeded.
    private(set) var written: Int?
    /// Why the last sync failed; nil after one that did not.
    private(set) var lastError: String?

    init(pinDirectory: String, configured: Set<LocalPrefix>, loop: EventLoop) throws(PlatformError) {
        self.configured = configured
        worker = try BackgroundWorker(Writer(pinDirectory: pinDirectory), named: "ifmeterd-prefixes", loop: loop)
        do throws(KernelError) {
            events = try PrefixEventSocket()
        } catch {
            Diagnostics.warning("\(error): new addresses and routes are local from the next reload only")
        }
        if let events {
            source = try loop.watch(fd: events.fileDescriptor, events: UInt32(EPOLLIN.rawValue)) { [unowned self] _ in
                changed()
            }
        }
    }

    /// Netlink said addresses or routes changed: taken off the socket, and a sync.
    private func changed() {
        do {
            if try events?.drain() == true { sync() }
        } catch {
            Diagnostics.error("\(error)")
            sync()
        }
    }

    /// Writes what is local now; when one is out, once more after it.
    func sync() {
        guard !running else {
            again = true
            return
        }
        running = true
        let configured = self.configured
        worker.run({ writer in writer.write(configured: configured) }, then: { [unowned self] outcome in
            running = false
            if let error = outcome.error, error != lastError { Diagnostics.warning("local prefixes not written: \(error)") }
            lastError = outcome.error
            if let count = outcome.count { written = count }
            if again {
                again = false
                sync()
            }
        })
    }
}
