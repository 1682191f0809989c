import Foundation
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The systemd side: units as `make install` writes them, socket activation, sd_notify.
@Suite("systemd", .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason), .ownThread, .timeLimit(.minutes(10)))
struct SystemdTests {
    static var packageRoot: String { Daemon.packageRoot }

    /// `make install-files` (what `make install` runs after building) into a scratch root from
    /// this build; ExecStart pointed at it so `verify` can check the command.
    func installedUnits() throws -> (directory: String, destdir: TemporaryPath) {
        let destdir = try TemporaryPath()
        try Command.check(["make", "-C", Self.packageRoot, "install-files", "BUILT=\(Command.buildProductsDirectory)",
                           "DESTDIR=\(destdir.path)", "PREFIX=/usr"])
        let units = destdir.path + "/usr/lib/systemd/system"
        let service = units + "/ifmeterd.service"
        let text = try String(contentsOfFile: service, encoding: .utf8)
        #expect(text.contains("ExecStart=/usr/bin/ifmeterd --socket /run/ifmeter/ifmeterd.sock\n"))
        try text.replacingOccurrences(of: "ExecStart=/usr/bin/ifmeterd", with: "ExecStart=\(DaemonProcess.binary)")
            .write(toFile: service, atomically: true, encoding: .utf8)
        let helper = units + "/ifmeterd-attach@.service"
        try String(contentsOfFile: helper, encoding: .utf8)
            .replacingOccurrences(of: "ExecStart=/usr/bin/ifmeterd", with: "ExecStart=\(DaemonProcess.binary)")
            .write(toFile: helper, atomically: true, encoding: .utf8)
        return (units, destdir)
    }

    @Test("systemd-analyze verify has nothing to say about the installed units; the man page they cite is installed")
    func verify() throws {
        let (units, destdir) = try installedUnits()
        let files = ["ifmeterd.service", "ifmeterd.socket", "ifmeterd-events.socket", "ifmeterd-metrics.socket",
                     "ifmeterd-attach.socket", "ifmeterd-attach@.service"].map { units + "/" + $0 }
        // --man=no: verify would run man(1) for Documentation=, which looks in the system's man
        // path, not the scratch root; the page is checked in the scratch root below instead.
        let result = try Command.run(["systemd-analyze", "verify", "--man=no"] + files)
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty && result.stderr.isEmpty, "\(result.stderr)")
        for file in files {
            let text = try String(contentsOfFile: file, encoding: .utf8)
            for line in text.split(separator: "\n") where line.hasPrefix("Documentation=man:") {
                let page = line.dropFirst("Documentation=man:".count)  // ifmeterd(8)
                let name = page.prefix { $0 != "(" }, section = page.dropFirst(name.count + 1).prefix { $0 != ")" }
                #expect(FileManager.default.fileExists(atPath: destdir.path + "/usr/share/man/man\(section)/\(name).\(section)"),
                        "\(file) cites \(page), which is not installed")
            }
        }
        withExtendedLifetime(destdir) {}
    }

    /// `systemd-analyze security --offline=yes` on `service`: the overall exposure.
    func exposure(_ service: String) throws -> Double {
        let result = try Command.run(["systemd-analyze", "security", "--offline=yes", service])
        let line = try #require(result.stdout.split(separator: "\n").last { $0.contains("Overall exposure level") })
        return try #require(Double(line.split(separator: ":").last!.split(separator: " ").first!))
    }

    /// The score docs/SYSTEMD.md records on the line starting `label`.
    func recorded(_ label: String) throws -> Double {
        let docs = try String(contentsOfFile: Self.packageRoot + "/docs/SYSTEMD.md", encoding: .utf8)
        return try #require(docs.split(separator: "\n").first { $0.hasPrefix(label) }.flatMap { Double($0.dropFirst(label.count)) })
    }

    @Test("the exposure score is no worse than docs/SYSTEMD.md records, with and without each drop-in it records")
    func securityScore() throws {
        let (units, destdir) = try installedUnits()
        let service = units + "/ifmeterd.service"
        let score = try exposure(service)
        #expect(score <= (try recorded("Exposure score: ")), "exposure \(score) rose above the recorded value")
        // The attach helper (docs/SCOPES.md): root, for one request.
        let helper = try exposure(units + "/ifmeterd-attach@.service")
        #expect(helper <= (try recorded("Exposure score of ifmeterd-attach@.service: ")), "\(helper)")
        // The drop-in's [Service] lines appended to the unit: systemd merges a drop-in the same way.
        let dropIn = try String(contentsOfFile: Self.packageRoot + "/docs/examples/metrics-listen.conf", encoding: .utf8)
        let unit = try String(contentsOfFile: service, encoding: .utf8)
        let added = try #require(dropIn.components(separatedBy: "[Service]\n").last)
        try unit.replacingOccurrences(of: "[Install]", with: added + "\n[Install]").write(toFile: service, atomically: true, encoding: .utf8)
        let withDropIn = try exposure(service)
        #expect(withDropIn <= (try recorded("Exposure score with metrics-listen.conf: ")), "\(withDropIn)")
        // Without the container privileges (the drop-in on the shipped unit alone).
        let noNames = try String(contentsOfFile: Self.packageRoot + "/docs/examples/no-container-names.conf", encoding: .utf8)
        try unit.replacingOccurrences(of: "[Install]", with: try #require(noNames.components(separatedBy: "[Service]\n").last) + "\n[Install]")
            .write(toFile: service, atomically: true, encoding: .utf8)
        let unprivileged = try exposure(service)
        #expect(unprivileged <= (try recorded("Exposure score with no-container-names.conf: ")), "\(unprivileged)")
        let inside = try String(contentsOfFile: Self.packageRoot + "/docs/examples/meter-inside.conf", encoding: .utf8)
        try unit.replacingOccurrences(of: "[Install]", with: try #require(inside.components(separatedBy: "[Service]\n").last) + "\n[Install]")
            .write(toFile: service, atomically: true, encoding: .utf8)
        let joining = try exposure(service)
        #expect(joining <= (try recorded("Exposure score with meter-inside.conf: ")), "\(joining)")
        let rootless = try String(contentsOfFile: Self.packageRoot + "/docs/examples/rootless-container-names.conf", encoding: .utf8)
        try unit.replacingOccurrences(of: "[Install]", with: try #require(rootless.components(separatedBy: "[Service]\n").last) + "\n[Install]")
            .write(toFile: service, atomically: true, encoding: .utf8)
        let named = try exposure(service)
        #expect(named <= (try recorded("Exposure score with rootless-container-names.conf: ")), "\(named)")
        withExtendedLifetime(destdir) {}
    }

    @Test("under systemd-socket-activate the first client is answered; the socket is left in place")
    func socketActivation() throws {
        let namespace = try NetworkNamespace()
        let daemon = try DaemonProcess(namespace: namespace, config: "interval = 3600\n")
        try daemon.start(prefix: ["systemd-socket-activate", "-l", daemon.socket], waitForReady: false)
        var client: SocketClient?
        let deadline = Date().addingTimeInterval(60)
        while client == nil && Date() < deadline {
            client = try? daemon.client()
            if client == nil { usleep(10_000) }
        }
        let first = try #require(client)
        // The connection that caused the activation is answered (ready or not yet).
        let status = try first.request(#"{"v":1,"id":1,"cmd":"status"}"#)
        #expect(status["ok"] as? Bool == true && status.int("result.pid") == UInt64(daemon.pid))
        try daemon.awaitReady()
        #expect(try daemon.stop() == 0)
        var info = stat()
        #expect(lstat(daemon.socket, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK,
                "a socket ifmeterd did not create must not be unlinked")
    }

    @Test("sd_notify: READY after the first sample, WATCHDOG at half the period, RELOADING/READY on SIGHUP, STOPPING on SIGTERM")
    func notify() throws {
        let namespace = try NetworkNamespace()
        let daemon = try DaemonProcess(namespace: namespace, config: "interval = 3600\n")
        let listener = try NotifyListener(path: daemon.directory + "/notify.sock")
        try daemon.start(environment: ["NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": "1000000"], waitForReady: false)

        let ready = try listener.await("READY=1")
        #expect(ready.contains("STATUS=metering 1 interfaces"))
        let status = try daemon.client().request(#"{"v":1,"cmd":"status"}"#)
        #expect(status[path: "result.ready"] as? Bool == true && status[path: "result.last_sample_at"] != nil)

        // Five pings come (within a deadline only a stalled daemon misses), paced by the timer:
        // four intervals of half the 1 s period are 2 s, so never under 1.5 s. A slow machine
        // only spaces them further apart. Each is timed by the kernel as it arrives, not when
        // this thread gets to it: a test held up would otherwise read a queued bunch as a burst.
        var pings: [Double] = []
        let deadline = Date().addingTimeInterval(60)
        while pings.count < 5 && Date() < deadline {
            if let (message, at) = try? listener.receiveStamped(timeoutMilliseconds: 1000), message.contains("WATCHDOG=1") { pings.append(at) }
        }
        #expect(pings.count == 5, "WATCHDOG=1 every 0.5 s: \(pings.count) in 60 s")
        if let first = pings.first, let last = pings.last {
            #expect(last - first >= 1.5, "five pings sent within \(last - first) s: not paced by the period")
        }

        daemon.signal(SIGHUP)
        let reloading = try listener.await("RELOADING=1")
        #expect(reloading.contains("RELOADING=1"))
        _ = try listener.await("READY=1")

        daemon.signal(SIGTERM)
        _ = try listener.await("STOPPING=1")
        #expect(try daemon.stop() == 0)
    }
}

/// The units under a real systemd: booted in a container so the hardening is enforced.
@Suite("systemd in a container",
       .enabled(if: getuid() == 0 && (try? Command.resolve("systemd-nspawn")) != nil
                    && (try? Command.resolve("debootstrap")) != nil,
                "needs root, systemd-nspawn (systemd-container) and debootstrap"),
       // Both boot the same Debian tree; one after the other. A limit past the sum of their
       // steps' deadlines (make-deb, lintian, the container's boot), which fail first, saying which.
       .serialized, .ownThread, .timeLimit(.minutes(45)))
struct SystemdContainerTests {
    @Test("make deb: lintian has no error; apt-get install runs the service for a non-root user, an upgrade keeps the history, remove stops it, purge deletes it")
    func debianPackage() throws {
        let output = try TemporaryPath()
        // The package of this test build's binaries (make deb packages the release build; the
        // tests cannot build it while SwiftPM holds the build lock).
        var packages: [String] = []
        for revision in ["1", "2"] {
            let built = try Command.run(["env", "BUILT=\(Command.buildProductsDirectory)", "OUT=\(output.path)", "DEB_REVISION=\(revision)",
                                         Daemon.packageRoot + "/scripts/make-deb"], timeout: 600)
            #expect(built.status == 0, "\(built.stderr)")
            packages.append(try #require(built.stdout.split(separator: "\n").last.map(String.init)))
        }
        // A debug build links the toolchain's Swift runtime through a RUNPATH; the release
        // package make deb builds carries the runtime inside and has none.
        let lintian = try #require(try? Command.resolve("lintian"), "lintian checks the package; make test installs it")
        let lint = try Command.run([lintian, "--suppress-tags", "custom-library-search-path", packages[0]], timeout: 600)
        let problems = lint.stdout.split(separator: "\n").filter { $0.hasPrefix("E:") || $0.hasPrefix("W:") }
        #expect(problems.isEmpty, "\(lint.stdout)")
        let result = try Command.run([Daemon.packageRoot + "/Tests/tools/deb-container-test", packages[0], packages[1]], timeout: 1200)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        for check in ["ok: apt-get install of the package", "ok: ifmeter status answers a non-root user",
                      "ok: upgrade to 0.1.0-2: restarted, history kept", "ok: remove stops the service",
                      "ok: purge removes the history"] {
            #expect(result.stdout.contains(check), "missing: \(check)")
        }
    }

    @Test("the service starts, runs unprivileged under its seccomp filter and MemoryDenyWriteExecute, answers, takes systemd's two link-event sockets, reads NetworkManager's networks over the system bus, counts a 1000-tun stall exactly, reloads, serves /metrics on systemd's socket (and is started by a scrape), and stops cleanly")
    func bootedContainer() throws {
        let result = try Command.run([Daemon.packageRoot + "/Tests/tools/systemd-container-test",
                                      DaemonProcess.binary, Daemon.packageRoot + "/systemd"], timeout: 1200)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        for check in ["ok: ifmeterd.service active", "with a seccomp filter, no new privileges, no capabilities but CAP_DAC_READ_SEARCH CAP_NET_BROADCAST",
                      "\"ready\":true", "ok: link events from systemd's two sockets", "ok: networks read from the container's NetworkManager",
                      "during a 3 s SIGSTOP: all counted exactly",
                      "ok: reload", "ok: /metrics on systemd's socket", "ok: a scrape with the service stopped starts it",
                      "ok: no restarts, no refused system calls", "ok: the peers socket hears every namespace with an nsid",
                      "ok: clean stop"] {
            #expect(result.stdout.contains(check), "missing: \(check)")
        }
    }
}

/// A scratch directory removed when released.
final class TemporaryPath: @unchecked Sendable {
    let path: String
    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("ifmeter-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// The systemd side of `NOTIFY_SOCKET`: a datagram socket that collects what the daemon says.
/// Read by one thread at a time (a test's, or a reader thread it starts).
final class NotifyListener: @unchecked Sendable {
    let path: String
    let fd: Int32

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        // Each datagram carries the time it was queued (SCM_TIMESTAMP), read by receiveStamped.
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_TIMESTAMP, &on, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    }

    deinit { close(fd) }

    func receive(timeoutMilliseconds: Int32) throws -> String {
        try receiveStamped(timeoutMilliseconds: timeoutMilliseconds).message
    }

    /// The next message and when the kernel queued it (seconds since the epoch).
    func receiveStamped(timeoutMilliseconds: Int32) throws -> (message: String, at: Double) {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, timeoutMilliseconds) == 1 else { throw POSIXError(.ETIMEDOUT) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        // A cmsghdr, then its timeval at the next 8-byte boundary (CMSG_DATA; 16 on 64-bit).
        var control = [UInt64](repeating: 0, count: 8)
        let header = MemoryLayout<cmsghdr>.stride
        let (count, level, type, time) = buffer.withUnsafeMutableBytes { bytes in
            control.withUnsafeMutableBytes { controlBytes in
                var vector = iovec(iov_base: bytes.baseAddress, iov_len: bytes.count)
                return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                    var message = msghdr()
                    message.msg_iov = vectorPointer
                    message.msg_iovlen = 1
                    message.msg_control = controlBytes.baseAddress
                    message.msg_controllen = controlBytes.count
                    let count = recvmsg(fd, &message, 0)
                    let cmsg = controlBytes.load(as: cmsghdr.self)
                    let time = controlBytes.loadUnaligned(fromByteOffset: header, as: timeval.self)
                    return (count, message.msg_controllen >= header ? cmsg.cmsg_level : -1, cmsg.cmsg_type, time)
                }
            }
        }
        guard count >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        guard level == SOL_SOCKET && type == SCM_TIMESTAMP else { throw POSIXError(.EPROTO) }
        return (String(decoding: buffer[..<count], as: UTF8.self), Double(time.tv_sec) + Double(time.tv_usec) / 1e6)
    }

    /// Receives until a message has `field` (60 s at most: a debug daemon on a loaded
    /// machine); returns it.
    func await(_ field: String) throws -> String {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if let message = try? receive(timeoutMilliseconds: 500), message.contains(field) { return message }
        }
        throw CommandFailed(command: ["sd_notify"], result: CommandResult(status: -1, stdout: "", stderr: "no \(field) in 60 s"))
    }
}
