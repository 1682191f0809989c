import Foundation
import IfMeterTestSupport
import Testing

/// The harness for Kubernetes pods through containerd's CRI (ContainerdCRI), checked against the
/// kernel and the files a pod leaves on the host, without ifmeterd: what the owner scenarios on
/// pods rest on. Each test ends with ``destroyed(_:)``: nothing of the harness's may be left.
@Suite("Kubernetes pods through containerd's CRI: the harness", .enabled(if: ContainerdCRI.available, ContainerdCRI.skipReason),
       .serialized, .ownThread, .timeLimit(.minutes(10)))
struct CRIHarnessTests {
    @Test("Two pods in two namespaces: their own addresses, namespaces and host veths; their identity in the CNI results and the bundles; traffic counted alike on both ends")
    func twoPods() throws {
        let node = try NetworkNamespace()
        defer { node.delete() }
        let cri = try ContainerdCRI(in: node)
        var leftovers = Leftovers()
        defer { Self.destroyed(cri, leftovers) }
        cri.place("b", in: "team-b")
        try cri.run("a")
        try cri.run("b")
        #expect(cri.subject("a") == "pod:ifmt-team-a/\(ContainerdCRI.name("a"))" && cri.subject("b") == "pod:ifmt-team-b/\(ContainerdCRI.name("b"))")

        var seen: [String: (status: ContainerdCRI.SandboxStatus, veth: String)] = [:]
        for label in ["a", "b"] {
            let pod = try #require(cri.pod(label))
            let status = try cri.status(try cri.sandbox(of: label))
            let veth = try cri.hostSide(of: label)
            leftovers.note(status, veth: veth)
            seen[label] = (status, veth)
            #expect(status.ready && status.name == ContainerdCRI.name(label) && status.namespace == cri.podNamespace(of: label)
                    && status.uid == pod.uid && status.attempt == 0, "\(status)")
            #expect(status.ip.hasPrefix(cri.subnet + "."), "\(status.ip) not on \(cri.subnet).0/24")
            let netns = try #require(status.netns)
            #expect(netns.hasPrefix("/var/run/netns/cni-") && FileManager.default.fileExists(atPath: netns), "\(netns)")
            #expect(veth.hasPrefix("veth") && (try? node.ip("link", "show", "dev", veth)) != nil, "\(veth) in the node's namespace")
            // The pod's sysctls took: IPv6 is off on its eth0.
            let ipv6 = try Command.check(["nsenter", "--net=\(netns)", "cat", "/proc/sys/net/ipv6/conf/eth0/disable_ipv6"])
            #expect(ipv6.trimmingCharacters(in: .whitespacesAndNewlines) == "1", "disable_ipv6: \(ipv6)")

            // libcni's results file: the pod's identity in cniArgs, its host veth (the entry
            // without a sandbox) and its eth0 in its namespace.
            let result = try Self.json(cri.cniResult(of: status.id))
            let arguments = Dictionary(((result["cniArgs"] as? [[String]]) ?? []).compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }) { first, _ in first }
            #expect(arguments["K8S_POD_NAME"] == status.name && arguments["K8S_POD_NAMESPACE"] == status.namespace
                    && arguments["K8S_POD_UID"] == pod.uid && arguments["K8S_POD_INFRA_CONTAINER_ID"] == status.id, "\(arguments)")
            let interfaces = ((result["result"] as? [String: Any])?["interfaces"] as? [[String: Any]]) ?? []
            #expect(interfaces.contains { $0["name"] as? String == veth && $0["sandbox"] == nil }, "\(interfaces)")
            #expect(interfaces.contains { $0["name"] as? String == "eth0" && $0["sandbox"] as? String == netns }, "\(interfaces)")

            // containerd's bundle: the same identity in its annotations, the same namespace.
            let spec = try Self.json(cri.bundle(of: status.id) + "/config.json")
            let annotations = spec["annotations"] as? [String: String] ?? [:]
            #expect(annotations["io.kubernetes.cri.container-type"] == "sandbox" && annotations["io.kubernetes.cri.sandbox-id"] == status.id
                    && annotations["io.kubernetes.cri.sandbox-name"] == status.name
                    && annotations["io.kubernetes.cri.sandbox-namespace"] == status.namespace
                    && annotations["io.kubernetes.cri.sandbox-uid"] == pod.uid, "\(annotations)")
            let namespaces = (spec["linux"] as? [String: Any])?["namespaces"] as? [[String: Any]] ?? []
            #expect(namespaces.contains { $0["type"] as? String == "network" && $0["path"] as? String == netns }, "\(namespaces)")
        }
        let a = try #require(seen["a"]), b = try #require(seen["b"])
        #expect(a.status.ip != b.status.ip && a.status.netns != b.status.netns && a.veth != b.veth && a.status.uid != b.status.uid)

        // 20 pings of 1000 bytes: 20 frames of 1042 bytes each way, at least. Both ends frozen,
        // the pod's eth0 and its host veth agree exactly, turned round.
        let before = try cri.counters(of: "a")
        let vethBefore = (rx: try node.sysfsCounter(a.veth, "rx_bytes"), tx: try node.sysfsCounter(a.veth, "tx_bytes"))
        try cri.send("a", bytes: 20_000)
        try cri.freeze("a")
        let after = try cri.counters(of: "a")
        let vethAfter = (rx: try node.sysfsCounter(a.veth, "rx_bytes"), tx: try node.sysfsCounter(a.veth, "tx_bytes"))
        #expect(after.tx - before.tx >= 20 * 1042 && after.rx - before.rx >= 20 * 1042, "\(before) → \(after)")
        #expect(after.rx == vethAfter.tx && after.tx == vethAfter.rx, "eth0 \(after) vs host veth \(vethAfter)")
        #expect(after.rx - before.rx == vethAfter.tx - vethBefore.tx && after.tx - before.tx == vethAfter.rx - vethBefore.rx,
                "eth0 moved \(after.rx - before.rx)/\(after.tx - before.tx), host veth \(vethAfter.tx - vethBefore.tx)/\(vethAfter.rx - vethBefore.rx)")
        // Frozen means frozen: a ping tried now gets no answer, and nothing moves.
        let tried = try Command.run(["nsenter", "--net=\(try cri.netns(of: "a"))", "/bin/busybox", "ping", "-c", "2", "-W", "1", cri.gateway])
        #expect(tried.status != 0, "a frozen pod was answered: \(tried.stdout)")
        let still = try cri.counters(of: "a")
        #expect(still.rx == after.rx && still.tx == after.tx, "\(after) → \(still)")
    }

    @Test("A sandbox stopped and run again: a new sandbox, namespace and veth for the same UID; a pod removed and run again: a new UID")
    func stopRunRemoveRun() throws {
        let node = try NetworkNamespace()
        defer { node.delete() }
        let cri = try ContainerdCRI(in: node)
        var leftovers = Leftovers()
        defer { Self.destroyed(cri, leftovers) }
        try cri.run("a")
        let first = try cri.status(try cri.sandbox(of: "a"))
        let firstVeth = try cri.hostSide(of: "a")
        leftovers.note(first, veth: firstVeth)

        try cri.restart("a")
        let second = try cri.status(try cri.sandbox(of: "a"))
        let secondVeth = try cri.hostSide(of: "a")
        leftovers.note(second, veth: secondVeth)
        #expect(second.id != first.id && second.netns != first.netns && secondVeth != firstVeth, "\(first) then \(second)")
        #expect(second.uid == first.uid && second.name == first.name && second.namespace == first.namespace
                && second.attempt == 1 && second.ready, "\(second)")
        // The stopped sandbox stays listed, NOTREADY, with nothing of its network left.
        let listed = try cri.list()
        #expect(listed.first { $0.id == first.id }?.state == "SANDBOX_NOTREADY", "\(listed)")
        #expect(!FileManager.default.fileExists(atPath: first.netns ?? "/"), "\(first.netns ?? "") still there")
        #expect((try? node.ip("link", "show", "dev", firstVeth)) == nil, "\(firstVeth) still in the node's namespace")
        #expect(!FileManager.default.fileExists(atPath: cri.cniResult(of: first.id)) && FileManager.default.fileExists(atPath: cri.cniResult(of: second.id)))
        #expect(!FileManager.default.fileExists(atPath: cri.bundle(of: first.id)) && FileManager.default.fileExists(atPath: cri.bundle(of: second.id)))
        try cri.send("a", bytes: 2_000)

        try cri.remove("a")
        #expect(try cri.list().filter { $0.name == first.name }.isEmpty, "the removed pod's sandboxes are gone")
        #expect(!FileManager.default.fileExists(atPath: second.netns ?? "/") && (try? node.ip("link", "show", "dev", secondVeth)) == nil)
        try cri.run("a")
        let third = try cri.status(try cri.sandbox(of: "a"))
        leftovers.note(third, veth: try cri.hostSide(of: "a"))
        #expect(third.uid != first.uid && third.name == first.name && third.namespace == first.namespace && third.attempt == 0, "\(third)")
        #expect(cri.subject("a") == "pod:ifmt-team-a/\(first.name)")
        try cri.send("a", bytes: 2_000)
    }

    @Test("A pod named with markup that forges another pod's identity in its annotations: containerd's bundle and libcni's cniArgs name it as it is; the forgery reaches only the annotations, again in its next sandbox")
    func hostileSpec() throws {
        let node = try NetworkNamespace()
        defer { node.delete() }
        let cri = try ContainerdCRI(in: node)
        var leftovers = Leftovers()
        defer { Self.destroyed(cri, leftovers) }
        try cri.run("victim")
        let victim = try cri.status(try cri.sandbox(of: "victim"))
        leftovers.note(victim, veth: try cri.hostSide(of: "victim"))
        let label = "<b>x</b>&\"'"
        let forged = ["io.kubernetes.cri.sandbox-name": victim.name, "io.kubernetes.cri.sandbox-namespace": victim.namespace,
                      "io.kubernetes.cri.sandbox-uid": victim.uid, "io.kubernetes.cri.sandbox-id": victim.id,
                      "io.kubernetes.pod.name": victim.name]
        try cri.runPod(label, annotations: forged, labels: ["io.kubernetes.pod.name": victim.name])
        for attempt in 0...1 {
            if attempt == 1 { try cri.restart(label) }
            let status = try cri.status(try cri.sandbox(of: label))
            leftovers.note(status, veth: try cri.hostSide(of: label))
            #expect(status.name == ContainerdCRI.name(label) && status.ready && status.attempt == attempt, "\(status)")
            #expect(cri.subject(label) == "pod:ifmt-team-a/ifmt-\(getpid())-<b>x</b>&\"'")
            // The CRI hands the spec's annotations back as sent: the forgery included.
            #expect(forged.allSatisfy { status.annotations[$0.key] == $0.value }, "\(status.annotations)")
            // containerd's own annotations in the bundle are the pod's.
            let annotations = try Self.json(cri.bundle(of: status.id) + "/config.json")["annotations"] as? [String: String] ?? [:]
            #expect(annotations["io.kubernetes.cri.sandbox-name"] == status.name && annotations["io.kubernetes.cri.sandbox-uid"] == status.uid
                    && annotations["io.kubernetes.cri.sandbox-id"] == status.id, "\(annotations)")
            // libcni's cniArgs are the pod's; the spec's annotations ride along in capabilityArgs.
            let result = try Self.json(cri.cniResult(of: status.id))
            let arguments = result["cniArgs"] as? [[String]] ?? []
            #expect(arguments.contains(["K8S_POD_NAME", status.name]) && arguments.contains(["K8S_POD_UID", status.uid]), "\(arguments)")
            let carried = (result["capabilityArgs"] as? [String: Any])?["io.kubernetes.cri.pod-annotations"] as? [String: String] ?? [:]
            #expect(carried["io.kubernetes.cri.sandbox-name"] == victim.name, "\(carried)")
        }
        try cri.send(label, bytes: 1_000)
    }

    // MARK: Nothing left

    /// What a test's pods had, to look for once the harness is destroyed.
    struct Leftovers {
        var sandboxes: [String] = []
        var netns: [String] = []
        var veths: [String] = []
        mutating func note(_ status: ContainerdCRI.SandboxStatus, veth: String) {
            sandboxes.append(status.id)
            if let path = status.netns { netns.append(path) }
            veths.append(veth)
        }
    }

    /// Destroys the harness, then checks that nothing of it is left: no process naming its
    /// containerd home (containerd, shims), no cgroup (pause), no pod namespace, no veth in the
    /// node's namespace, no results file, no bundle.
    static func destroyed(_ cri: ContainerdCRI, _ leftovers: Leftovers) {
        cri.destroy()
        let processes = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { entry -> String? in
            guard Int32(entry) != nil, let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
            let line = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }.joined(separator: " ")
            return line.contains(cri.home + "/") ? "\(entry) \(line)" : nil
        }
        #expect(processes.isEmpty, "still running: \(processes)")
        let groups = ((try? FileManager.default.contentsOfDirectory(atPath: "/sys/fs/cgroup")) ?? [])
            .map { "/sys/fs/cgroup/\($0)/\(cri.cgroupRoot)" }.filter { FileManager.default.fileExists(atPath: $0) }
        #expect(groups.isEmpty, "cgroups left: \(groups)")
        let namespaces = (try? Command.check(["ip", "netns", "list"])) ?? ""
        for path in leftovers.netns {
            let name = (path as NSString).lastPathComponent
            #expect(!FileManager.default.fileExists(atPath: path) && !namespaces.contains(name), "\(name) left")
        }
        #expect(((try? cri.namespace.ip("-br", "link", "show", "type", "veth")) ?? "?").isEmpty, "veths left in the node's namespace")
        let results = ((try? FileManager.default.contentsOfDirectory(atPath: ContainerdCRI.cniCachePath)) ?? [])
            .filter { name in name.hasPrefix(cri.network + "-") || leftovers.sandboxes.contains { name.contains($0) } }
        #expect(results.isEmpty, "results files left: \(results)")
        let bundles = leftovers.sandboxes.map { cri.bundle(of: $0) }.filter { FileManager.default.fileExists(atPath: $0) }
        #expect(bundles.isEmpty, "bundles left: \(bundles)")
        #expect(!leftovers.sandboxes.isEmpty, "the test made pods")
    }

    static func json(_ path: String) throws -> [String: Any] {
        let data = try #require(FileManager.default.contents(atPath: path), "no \(path)")
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(path) is not an object")
    }
}
