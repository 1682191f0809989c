import IfMeterApps
import IfMeterCore
import IfMeterTestSupport
import Testing

/// A cgroup's path named as docs/APPS.md's "Names" says, whoever chose its directories' names.
@Suite("Cgroup paths named as services and applications", .ownThread, .timeLimit(.minutes(1)))
struct CgroupNamingTests {
    static let id = "f26202dbf0054346fe87d13ab461e2da5e5180e4ff4149d6f6c8c8ef71e61039"
    static let other = String(repeating: "c", count: 64)
    static let user = "/user.slice/user-1000.slice/user@1000.service"

    /// Containers `web` (docker's id) and `db` (rootless podman's, uid 1000) are known; the
    /// first process of every `systemd-run` unit is `curl`, but of `run-u9.service`, none.
    static var naming: CgroupNaming {
        CgroupNaming(containerName: { container in
            switch (container.runtime, container.id, container.uid) {
            case (.docker, CgroupNamingTests.id, nil): "web"
            case (.podman, CgroupNamingTests.id, nil): "/bad name"
            case (.podman, CgroupNamingTests.id, 1000?): "db"
            default: nil
            }
        },
        firstCommand: { path in
            String(decoding: path, as: UTF8.self).hasSuffix("run-u9.service") ? nil : Array("curl\n".utf8)
        })
    }

    static func name(_ path: String) -> String { naming.subject(ofPath: Array(path.utf8)).name }

    @Test("system services, nested slices, sub-cgroups, the root's init.scope", arguments: [
        ("/system.slice/nginx.service", "service:nginx.service"),
        ("/system.slice/nginx.service/worker", "service:nginx.service"),
        ("/system.slice/system-getty.slice/getty@tty1.service", "service:getty@tty1.service"),
        ("/init.scope", "service:init.scope"),
        ("/system.slice/systemd-fsck@dev-disk-by\\x2duuid-1234.service", "service:systemd-fsck@dev-disk-by-uuid-1234.service"),
        ("/machine.slice/machine-qemu\\x2d1\\x2dvm.scope", "service:machine-qemu-1-vm.scope"),
        ("/system.slice/run-u12.service", "service:curl"),
        ("/system.slice/run-u9.service", "service:run"),
        ("/kubepods.slice/kubepods-besteffort.slice/cri-containerd-ab.scope", "service:cri-containerd-ab.scope"),
        ("/lxc.payload.web/init", "service:lxc.payload.web"),
        ("/", "service:other"), ("", "service:other"), ("/system.slice", "service:other"),
        ("/user.slice", "service:other"), ("/user.slice/user-01000.slice/x.scope", "service:x.scope"),
        ("//system.slice///nginx.service//", "service:nginx.service"),
    ])
    func services(path: String, expected: String) {
        #expect(Self.name(path) == expected)
        #expect(Self.naming.subject(ofPath: Array(path.utf8)).uid == nil)
    }

    @Test("rootful containers by the runtime's name, else a short id, only where the runtimes put them", arguments: [
        ("/system.slice/docker-\(id).scope", "service:container/web"),
        ("/system.slice/docker-\(id).scope/init", "service:container/web"),
        ("/docker/\(id)", "service:container/web"),
        ("/system.slice/docker-\(other).scope", "service:container/cccccccccccc"),
        ("/machine.slice/libpod-\(id).scope", "service:container/%2Fbad%20name"),
        ("/libpod_parent/libpod-\(other)", "service:container/cccccccccccc"),
        ("/machine.slice/machine-x.slice/docker-\(id).scope", "service:" + String("docker-\(id)".prefix(64))),
        ("/system.slice/docker-\(id)", "service:" + String("docker-\(id)".prefix(64))),
    ])
    func rootfulContainers(path: String, expected: String) {
        #expect(Self.name(path) == expected)
    }

    @Test("a user's applications, sessions, manager, services and rootless containers", arguments: [
        ("\(user)/app.slice/app-gnome-firefox-1234.scope", "app:1000/firefox"),
        ("\(user)/app.slice/app-firefox@0a1b2c.service", "app:1000/firefox"),
        ("\(user)/app.slice/app-flatpak-org.mozilla.firefox-42.scope", "app:1000/org.mozilla.firefox"),
        ("\(user)/app.slice/app-gnome-org.gnome.Evolution\\x2dalarm\\x2dnotify-99.scope", "app:1000/org.gnome.Evolution-alarm-notify"),
        ("\(user)/app.slice/app-org.gnome.Terminal.slice/vte-spawn-8f3c2d1e-aaaa-bbbb-cccc-ddddeeeeffff.scope",
         "app:1000/org.gnome.Terminal"),
        ("\(user)/app.slice/app-org.gnome.Terminal.slice/vte-spawn-8f3c2d1e.scope/sub", "app:1000/org.gnome.Terminal"),
        ("\(user)/app.slice/foo.service", "app:1000/foo.service"),
        ("\(user)/session.slice/pipewire.service/x/y", "app:1000/pipewire.service"),
        ("\(user)/foo.service", "app:1000/foo.service"),
        ("\(user)/app.slice/tmux-spawn-0f1e2d3c-1111-2222-3333-444455556666.scope", "app:1000/tmux-spawn.scope"),
        ("\(user)/app.slice/run-r1a2b3c.scope", "app:1000/curl"),
        ("\(user)/app.slice/run-p123-i456.service", "app:1000/curl"),
        ("\(user)/app.slice/run-u9.service", "app:1000/run"),
        ("\(user)/init.scope", "app:1000/manager"), (user, "app:1000/manager"),
        ("/user.slice/user-1000.slice/session-3.scope", "app:1000/session"),
        ("/user.slice/user-1000.slice/session-c7.scope", "app:1000/session"),
        ("\(user)/user.slice/libpod-\(id).scope", "app:1000/container/db"),
        ("\(user)/user.slice/libpod-\(id).scope/container", "app:1000/container/db"),
        ("\(user)/user.slice/libpod-\(other).scope", "app:1000/container/cccccccccccc"),
        ("/user.slice/user-1000.slice", "app:1000/other"),
        ("/user.slice/user-1000.slice/something", "app:1000/other"),
        ("\(user)/app.slice", "app:1000/other"),
        ("\(user)/app.slice/plain-directory", "app:1000/other"),
        ("/user.slice/user-0.slice/user@0.service/app.slice/foo.service", "app:0/foo.service"),
    ])
    func userApplications(path: String, expected: String) {
        let subject = Self.naming.subject(ofPath: Array(path.utf8))
        #expect(subject.name == expected)
        #expect(subject.kind == .app && subject.uid == AppKind.split(expected.dropFirst(4))?.uid)
    }

    @Test("the uid is the user slice's: a user's own subtree naming another's is still theirs", arguments: [
        "\(user)/app.slice/user.slice/user-0.slice/user@0.service/app.slice/app-firefox@1.service",
        "\(user)/user-0.slice/user@0.service/init.scope",
        "\(user)/app.slice/system.slice/nginx.service",
        "\(user)/system.slice/docker-\(id).scope",
        "\(user)/machine.slice/libpod-\(id).scope",
        "\(user)/user@0.service/app.slice/foo.service",
    ])
    func uidFromTheSliceOnly(path: String) {
        let subject = Self.naming.subject(ofPath: Array(path.utf8))
        #expect(subject.uid == 1000 && subject.kind == .app && subject.name.hasPrefix("app:1000/"), "\(subject)")
        #expect(subject.name != "app:1000/container/web")
    }

    @Test("hostile names are escaped, bounded and accepted by their kind", arguments: [
        ("\(user)/app.slice/evil\nname.service", "app:1000/evil%0Aname.service"),
        ("\(user)/app.slice/\"quoted\".service", "app:1000/%22quoted%22.service"),
        ("\(user)/app.slice/<script>alert(1).service", "app:1000/%3Cscript%3Ealert%281%29.service"),
        ("\(user)/app.slice/a:b%c.service", "app:1000/a%3Ab%25c.service"),
        ("\(user)/app.slice/app-x\\x2fy@1.service", "app:1000/x%2Fy"),
        ("\(user)/app.slice/caf\u{e9}.service", "app:1000/caf%C3%A9.service"),
    ])
    func hostile(path: String, expected: String) {
        #expect(Self.name(path) == expected)
        Self.checkInvariants(Array(path.utf8))
    }

    @Test("invalid UTF-8, 255-byte components, 10,000-deep paths and hostile commands")
    func extremes() {
        let invalid = Array("\(Self.user)/app.slice/".utf8) + [0xff, 0xfe, 0xc3] + Array(".service".utf8)
        #expect(Self.naming.subject(ofPath: invalid).name == "app:1000/%FF%FE%C3.service")
        let long = String(repeating: "x", count: 247) + ".service"
        let named = Self.name("\(Self.user)/app.slice/\(long)")
        #expect(named == "app:1000/" + String(repeating: "x", count: AppName.maximumLength))
        let escapes = Self.name("/system.slice/" + String(repeating: "\u{1}", count: 247) + ".service")
        #expect(escapes == "service:" + String(repeating: "%01", count: AppName.maximumLength / 3))
        let deep = "/" + Array(repeating: "a.slice", count: 10_000).joined(separator: "/") + "/x.service"
        #expect(Self.name(deep) == "service:other")
        let deepUser = Self.user + String(repeating: "/a.slice", count: 10_000) + "/x.service"
        #expect(Self.name(deepUser) == "app:1000/other")
        let below = Self.user + "/app.slice/x.service" + String(repeating: "/y", count: 10_000)
        #expect(Self.name(below) == "app:1000/x.service")
        let hostileCommand = CgroupNaming(firstCommand: { _ in [0x1b, 0x5b, 0x32, 0x4a, 0x0a, 0xff] + Array(repeating: 0x41, count: 300) })
        let command = hostileCommand.subject(ofPath: Array("\(Self.user)/app.slice/run-r1.scope".utf8)).name
        #expect(command.hasPrefix("app:1000/%1B%5B2J%0A%FF") && command.utf8.count == "app:1000/".utf8.count + AppName.maximumLength)
        let empty = CgroupNaming(containerName: { _ in "" }, firstCommand: { _ in [0x0a] })
        #expect(empty.subject(ofPath: Array("/system.slice/run-u1.service".utf8)).name == "service:run")
        #expect(empty.subject(ofPath: Array("/system.slice/docker-\(Self.id).scope".utf8)).name == "service:container/f26202dbf005")
        for path in [invalid, Array(deep.utf8), Array(deepUser.utf8), Array(below.utf8)] { Self.checkInvariants(path) }
    }

    @Test("every name of every shape is its kind's, bounded and stable")
    func invariants() {
        let paths = ["/", "/init.scope", "/system.slice/nginx.service", "\(Self.user)/app.slice/app-gnome-firefox-1234.scope",
                     "/system.slice/docker-\(Self.id).scope", "\(Self.user)/user.slice/libpod-\(Self.id).scope",
                     "/user.slice/user-4294967294.slice/session-1.scope", "/user.slice/user-4294967295.slice/session-1.scope"]
        for path in paths { Self.checkInvariants(Array(path.utf8)) }
        #expect(Self.name("/user.slice/user-4294967294.slice/session-1.scope") == "app:4294967294/session")
        #expect(Self.name("/user.slice/user-4294967295.slice/session-1.scope") == "service:session-1.scope")
    }

    @Test("the kinds' grammar: what escaping gives, and nothing else")
    func grammar() {
        for accepted in ["1000/firefox", "0/a", "1000/container/web", "1000/%0A", "4294967294/x"] {
            #expect(AppKind().accepts(accepted[...]), "\(accepted)")
        }
        for refused in ["firefox", "01000/a", "1000/", "1000/a/b", "1000/a b", "1000/%0a", "1000/%41", "1000/%4", "-1/a",
                        "4294967295/a", "1000/" + String(repeating: "a", count: 65), "1000/container/"] {
            #expect(!AppKind().accepts(refused[...]), "\(refused)")
        }
        #expect(ServiceKind().accepts("nginx.service") && !ServiceKind().accepts("a/b") && !ServiceKind().accepts(""))
        #expect(AppKind().metricLabels("1000/firefox").map { "\($0.key)=\($0.value)" } == ["app=firefox", "uid=1000"])
        #expect(ServiceKind().metricLabels("nginx.service").map { "\($0.key)=\($0.value)" } == ["service=nginx.service"])
    }

    /// Bounded, accepted by its kind, plain ASCII without control characters, and the same again.
    static func checkInvariants(_ path: [UInt8]) {
        let subject = naming.subject(ofPath: path)
        let kind = subject.kind.subjectKind
        let prefix = kind.prefix! + ":"
        #expect(subject.name.hasPrefix(prefix))
        let name = subject.name.dropFirst(prefix.count)
        #expect(kind.accepts(name), "\(subject)")
        #expect(SubjectKinds.kind(of: subject.name)?.kind.prefix == kind.prefix)
        #expect(subject.name.utf8.count <= prefix.utf8.count + "4294967294/container/".utf8.count + AppName.maximumLength)
        #expect(subject.name.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f })
        #expect(naming.subject(ofPath: path) == subject)
    }
}
