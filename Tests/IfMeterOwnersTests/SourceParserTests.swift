import IfMeterCore
@testable import IfMeterOwners
import IfMeterTestSupport
import Testing

/// The runtimes' state files as another program writes them: what is read from each, and that
/// nothing in them can put an unacceptable name into a subject.
@Suite("Owner sources' parsers", .ownThread, .timeLimit(.minutes(3)))
struct SourceParserTests {
    static let id = "f26202dbf0054346fe87d13ab461e2da5e5180e4ff4149d6f6c8c8ef71e61039"

    @Test("Podman's containers.json: each id's first name; bad ids and names are left out")
    func podmanContainers() {
        let json = """
        [{"id":"\(Self.id)","names":["web","web-alias"],"image":"x","metadata":"{\\"name\\":\\"web\\"}","flags":{}},
         {"id":"short","names":["nope"]},
         {"id":"\(String(repeating: "b", count: 64))","names":["bad name"]},
         {"id":"\(String(repeating: "c", count: 64))","names":[]}]
        """
        let listed = PodmanSource.containers(containersJSON: Array(json.utf8))
        #expect(listed.map(\.id) == [Self.id] && listed.map(\.name) == ["web"])
        #expect(PodmanSource.containers(containersJSON: Array("{\"not\":\"an array\"}".utf8)).isEmpty)
        #expect(PodmanSource.containers(containersJSON: []).isEmpty)
    }

    @Test("an OCI spec's network namespace path")
    func ociNetworkNamespace() {
        let spec = """
        {"ociVersion":"1.0.2","process":{"args":["/bin/sleep","300"]},"annotations":{"io.container.manager":"libpod"},
         "linux":{"uidMappings":[],"namespaces":[{"type":"pid"},{"type":"network","path":"/run/netns/netns-4224714a"},{"type":"ipc"}]}}
        """
        #expect(PodmanSource.networkNamespacePath(ociConfig: Array(spec.utf8)) == "/run/netns/netns-4224714a")
        let own = #"{"linux":{"namespaces":[{"type":"network"}]}}"#
        #expect(PodmanSource.networkNamespacePath(ociConfig: Array(own.utf8)) == nil)
        #expect(PodmanSource.networkNamespacePath(ociConfig: Array("{\"linux\":".utf8)) == nil)
    }

    @Test("Docker's config.v2.json: id, name without its slash, sandbox; a stopped container has none")
    func dockerConfig() throws {
        let running = """
        {"ID":"\(Self.id)","Name":"/web","State":{"Running":true},"NetworkSettings":{"Bridge":"","SandboxKey":"/var/run/docker/netns/3f1b2c"}}
        """
        let container = try #require(DockerSource.container(configV2: Array(running.utf8)))
        #expect(container.id == Self.id && container.name == "web" && container.sandbox == "/var/run/docker/netns/3f1b2c")
        let stopped = #"{"ID":"\#(Self.id)","Name":"/web","NetworkSettings":{"SandboxKey":""}}"#
        #expect(DockerSource.container(configV2: Array(stopped.utf8)) == nil)
        let hostile = #"{"ID":"\#(Self.id)","Name":"/a:b\n","NetworkSettings":{"SandboxKey":"/x"}}"#
        #expect(DockerSource.container(configV2: Array(hostile.utf8)) == nil)
    }

    @Test("a cgroup names a Podman or Docker container by id, else the systemd unit", arguments: [
        ("0::/libpod_parent/libpod-\(id)\n", ProcessSource.CgroupOwner.container(CgroupClaim(.podman, id: id))),
        ("0::/machine.slice/libpod-\(id).scope/container\n", ProcessSource.CgroupOwner.container(CgroupClaim(.podman, id: id))),
        ("0::/system.slice/docker-\(id).scope\n", ProcessSource.CgroupOwner.container(CgroupClaim(.docker, id: id))),
        ("12:pids:/docker/\(id)\n1:name=systemd:/docker/\(id)\n0::/\n", ProcessSource.CgroupOwner.container(CgroupClaim(.docker, id: id))),
        ("0::/system.slice/vpn@home.service\n", ProcessSource.CgroupOwner.unit("vpn@home.service")),
        ("0::/machine.slice/systemd-nspawn@box.service/payload\n", ProcessSource.CgroupOwner.unit("systemd-nspawn@box.service")),
    ])
    func cgroupOwner(text: String, owner: ProcessSource.CgroupOwner) {
        #expect(ProcessSource.cgroupOwner(text) == owner)
    }

    @Test("a cgroup that says nothing usable says nothing")
    func cgroupNothing() {
        #expect(ProcessSource.cgroupOwner("0::/\n") == nil)
        #expect(ProcessSource.cgroupOwner("garbage") == nil)
        #expect(ProcessSource.cgroupOwner("5:memory:/libpod-\(Self.id)\n") == nil)
    }

    @Test("a container id anywhere but where its runtime puts it is only a unit's name", arguments: [
        ("0::/user.slice/user-1000.slice/user@1000.service/app.slice/libpod-\(id).scope\n", ProcessSource.CgroupOwner.unit("libpod-\(id).scope")),
        ("0::/libpod-\(id).scope\n", .unit("libpod-\(id).scope")),
        ("0::/user.slice/docker-\(id).scope\n", .unit("docker-\(id).scope")),
        ("0::/user.slice/run-1.scope/docker/\(id)\n", .unit("run-1.scope")),
    ])
    func cgroupOutOfPlace(text: String, owner: ProcessSource.CgroupOwner) {
        #expect(ProcessSource.cgroupOwner(text) == owner)
    }

    @Test("owner names: what runtimes accept, nothing that could break a subject, label or line", arguments: [
        ("web", true), ("web-1.prod_a@x", true), (String(repeating: "a", count: 253), true),
        ("", false), ("a:b", false), ("a/b", false), ("a b", false), ("a\u{1b}[31m", false), ("ünï", false),
        (String(repeating: "a", count: 254), false),
    ])
    func ownerNames(name: String, acceptable: Bool) {
        #expect(OwnerName.isAcceptable(name) == acceptable)
    }

    @Test("an LXC monitor's cmdline names its path and container; anything else, or a name no runtime accepts, names nothing")
    func lxcMonitor() {
        let monitor = LXCSource.monitor(cmdline: Array("[lxc monitor] /var/lib/lxc web\0".utf8))
        #expect(monitor?.path == "/var/lib/lxc" && monitor?.name == "web")
        #expect(LXCSource.monitor(cmdline: Array("[lxc monitor] /var/lib/lxc we b".utf8))?.name == "b")
        #expect(LXCSource.monitor(cmdline: Array("[lxc monitor] /var/lib/lxc a:b".utf8)) == nil)
        #expect(LXCSource.monitor(cmdline: Array("[lxc monitor] relative web".utf8)) == nil)
        #expect(LXCSource.monitor(cmdline: Array("/usr/bin/lxc-start -n web".utf8)) == nil)
        #expect(LXCSource.monitor(cmdline: []) == nil)
    }

    @Test("/proc/PID/stat: the command between the first ( and the last ), whatever it holds, and the parent's pid")
    func processStat() {
        let stat = LXCSource.processStat(Array("8564 (a) b (c)) S 8563 8564 8564 0 -1".utf8))
        #expect(stat?.command == "a) b (c)" && stat?.parent == 8563)
        #expect(LXCSource.processStat(Array("8564 (sh) S".utf8)) == nil)
        #expect(LXCSource.processStat(Array("garbage".utf8)) == nil)
    }
}

extension SourceParserTests {
    @Test("the names runtimes bind the namespaces of what they are starting under, and names an admin gives", arguments: [
        ("netns-4224714a-8004-289c-8131-bdd4a450f14a", true), ("cni-e483fae4-3c3c-5a2b-9d0c-1f2e3d4c5b6a", true),
        ("7c1d5e2a-0b3c-4d5e-8f90-a1b2c3d4e5f6", true), ("7C1D5E2A-0B3C-4D5E-8F90-A1B2C3D4E5F6", true),
        ("vpn", false), ("blue-1", false), ("7c1d5e2a-0b3c-4d5e-8f90-a1b2c3d4e5f", false), ("7c1d5e2a-0b3c-4d5e-8f90-a1b2c3d4e5fg", false),
    ])
    func runtimesNames(_ name: String, _ isRuntimes: Bool) {
        #expect(NamedNamespaceSource.isRuntimes(name) == isRuntimes, "\(name)")
    }
}
