import Foundation
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Services and applications counted by cgroup (docs/APPS.md) under a real systemd booted in a
/// container (Tests/tools/apps-container-test): the shipped unit attaches the program from
/// inside with its ExecStartPre=-+ and reads the pins under its seccomp filter.
@Suite("applications under a booted systemd",
       .enabled(if: getuid() == 0 && (try? Command.resolve("systemd-nspawn")) != nil
                    && (try? Command.resolve("debootstrap")) != nil && (try? Command.resolve("gcc")) != nil,
                "needs root, systemd-nspawn (systemd-container), debootstrap and gcc (scripts/install-deps --test)"),
       .serialized, .ownThread, .timeLimit(.minutes(20)))
struct AppsContainerTests {
    @Test("a system service restarted mid-traffic is one subject service:NAME.service, exact; a program launched twice with systemd-run --user --scope by an ordinary user is one subject app:UID/…, exact; the unit attaches, reads and detaches")
    func servicesAndApplications() throws {
        let scratch = try TemporaryDirectory()
        let sender = scratch.path + "/udp-sender"
        try Command.check(["gcc", "-static", "-O2", "-Wall", "-o", sender, Daemon.packageRoot + "/Tests/tools/udp-sender.c"])
        let built = Command.buildProductsDirectory
        let result = try Command.run([Daemon.packageRoot + "/Tests/tools/apps-container-test", DaemonProcess.binary,
                                      built + "/ifmeter", Daemon.packageRoot + "/systemd", sender], timeout: 1200)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        for check in ["ExecStartPre=-+ attached the program from inside", "ok: status: applications counted",
                      "one subject service:ifmt-sender.service, tx", "ok: loginctl enable-linger started user@1500.service",
                      "ok: launch 2 of udp-sender", "ok: the peer received all", "ok: no restarts, no refused system calls",
                      "ok: ifmeterd --detach-apps removed the pins"] {
            #expect(result.stdout.contains(check), "missing: \(check)")
        }
        // Under the unit's ProtectProc=invisible the daemon cannot read another user's
        // /proc/PID/comm, so systemd-run's random scopes are app:UID/run (docs/APPS.md).
        #expect(result.stdout.contains("one subject app:1500/run,") || result.stdout.contains("one subject app:1500/udp-sender,"))
    }
}
