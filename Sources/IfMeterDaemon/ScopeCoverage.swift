import IfMeterCore
import IfMeterKernel
import IfMeterPlatform
#if canImport(Glibc)
import Glibc
#endif

/// Asks root's helper behind the attach socket (`ifmeterd-attach.socket`, docs/SCOPES.md) to
/// cover each counted link of class ethernet, wifi or cellular that ``ScopeCounts/covers(_:)``
/// says is not: at start, and when one appears. One request at a time, off the loop; a link is
/// asked for at most once a minute, whatever the answer, until a read shows it covered.
final class ScopeCoverage {
    /// The classes whose links carry traffic that costs: the scope programs go on them.
    static let classes: Set<InterfaceClass> = [.ethernet, .wifi, .cellular]
    static let retrySeconds = 60.0

    private let asker: BackgroundWorker<String>
    var classifier: Classifier
    /// The daemon's namespace's links of ``classes``, by ifindex: their names.
    private(set) var candidates: [Int32: String] = [:]
    /// Covered at the last read.
    private(set) var covered: Set<Int32> = []
    private var asked: [Int32: Double] = [:]
    private var inFlight: Int32?
    /// A covered link left the namespace: the helper is asked to `prune` before anything else.
    private var pruneAsked = false
    /// The last failed request's answer; nil once one succeeded.
    private(set) var lastError: String?

    init(socketPath: String, classifier: Classifier, loop: EventLoop) throws(PlatformError) {
        self.classifier = classifier
        asker = try BackgroundWorker(socketPath, named: "ifmeterd-attach", loop: loop)
    }

    /// The start dump's links.
    func start(links: [Link], scopes: ScopeCounts?) {
        for link in links { note(link) }
        observe(events: [], scopes: scopes)
    }

    /// What a read said: link events, and with a sample, the scope counters.
    func observe(events: [LinkObservation], scopes: ScopeCounts?) {
        for observation in events {
            switch observation {
            case .event(.newOrChanged(let link)): note(link)
            case .event(.deleted(let link)) where link.namespace == .own:
                // Deleted, or moved to another namespace, where its programs would count on
                // under a number that may be one of this namespace's: its pins go.
                if covered.remove(link.ifindex) != nil { pruneAsked = true }
                candidates[link.ifindex] = nil
                asked[link.ifindex] = nil
            case .resync(let links, let namespace, _) where namespace == .own:
                candidates = [:]
                for link in links { note(link) }
            default: break
            }
        }
        if let scopes { covered = Set(candidates.keys.filter(scopes.covers)) }
        askNext()
    }

    private func note(_ link: Link) {
        guard link.namespace == .own else { return }
        if case .classified(let kind, _) = classifier.classify(link), Self.classes.contains(kind) {
            candidates[link.ifindex] = link.name
        } else {
            candidates[link.ifindex] = nil
        }
    }

    private func askNext() {
        guard inFlight == nil else { return }
        if pruneAsked {
            pruneAsked = false
            inFlight = 0
            asker.run({ path in Self.ask(socket: path, line: "prune") }, then: { [unowned self] error in
                inFlight = nil
                if let error { Diagnostics.warning("pruning the scope programs of links that left: \(error)") }
                askNext()
            })
            return
        }
        let now = SystemClock.now().sinceBootNanoseconds
        let seconds = Double(now) / 1e9
        guard let ifindex = candidates.keys.sorted().first(where: { index in
            !covered.contains(index) && asked[index].map { seconds - $0 >= Self.retrySeconds } ?? true
        }) else { return }
        inFlight = ifindex
        asked[ifindex] = seconds
        asker.run({ path in Self.ask(socket: path, ifindex: ifindex) }, then: { [unowned self] error in
            inFlight = nil
            if let error {
                let name = candidates[ifindex] ?? "ifindex \(ifindex)"
                if error != lastError { Diagnostics.warning("\(name)'s traffic is not split by scope: \(error)") }
                lastError = "\(name): \(error)"
            } else {
                lastError = nil
            }
            askNext()
        })
    }

    /// One request on the attach socket: nil for `ok`, else why not. Blocks (10 s at most).
    static func ask(socket path: String, ifindex: Int32) -> String? { ask(socket: path, line: "attach \(ifindex)") }

    /// One line (`attach IFINDEX`, `prune`) on the attach socket: nil for `ok`, else why not.
    static func ask(socket path: String, line request: String) -> String? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return "socket: \(Errno(errno))" }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return "\(path): too long a path" }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: bytes) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            return "connect \(path): \(Errno(errno)) (is ifmeterd-attach.socket enabled? docs/SCOPES.md)"
        }
        var request = Array((request + "\n").utf8)
        guard write(fd, &request, request.count) == request.count else { return "write \(path): \(Errno(errno))" }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        while answer.count < 4096, !answer.contains(0x0A) {
            let count = read(fd, &buffer, buffer.count)
            guard count > 0 else { break }
            answer += buffer[..<count]
        }
        let line = String(decoding: answer.prefix { $0 != 0x0A }, as: UTF8.self)
        if line == "ok" { return nil }
        // The helper's words, bounded and printable, for the journal and `status`.
        let said = String(line.unicodeScalars.prefix(300).map { $0.value >= 0x20 && $0.value < 0x7F ? Character($0) : "?" })
        return said.isEmpty ? "the helper closed the connection without an answer" : said
    }
}
