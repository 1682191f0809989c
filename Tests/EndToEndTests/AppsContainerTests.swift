import Foundation
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Services and applications counted by cgroup (docs/APPS.md) under a real systemd booted in a
/// container (Tests/tools/apps-container-test): the shipped unit attaches the program from
/// inside with its ExecStartPre=-+ and reads the pins under its seccomp filter, and has its link
/// covered by the scope programs through the shipped ifmeterd-attach.socket (docs/SCOPES.md);
/// in a tree with Podman, an ordinary user's rootless containers too.
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
                      "ok: ifmeterd --detach-apps removed the pins",
                      "ok: host0 covered by the scope programs at the unprivileged daemon's request, through ifmeterd-attach.socket",
                      "ok: the service's traffic to its on-link peer is scope:local/service:ifmt-sender.service"] {
            #expect(result.stdout.contains(check), "missing: \(check)")
        }
        // Under the unit's ProtectProc=invisible the daemon cannot read another user's
        // /proc/PID/comm, so systemd-run's random scopes are app:UID/run (docs/APPS.md).
        #expect(result.stdout.contains("one subject app:1500/run,") || result.stdout.contains("one subject app:1500/udp-sender,"))
    }

    @Test("an ordinary user's rootless Podman container: --network host is app:UID/container/SHORT-ID under the shipped unit and app:UID/container/NAME with rootless-container-names.conf, exact; on slirp4netns its traffic is app:UID/podman.scope, exact")
    func rootlessPodman() throws {
        let scratch = try TemporaryDirectory()
        let sender = scratch.path + "/udp-sender"
        try Command.check(["gcc", "-static", "-O2", "-Wall", "-o", sender, Daemon.packageRoot + "/Tests/tools/udp-sender.c"])
        let built = Command.buildProductsDirectory
        let result = try Command.run([Daemon.packageRoot + "/Tests/tools/apps-container-test", DaemonProcess.binary,
                                      built + "/ifmeter", Daemon.packageRoot + "/systemd", sender, "podman"], timeout: 1200)
        // The tree with Podman is made from Debian's packages (Tests/tools/container-tree podman);
        // where they cannot be had, there is nothing to run.
        if result.status != 0, result.stderr.contains("FAIL: no container tree") {
            print("skipped: no Debian tree with Podman could be made: \(result.stderr)")
            return
        }
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        for check in ["ok: rootless podman as uid 1500: systemd cgroup manager",
                      "ok: a rootless container (--network host) under the shipped unit: one subject app:1500/container/",
                      "the daemon's /home holds the path to vfs-containers alone",
                      "ok: the container run again with the drop-in: one subject app:1500/container/ifmt-web, tx 171000 bytes",
                      "ok: a rootless container on slirp4netns: its traffic is slirp4netns's, one subject app:1500/podman.scope, tx 102600 bytes",
                      "ok: the peer received all 1200 datagrams", "ok: no restarts, no refused system calls",
                      "ok: ifmeterd --detach-apps removed the pins",
                      "ok: host0 covered by the scope programs at the unprivileged daemon's request, through ifmeterd-attach.socket"] {
            #expect(result.stdout.contains(check), "missing: \(check)")
        }
    }
}
