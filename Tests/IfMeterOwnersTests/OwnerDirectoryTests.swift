import Foundation
import IfMeterCore
import IfMeterKernel
import IfMeterOwners
import IfMeterTestSupport
import Testing

/// The directory against real namespaces: veths whose peers the test moves into a bound
/// namespace, a namespace a Podman-shaped state directory claims, one a runtime is still setting
/// up, and one only a process holds.
@Suite("Owner directory", .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason), .ownThread, .timeLimit(.minutes(3)))
struct OwnerDirectoryTests {
    @Test("each host-side veth's nsid leads to its owner: a Podman container, a bound name, a process")
    func owners() throws {
        let host = try NetworkNamespace()
        let blue = try NetworkNamespace()
        let pod = try NetworkNamespace()
        // Podman binds `netns-UUID` and writes the container's spec after the veth exists.
        let starting = "netns-\(host.name)"
        try Command.check(["ip", "netns", "add", starting])
        defer { _ = try? Command.run(["ip", "netns", "delete", starting]) }
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: try Command.resolve("unshare"))
        holder.arguments = ["--net", "sleep", "120"]
        try holder.run()
        // SIGKILL: a signal the test process ignores stays ignored in what it starts.
        defer { holder.end(SIGKILL) }
        let processNamespace = try waitForOwnNamespace(of: holder.processIdentifier)

        try host.ip("link", "add", "h-blue", "type", "veth", "peer", "name", "eth0", "netns", blue.name)
        try host.ip("link", "add", "h-pod", "type", "veth", "peer", "name", "eth0", "netns", pod.name)
        try host.ip("link", "add", "h-new", "type", "veth", "peer", "name", "eth0", "netns", starting)
        try host.ip("link", "add", "h-proc", "type", "veth", "peer", "name", "eth0", "netns", String(holder.processIdentifier))
        try host.ip("link", "add", "ve-box", "type", "veth", "peer", "name", "host0", "netns", blue.name)

        let storage = try TemporaryDirectory()
        let id = String(repeating: "e", count: 64)
        try FileManager.default.createDirectory(atPath: storage.path + "/overlay-containers/\(id)/userdata",
                                                withIntermediateDirectories: true)
        try #"{"linux":{"namespaces":[{"type":"network","path":"/run/netns/\#(pod.name)"}]}}"#
            .write(toFile: storage.path + "/overlay-containers/\(id)/userdata/config.json", atomically: true, encoding: .utf8)
        try #"[{"id":"\#(id)","names":["web"]}]"#
            .write(toFile: storage.path + "/overlay-containers/containers.json", atomically: true, encoding: .utf8)

        let paths = OwnerPaths(namedNamespaces: ["/run/netns"], podmanStorage: storage.path,
                               dockerRoot: storage.path + "/no-docker", proc: "/proc")
        let (links, found) = try host.inside { () throws -> ([Link], [Int32: OwnerLookup]) in
            let directory = try OwnerDirectory(paths: paths)
            let links = try NetlinkSocket().dumpLinks()
            var names: [Int32: String] = [:]
            for link in links { if let nsid = link.peerNamespaceID, names[nsid] == nil || link.name.hasPrefix("ve-") { names[nsid] = link.name } }
            return (links, directory.lookUp(Set(names.keys), hostNames: names))
        }
        func lookup(_ name: String) throws -> OwnerLookup? {
            found[try #require(try link(named: name, in: links).peerNamespaceID)]
        }
        #expect(try lookup("h-pod") == .found(FoundOwner(.podman, name: "web", id: id)))
        // blue is reached by h-blue and by ve-box: the nspawn naming wins for that nsid.
        #expect(try lookup("h-blue") == .found(FoundOwner(.nspawn, name: "box", id: "box")))
        guard case .starting(let fallback)? = try lookup("h-new") else {
            Issue.record("a runtime-bound namespace no container claims should be starting, got \(String(describing: try lookup("h-new")))")
            return
        }
        #expect(fallback?.kind == .netns && fallback?.name == starting)
        guard case .found(let process)? = try lookup("h-proc") else {
            Issue.record("a process's namespace should be found through /proc, got \(String(describing: try lookup("h-proc")))")
            return
        }
        #expect(process.kind == .process)
        #expect(process.id == String(processNamespace))
    }

    @Test("a bound namespace no runtime claims is known by its name")
    func namedNamespace() throws {
        let host = try NetworkNamespace()
        let blue = try NetworkNamespace()
        try host.ip("link", "add", "h-blue", "type", "veth", "peer", "name", "eth0", "netns", blue.name)
        let empty = try TemporaryDirectory()
        let paths = OwnerPaths(namedNamespaces: ["/run/netns"], podmanStorage: empty.path, dockerRoot: empty.path, proc: empty.path)
        let found = try host.inside { () throws -> [Int32: OwnerLookup] in
            let links = try NetlinkSocket().dumpLinks()
            let nsid = try #require(try link(named: "h-blue", in: links).peerNamespaceID)
            return try OwnerDirectory(paths: paths).lookUp([nsid, 99], hostNames: [nsid: "h-blue"])
        }
        var inode = stat()
        #expect(stat("/run/netns/\(blue.name)", &inode) == 0)
        #expect(found.values.contains(.found(FoundOwner(.netns, name: blue.name, id: String(inode.st_ino)))))
        #expect(found[99] == .unknown)
    }

    @Test("a FIFO where a namespace file should be (in a named directory, in a runtime's state) is passed over, never waited on")
    func plantedFIFO() throws {
        let host = try NetworkNamespace()
        let blue = try NetworkNamespace()
        try host.ip("link", "add", "h-blue", "type", "veth", "peer", "name", "eth0", "netns", blue.name)
        let named = try TemporaryDirectory()
        let fifo = named.path + "/planted"
        #expect(mkfifo(fifo, 0o600) == 0)
        let storage = try TemporaryDirectory()
        let id = String(repeating: "f", count: 64)
        try FileManager.default.createDirectory(atPath: storage.path + "/overlay-containers/\(id)/userdata", withIntermediateDirectories: true)
        try #"{"linux":{"namespaces":[{"type":"network","path":"\#(fifo)"}]}}"#
            .write(toFile: storage.path + "/overlay-containers/\(id)/userdata/config.json", atomically: true, encoding: .utf8)
        try #"[{"id":"\#(id)","names":["planted"]}]"#
            .write(toFile: storage.path + "/overlay-containers/containers.json", atomically: true, encoding: .utf8)
        let paths = OwnerPaths(namedNamespaces: [named.path, "/run/netns"], podmanStorage: storage.path,
                               dockerRoot: storage.path + "/no-docker", proc: "/proc")
        // The look on a thread of its own with a deadline: one that blocked in open() would
        // otherwise hold the test run. A writer's open lets a blocked reader go at the end.
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var found: [Int32: OwnerLookup] = [:]
        nonisolated(unsafe) var failure: Error?
        Thread {
            do {
                found = try host.inside { () throws -> [Int32: OwnerLookup] in
                    let nsid = try #require(try link(named: "h-blue", in: NetlinkSocket().dumpLinks()).peerNamespaceID)
                    return try OwnerDirectory(paths: paths).lookUp([nsid], hostNames: [nsid: "h-blue"])
                }
            } catch {
                failure = error
            }
            done.signal()
        }.start()
        let finished = done.wait(timeout: .now() + 60) == .success
        if !finished { close(open(fifo, O_WRONLY | O_NONBLOCK)) }
        try #require(finished, "the look was still waiting on the FIFO after 60 s")
        if let failure { throw failure }
        #expect(found.values.contains { if case .found(let owner) = $0 { owner.name == blue.name } else { false } }, "\(found)")
    }

    @Test("a process in a cgroup named after another's container, where its runtime would put it, holding its own namespace: named as a process, never as that container")
    func cgroupSpoofing() throws {
        let host = try NetworkNamespace()
        let victim = try NetworkNamespace()
        let dockerVictim = try NetworkNamespace()
        var attackers: [Process] = []
        defer { for attacker in attackers { attacker.end(SIGKILL) } }
        for _ in 0..<2 {
            let attacker = Process()
            attacker.executableURL = URL(fileURLWithPath: try Command.resolve("unshare"))
            attacker.arguments = ["--net", "sleep", "120"]
            try attacker.run()
            attackers.append(attacker)
            _ = try waitForOwnNamespace(of: attacker.processIdentifier)
        }
        try host.ip("link", "add", "h-victim", "type", "veth", "peer", "name", "eth0", "netns", victim.name)
        try host.ip("link", "add", "h-dvictim", "type", "veth", "peer", "name", "eth0", "netns", dockerVictim.name)
        try host.ip("link", "add", "h-evil", "type", "veth", "peer", "name", "eth0", "netns", String(attackers[0].processIdentifier))
        try host.ip("link", "add", "h-devil", "type", "veth", "peer", "name", "eth0", "netns", String(attackers[1].processIdentifier))

        // The runtimes' state: Podman's container "victim" and Docker's "dvictim", each in its
        // own namespace.
        let storage = try TemporaryDirectory()
        let podmanID = String(repeating: "a", count: 64), dockerID = String(repeating: "d", count: 64)
        try FileManager.default.createDirectory(atPath: storage.path + "/overlay-containers/\(podmanID)/userdata", withIntermediateDirectories: true)
        try #"{"linux":{"namespaces":[{"type":"network","path":"/run/netns/\#(victim.name)"}]}}"#
            .write(toFile: storage.path + "/overlay-containers/\(podmanID)/userdata/config.json", atomically: true, encoding: .utf8)
        try #"[{"id":"\#(podmanID)","names":["victim"]}]"#
            .write(toFile: storage.path + "/overlay-containers/containers.json", atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: storage.path + "/docker/containers/\(dockerID)", withIntermediateDirectories: true)
        try #"{"ID":"\#(dockerID)","Name":"/dvictim","NetworkSettings":{"SandboxKey":"/run/netns/\#(dockerVictim.name)"}}"#
            .write(toFile: storage.path + "/docker/containers/\(dockerID)/config.v2.json", atomically: true, encoding: .utf8)
        // The attackers' processes as /proc shows them, each in a cgroup it could name itself
        // (`systemd-run --user --slice=user --scope --unit libpod-ID`; root in a host's own
        // docker-ID.scope under system.slice): their namespaces are the real ones.
        let proc = try TemporaryDirectory()
        let cgroups = ["0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-\(podmanID).scope\n",
                       "0::/system.slice/docker-\(dockerID).scope\n"]
        for (attacker, cgroup) in zip(attackers, cgroups) {
            let directory = proc.path + "/\(attacker.processIdentifier)"
            try FileManager.default.createDirectory(atPath: directory + "/ns", withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: directory + "/ns/net", withDestinationPath: "/proc/\(attacker.processIdentifier)/ns/net")
            try cgroup.write(toFile: directory + "/cgroup", atomically: true, encoding: .utf8)
            try "sleep\n".write(toFile: directory + "/comm", atomically: true, encoding: .utf8)
        }
        let paths = OwnerPaths(namedNamespaces: [], podmanStorage: storage.path, dockerRoot: storage.path + "/docker", proc: proc.path)
        let (links, found) = try host.inside { () throws -> ([Link], [Int32: OwnerLookup]) in
            let links = try NetlinkSocket().dumpLinks()
            var names: [Int32: String] = [:]
            for link in links { if let nsid = link.peerNamespaceID { names[nsid] = link.name } }
            return (links, try OwnerDirectory(paths: paths).lookUp(Set(names.keys), hostNames: names))
        }
        func lookup(_ name: String) throws -> OwnerLookup? {
            found[try #require(try link(named: name, in: links).peerNamespaceID)]
        }
        #expect(try lookup("h-victim") == .found(FoundOwner(.podman, name: "victim", id: podmanID)))
        #expect(try lookup("h-dvictim") == .found(FoundOwner(.docker, name: "dvictim", id: dockerID)))
        for name in ["h-evil", "h-devil"] {
            guard case .found(let owner)? = try lookup(name) else { Issue.record("\(name): \(String(describing: try lookup(name)))"); continue }
            #expect(owner.kind == .process && !owner.kind.isRuntime, "\(name) is \(owner)")
            #expect(owner.name != "victim" && owner.name != "dvictim", "\(name) is \(owner)")
        }
    }

    @Test("containers sharing one namespace (a pod, --network container:X): the first created names it, whatever the order of the files")
    func sharedNamespace() throws {
        let host = try NetworkNamespace()
        let pod = try NetworkNamespace()
        try host.ip("link", "add", "h-pod", "type", "veth", "peer", "name", "eth0", "netns", pod.name)
        let storage = try TemporaryDirectory()
        // Eight containers in the pod's namespace, listed in containers.json as created: the
        // ids' order (and so any dictionary's) is another one.
        let ids = (0..<8).map { String(repeating: String("89abcdef".reversed().map(String.init)[$0]), count: 64) }
        for id in ids {
            try FileManager.default.createDirectory(atPath: storage.path + "/overlay-containers/\(id)/userdata", withIntermediateDirectories: true)
            try #"{"linux":{"namespaces":[{"type":"network","path":"/run/netns/\#(pod.name)"}]}}"#
                .write(toFile: storage.path + "/overlay-containers/\(id)/userdata/config.json", atomically: true, encoding: .utf8)
        }
        let listed = ids.enumerated().map { #"{"id":"\#($0.element)","names":["member\#($0.offset)"]}"# }
        try ("[" + listed.joined(separator: ",") + "]")
            .write(toFile: storage.path + "/overlay-containers/containers.json", atomically: true, encoding: .utf8)
        let paths = OwnerPaths(namedNamespaces: [], podmanStorage: storage.path, dockerRoot: storage.path + "/no-docker", proc: "/proc")
        let found = try host.inside { () throws -> OwnerLookup? in
            let nsid = try #require(try link(named: "h-pod", in: NetlinkSocket().dumpLinks()).peerNamespaceID)
            return try OwnerDirectory(paths: paths).lookUp([nsid], hostNames: [nsid: "h-pod"])[nsid]
        }
        #expect(found == .found(FoundOwner(.podman, name: "member0", id: ids[0])))
    }

    @Test("an LXC container by its cgroup, lxc.payload.NAME, where /proc shows nothing (the unit's ProtectProc=invisible); one a user made is nobody's container")
    func lxcByCgroup() throws {
        let host = try NetworkNamespace()
        var holders: [Process] = []
        defer { for holder in holders { holder.end(SIGKILL) } }
        for _ in 0..<2 {
            let holder = Process()
            holder.executableURL = URL(fileURLWithPath: try Command.resolve("unshare"))
            holder.arguments = ["--net", "sleep", "120"]
            try holder.run()
            holders.append(holder)
            _ = try waitForOwnNamespace(of: holder.processIdentifier)
        }
        try host.ip("link", "add", "h-web", "type", "veth", "peer", "name", "eth0", "netns", String(holders[0].processIdentifier))
        try host.ip("link", "add", "h-fake", "type", "veth", "peer", "name", "eth0", "netns", String(holders[1].processIdentifier))
        // The tree as LXC leaves it: the payload's processes in a leaf below it (cgroup v2).
        let cgroups = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: cgroups.path + "/lxc.payload.web/init.scope", withIntermediateDirectories: true)
        try "".write(toFile: cgroups.path + "/lxc.payload.web/cgroup.procs", atomically: true, encoding: .utf8)
        try "\(holders[0].processIdentifier)\n".write(toFile: cgroups.path + "/lxc.payload.web/init.scope/cgroup.procs", atomically: true, encoding: .utf8)
        // A user's own: not root's, so not LXC's.
        try FileManager.default.createDirectory(atPath: cgroups.path + "/lxc.payload.fake", withIntermediateDirectories: true)
        try "\(holders[1].processIdentifier)\n".write(toFile: cgroups.path + "/lxc.payload.fake/cgroup.procs", atomically: true, encoding: .utf8)
        try Command.check(["chown", "-R", "65534:65534", cgroups.path + "/lxc.payload.fake"])
        let nothing = try TemporaryDirectory()
        let paths = OwnerPaths(namedNamespaces: [], podmanStorage: nothing.path, dockerRoot: nothing.path, proc: nothing.path, cgroups: cgroups.path)
        let (links, found) = try host.inside { () throws -> ([Link], [Int32: OwnerLookup]) in
            let links = try NetlinkSocket().dumpLinks()
            var names: [Int32: String] = [:]
            for link in links { if let nsid = link.peerNamespaceID { names[nsid] = link.name } }
            return (links, try OwnerDirectory(paths: paths).lookUp(Set(names.keys), hostNames: names))
        }
        #expect(found[try #require(try link(named: "h-web", in: links).peerNamespaceID)] == .found(FoundOwner(.lxc, name: "web", id: "web")))
        #expect(found[try #require(try link(named: "h-fake", in: links).peerNamespaceID)] == .unknown)
    }

    @Test("a tap is the VM's whose live status names it with its NIC's MAC; a stale file's name reused, a user's file and no libvirt at all are not")
    func libvirtTaps() throws {
        func status(_ name: String, _ uuidTail: String, nics: [(tap: String, mac: String)]) -> String {
            let interfaces = nics.map { "<interface type='bridge'><mac address='\($0.mac)'/><target dev='\($0.tap)'/></interface>" }
            return "<domstatus state='running'><domain type='qemu'><name>\(name)</name>"
                + "<uuid>ae25cd81-9c70-4c91-9c74-\(uuidTail)</uuid><devices>\(interfaces.joined())</devices></domain></domstatus>"
        }
        let state = try TemporaryDirectory()
        try status("web", "481c24be67a4", nics: [("vnet0", "52:54:00:50:6b:de"), ("vnet5", "52:54:00:50:6b:df")])
            .write(toFile: state.path + "/web.xml", atomically: true, encoding: .utf8)
        try status("old", "000000000001", nics: [("vnet1", "52:54:00:11:11:11")])
            .write(toFile: state.path + "/old.xml", atomically: true, encoding: .utf8)
        try status("fake", "000000000002", nics: [("vnet2", "52:54:00:22:22:22")])
            .write(toFile: state.path + "/fake.xml", atomically: true, encoding: .utf8)
        try Command.check(["chown", "65534:65534", state.path + "/fake.xml"])
        let nothing = try TemporaryDirectory()
        let taps: [Int32: TapSight] = [
            10: TapSight(name: "vnet0", address: "fe:54:00:50:6b:de"),
            11: TapSight(name: "vnet5", address: "fe:54:00:50:6b:df"),
            12: TapSight(name: "vnet1", address: "fe:54:00:99:99:99"),
            13: TapSight(name: "vnet2", address: "fe:54:00:22:22:22"),
        ]
        let directory = try OwnerDirectory(paths: OwnerPaths(namedNamespaces: [], podmanStorage: nothing.path, dockerRoot: nothing.path,
                                                             proc: nothing.path, cgroups: nothing.path, libvirtQemu: state.path))
        let found = directory.lookUp(taps: taps)
        let uuid = "ae25cd81-9c70-4c91-9c74-481c24be67a4"
        #expect(found[10] == .found(FoundOwner(.libvirt, name: "web", id: uuid, nic: 1)))
        #expect(found[11] == .found(FoundOwner(.libvirt, name: "web", id: uuid, nic: 2)))
        #expect(found[12] == .starting(fallback: nil), "vnet1 is another VM's now, not yet in a file")
        #expect(found[13] == .starting(fallback: nil), "a file root did not write names nobody")
        // The file rewritten (a restart): read again.
        try status("web2", "481c24be67a4", nics: [("vnet0", "52:54:00:50:6b:de")])
            .write(toFile: state.path + "/web.xml", atomically: true, encoding: .utf8)
        #expect(directory.lookUp(taps: taps)[10] == .found(FoundOwner(.libvirt, name: "web2", id: uuid, nic: 1)))
        let noLibvirt = try OwnerDirectory(paths: OwnerPaths(namedNamespaces: [], podmanStorage: nothing.path, dockerRoot: nothing.path,
                                                             proc: nothing.path, cgroups: nothing.path, libvirtQemu: nothing.path + "/none"))
        #expect(noLibvirt.lookUp(taps: taps) == [10: .unknown, 11: .unknown, 12: .unknown, 13: .unknown])
    }

    private func link(named name: String, in links: [Link]) throws -> Link {
        try #require(links.first { $0.name == name }, "no link \(name)")
    }

    /// The inode of the process's network namespace once `unshare` has entered its own.
    private func waitForOwnNamespace(of pid: Int32) throws -> UInt64 {
        var own = stat()
        _ = stat("/proc/self/ns/net", &own)
        for _ in 0..<10_000 {
            var status = stat()
            if stat("/proc/\(pid)/ns/net", &status) == 0, status.st_ino != own.st_ino,
               (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.hasPrefix("sleep") == true {
                return UInt64(status.st_ino)
            }
            sched_yield()
        }
        throw CommandFailed(command: ["unshare", "--net", "sleep"], result: CommandResult(status: -1, stdout: "", stderr: "never entered its own namespace"))
    }
}
